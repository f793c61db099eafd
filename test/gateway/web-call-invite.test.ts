import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { Client } from 'rtpengine-client';
import { systemClock } from '../../core/clock.js';
import { StoreWebCallAuthority } from '../../control-api/features/gateway-adapters/web-call-authority.js';
import { callTokenKey, issueCallToken, type CallTokenClaims } from '../../control-api/platform/crypto/call-token.js';
import type { SipResponse } from '../../gateway/sip/message/message.js';
import { loadOrCreateTlsCredentials } from '../../gateway/sip/transport/certificate.js';
import type { RtpengineBridge } from '../../media/webrtc/rtpengine-bridge.js';
import { RtpengineProcess } from '../../media/webrtc/rtpengine-process.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { NodeUac } from './node-uac.js';

const key = callTokenKey(Buffer.alloc(32, 9));

/** What a browser offers (JSEP): ICE credentials and a host candidate, DTLS fingerprint, rtcp-mux, Opus first. */
function browserOffer(port: number): string {
  const fingerprint = createHash('sha256').update(randomBytes(16)).digest('hex').toUpperCase().match(/../g)?.join(':');
  return [
    'v=0', 'o=- 4611731400430051336 2 IN IP4 127.0.0.1', 's=-', 't=0 0', 'a=group:BUNDLE 0',
    `m=audio ${port} UDP/TLS/RTP/SAVPF 111 0 8 126`, 'c=IN IP4 127.0.0.1', 'a=rtcp:9 IN IP4 0.0.0.0',
    `a=candidate:1 1 udp 2122260223 127.0.0.1 ${port} typ host generation 0`,
    `a=ice-ufrag:${randomBytes(3).toString('hex')}`, `a=ice-pwd:${randomBytes(12).toString('hex')}`,
    `a=fingerprint:sha-256 ${fingerprint}`, 'a=setup:actpass', 'a=mid:0', 'a=sendrecv', 'a=rtcp-mux',
    'a=rtpmap:111 opus/48000/2', 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:8 PCMA/8000', 'a=rtpmap:126 telephone-event/8000', '',
  ].join('\r\n');
}

/**
 * The gateway's web chain with its real parts: the store-backed authority verifying call tokens,
 * rtpengine (Debian's daemon, started as the gateway role starts it) relaying WebRTC to the
 * platform's RTP, and a Node SIP client over WSS standing in for sip.js (the browser itself is
 * test/web/web-call.test.ts).
 */
describe('gateway: web calls (call token, WSS, rtpengine)', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;
  let dataDir: string;
  let cert: Buffer;
  let rtpengine: { process: RtpengineProcess; bridge: RtpengineBridge };
  let recipeId: string;
  let otherRecipeId: string;
  let numberId: string;
  const logger = pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' });

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-web-'));
    const creds = await loadOrCreateTlsCredentials({ dataDir });
    cert = creds.cert;
    rtpengine = await RtpengineProcess.start({ binary: 'rtpengine', interface: '127.0.0.1', portMin: 33_000, portMax: 33_199, logger });
    fx = await startGatewayFixture(
      { transports: { host: '127.0.0.1', port: 0, tcpPort: 0, tlsPort: 0, wsPort: 0, wssPort: 0, tls: { cert: creds.cert, key: creds.key } } },
      (store) => ({ web: { authority: new StoreWebCallAuthority({ db: store.db, key, clock: systemClock }), bridge: rtpengine.bridge } }),
    );
    const recipes = await fx.store.db.selectFrom('recipes').select(['id', 'tenant_id']).execute();
    recipeId = recipes.find((r) => r.tenant_id === fx.ids.tenantId)?.id as string;
    otherRecipeId = recipes.find((r) => r.tenant_id === fx.ids.otherTenantId)?.id as string;
    numberId = (await fx.store.db.selectFrom('phone_numbers').select('id').where('e164', '=', numbers.trunkDid).executeTakeFirstOrThrow()).id;
  });
  after(async () => {
    await fx?.close();
    rtpengine?.bridge.close();
    await rtpengine?.process.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const token = (target: CallTokenClaims['target'], tenantId = fx.ids.tenantId, ttlMs = 60_000): string =>
    issueCallToken(key, { tenantId, target, expiresAt: Date.now() + ttlMs }).token;

  async function invite(uac: NodeUac, user: string, headers: string[]): Promise<number> {
    uac.request('INVITE', `sip:${user}@127.0.0.1`, 1, { body: browserOffer(50_000 + Math.floor(Math.random() * 1000)), headers });
    const final = await uac.next((m) => !m.isRequest && m.cseq.method === 'INVITE' && (m as SipResponse).status >= 200);
    return (final as SipResponse).status;
  }

  it('answers a browser\'s INVITE to a recipe over WSS with WebRTC SDP, records it as a web call, and frees the relay at BYE', async () => {
    const uac = await NodeUac.ws(fx.gateway.ports.WSS as number, cert);
    try {
      const before = fx.handler.calls.length;
      const uri = `sip:recipe-${recipeId}@127.0.0.1`;
      uac.request('INVITE', uri, 1, { body: browserOffer(51_000), headers: [`X-Call-Token: ${token({ kind: 'recipe', recipeId })}`] });
      const ok = await uac.response('INVITE', 200);
      const sdp = ok.body.toString();
      // What the browser gets: ICE, DTLS-SRTP and rtcp-mux from rtpengine, G.711 from our media.
      assert.match(sdp, /m=audio \d+ UDP\/TLS\/RTP\/SAVPF 0/);
      assert.match(sdp, /a=fingerprint:sha-256 /);
      assert.match(sdp, /a=ice-ufrag:/);
      assert.match(sdp, /a=candidate:\S+ 1 UDP \d+ 127\.0\.0\.1 \d+ typ host/);
      assert.match(sdp, /a=rtcp-mux/);
      assert.doesNotMatch(sdp, /opus/);
      const to = ok.headers.get('to') ?? '';
      uac.request('ACK', uri, 1, { to });
      const seen = fx.handler.calls[before];
      assert.equal(seen?.call.info.channel, 'web');
      assert.equal(seen?.call.info.recipeId, recipeId);
      assert.equal(seen?.call.info.numberId, null);
      assert.equal(seen?.call.info.tenantId, fx.ids.tenantId);
      assert.equal(seen?.call.info.transport, 'WSS');
      uac.request('BYE', uri, 2, { to });
      await uac.response('BYE', 200);
      // rtpengine no longer knows the call once it has ended.
      const ng = new Client({ localAddress: '127.0.0.1', timeout: 2000 });
      ng.on('error', () => undefined);
      try {
        const deadline = Date.now() + 5000;
        let result = 'ok';
        while (result === 'ok' && Date.now() < deadline) {
          result = (await ng.query(rtpengine.process.ng, { 'call-id': uac.callId })).result;
          if (result === 'ok') await new Promise((r) => setTimeout(r, 50));
        }
        assert.equal(result, 'error');
      } finally {
        ng.close();
      }
    } finally {
      uac.close();
    }
  });

  it('takes a number as the target: its recipe and settings, its id on the call', async () => {
    const uac = await NodeUac.ws(fx.gateway.ports.WS as number);
    try {
      const before = fx.handler.calls.length;
      assert.equal(await invite(uac, numbers.trunkDid, [`X-Call-Token: ${token({ kind: 'number', numberId })}`]), 200);
      assert.equal(fx.handler.calls[before]?.call.info.numberId, numberId);
      assert.equal(fx.handler.calls[before]?.call.info.dialled, numbers.trunkDid);
    } finally {
      uac.close();
    }
  });

  it('refuses 403 a token used twice, expired, forged, of another tenant, for another target, or over TLS', async () => {
    const once = token({ kind: 'recipe', recipeId });
    const uac = await NodeUac.ws(fx.gateway.ports.WSS as number, cert);
    try {
      assert.equal(await invite(uac, `recipe-${recipeId}`, [`X-Call-Token: ${once}`]), 200);
    } finally {
      uac.close();
    }
    const cases: Array<[string, string, string]> = [
      ['reused', `recipe-${recipeId}`, once],
      ['expired', `recipe-${recipeId}`, token({ kind: 'recipe', recipeId }, fx.ids.tenantId, -1000)],
      ['forged', `recipe-${recipeId}`, issueCallToken(callTokenKey(Buffer.alloc(32, 1)), { tenantId: fx.ids.tenantId, target: { kind: 'recipe', recipeId }, expiresAt: Date.now() + 60_000 }).token],
      ['another tenant\'s recipe', `recipe-${otherRecipeId}`, token({ kind: 'recipe', recipeId })],
      ['cross-tenant claims', `recipe-${otherRecipeId}`, token({ kind: 'recipe', recipeId: otherRecipeId }, fx.ids.tenantId)],
      ['another number', numbers.disabled, token({ kind: 'number', numberId })],
      ['garbage', `recipe-${recipeId}`, 'wct1.bm90.aGVsbG8'],
    ];
    for (const [what, user, t] of cases) {
      const ws = await NodeUac.ws(fx.gateway.ports.WS as number);
      try {
        assert.equal(await invite(ws, user, [`X-Call-Token: ${t}`]), what === 'cross-tenant claims' ? 404 : 403, what);
      } finally {
        ws.close();
      }
    }
    const tls = await NodeUac.tls(fx.gateway.ports.TLS as number, cert);
    try {
      assert.equal(await invite(tls, `recipe-${recipeId}`, [`X-Call-Token: ${token({ kind: 'recipe', recipeId })}`]), 403);
    } finally {
      tls.close();
    }
  });

  it('an anonymous WebSocket client cannot run a recipe: without a token the INVITE meets the trunk checks', async () => {
    const uac = await NodeUac.ws(fx.gateway.ports.WS as number);
    try {
      const before = fx.handler.calls.length;
      assert.equal(await invite(uac, `recipe-${recipeId}`, []), 404);
      assert.equal(fx.handler.calls.length, before);
    } finally {
      uac.close();
    }
  });
});
