/**
 * Run by srtp-trunk.test.ts in a child process whose NODE_EXTRA_CA_CERTS trusts the desk's
 * baresip certificate (Node reads it only at start): a caller comes in over TLS with SDES-SRTP on a
 * trunk with `srtp: required`, and the call is bridged (the Transfer block's B2BUA) to an E.164
 * number through the same trunk, which baresip answers over TLS with `srtp-mand`. Prints one
 * `SRTP-TRANSFER-RESULT <json>` line.
 *
 * The caller is not baresip: baresip lists REFER in its Allow, so the transfer would REFER it
 * instead of bridging. It is a phone made of parts: SIP over TLS from NodeUac (no Allow header), a
 * media session of its own for its plain audio, and a session of its own in the same rtpengine that
 * turns that audio into SDES-SRTP, as a carrier's SBC would.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import type { ActiveCall, CallHandler } from '../../core/ports/call-handler.js';
import type { CallTransferOutcome } from '../../core/ports/call-transfer.js';
import type { SrtpRelay } from '../../core/ports/srtp-relay.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { loadOrCreateTlsCredentials } from '../../gateway/sip/transport/certificate.js';
import { GatewayCallTransfer } from '../../gateway/transfer/gateway-call-transfer.js';
import { MediaService } from '../../media/media-service.js';
import { decodeWav } from '../../media/wav/wav.js';
import { RtpengineProcess } from '../../media/webrtc/rtpengine-process.js';
import { RtpengineSrtpRelay } from '../../media/webrtc/rtpengine-srtp.js';
import { runBaresip, type BaresipRun } from '../helpers/baresip.js';
import { freeTcpPort } from '../helpers/free-port.js';
import { numberDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import { tone, toneSeconds } from '../helpers/tones.js';
import { fixtureOriginator, startGatewayFixture } from './gateway-harness.js';
import { NodeUac } from './node-uac.js';

const did = '+914440000041';
const agentDesk = '+919812345679';

/** Transfers every call to the agents' desk as soon as it is answered, and keeps the outcome. */
class TransferringHandler implements CallHandler {
  transfers: GatewayCallTransfer | undefined;
  call: ActiveCall | undefined;
  outcome: CallTransferOutcome | undefined;

  async handle(call: ActiveCall): Promise<void> {
    this.call = call;
    this.outcome = await this.transfers?.transfer(call.info.id, agentDesk, call.signal);
    await call.ended;
  }
}

/** The SDP each side was given by the relay, per relay session (the transfer leg's id ends in -transfer). */
const sentToCarrier = new Map<string, string[]>();
const recording = (relay: SrtpRelay): SrtpRelay => ({
  toPlatform: (leg, sdp, kind) => relay.toPlatform(leg, sdp, kind),
  toCarrier: async (leg, sdp, kind) => {
    const secure = await relay.toCarrier(leg, sdp, kind);
    sentToCarrier.set(leg.callId, [...(sentToCarrier.get(leg.callId) ?? []), secure]);
    return secure;
  },
  release: (callId) => relay.release(callId),
});

/**
 * The caller: INVITEs `did` with an SDES offer, plays 440 Hz for `ms`, keeps what it hears, then
 * sends BYE (which ends the bridge and its leg to the desk).
 */
async function phoneCall(tlsPort: number, ca: Buffer, ms: number): Promise<Int16Array> {
  // Below the kernel's ephemeral range (32768-60999), where another test's port-0 socket cannot sit.
  const phoneMedia = new MediaService({ bindAddress: '127.0.0.1', portMin: 31_400, portMax: 31_420, logger: pino({ level: 'silent' }) });
  const sbc = new RtpengineSrtpRelay(rtpengine.bridge);
  const session = await phoneMedia.offer({ callId: 'phone' });
  const uac = await NodeUac.tls(tlsPort, ca);
  const heard: Int16Array[] = [];
  try {
    const crlf = (sdp: string): string => sdp.replace(/\r?\n/g, '\r\n');
    const offer = await sbc.toCarrier({ callId: 'phone', from: 'platform' }, session.localSdp, 'offer');
    const uri = `sip:${did}@127.0.0.1`;
    uac.request('INVITE', uri, 1, { body: crlf(offer) });
    const ok = await uac.response('INVITE', 200);
    const to = ok.headers.get('to') ?? '';
    uac.request('ACK', uri, 1, { to });
    const applied = session.applyAnswer(await sbc.toPlatform({ callId: 'phone', from: 'carrier' }, ok.body.toString(), 'answer'));
    if (!applied.ok) throw new Error(`the phone could not use the answer: ${applied.message}`);
    session.output.write(tone(440, ms / 1000, 8000));
    // Reads until the session closes below (input yields nothing until audio arrives).
    const reading = (async () => {
      for await (const frame of session.input) if (!frame.concealed) heard.push(frame.samples);
    })();
    await new Promise((r) => setTimeout(r, ms));
    uac.request('BYE', uri, 2, { to });
    await uac.response('BYE', 200);
    await session.close();
    await reading;
  } finally {
    uac.close();
    await session.close();
    await sbc.release('phone');
    await phoneMedia.close();
  }
  const out = new Int16Array(heard.reduce((n, f) => n + f.length, 0));
  heard.reduce((at, f) => (out.set(f, at), at + f.length), 0);
  return out;
}

const [dir] = process.argv.slice(2) as [string];
const creds = await loadOrCreateTlsCredentials({ dataDir: dir, commonName: '127.0.0.1' });
const box = testBox();
const rtpengine = await RtpengineProcess.start({ binary: '/usr/bin/rtpengine', interface: '127.0.0.1', portMin: 35_600, portMax: 35_799, logger: pino({ level: 'silent' }) });
const relay = recording(new RtpengineSrtpRelay(rtpengine.bridge));
const handler = new TransferringHandler();
const fx = await startGatewayFixture(
  { transports: { host: '127.0.0.1', port: 0, tcpPort: 0, tlsPort: 0, tls: { cert: creds.cert, key: creds.key } }, srtp: relay, callHandler: handler, ringMs: 0 },
  undefined,
  'pglite',
);
const runs: BaresipRun[] = [];
try {
  // The desk's SIP port must be even-free for UDP/TCP with TLS on the next port.
  let deskPort = await freeTcpPort();
  if (deskPort % 2 === 1) deskPort -= 1;
  const defs = createResourceDefinitions({ secretBox: box });
  await defs.sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc('secure-both-ways', {
    inbound: { terminationAddresses: ['127.0.0.1'], dids: [did] },
    outbound: { address: '127.0.0.1', port: deskPort + 1, transport: 'tls' },
    srtp: 'required',
  }) as never);
  await defs.phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(did, 'Flow', { provider: { type: 'customSipTrunk', trunk: 'secure-both-ways' } }) as never);
  const logger = pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' });
  handler.transfers = new GatewayCallTransfer({
    stack: fx.gateway.stack,
    registry: fx.gateway.registry,
    media: fx.media,
    originator: fixtureOriginator(fx, box, { srtp: relay }),
    clock: systemClock,
    logger,
    srtp: relay,
    ringTimeoutMs: 5000,
  });
  const desk = runBaresip({
    account: `<sip:${agentDesk}@127.0.0.1;transport=tls>;regint=0;answermode=auto;mediaenc=srtp-mand;audio_codecs=PCMU`,
    sourceWav: path.join(dir, 'desk.wav'),
    seconds: 12,
    listen: `127.0.0.1:${deskPort}`,
    certificate: path.join(dir, 'baresip.pem'),
  });
  await new Promise((r) => setTimeout(r, 1500));
  const phoneHeard = await phoneCall(fx.gateway.ports.TLS as number, creds.cert, 6000);
  const call = handler.call;
  const deskRun = await desk;
  runs.push(deskRun);
  const deskDecoded = deskRun.decoded ? decodeWav(readFileSync(deskRun.decoded)) : new Int16Array(0);
  const outcome = handler.outcome;
  process.stdout.write(`SRTP-TRANSFER-RESULT ${JSON.stringify({
    trunkId: call?.info.trunkId ?? null,
    outcome: outcome && (outcome.ok ? outcome : { ...outcome, cause: outcome.cause instanceof Error ? outcome.cause.message : undefined }),
    deskOffer: call ? (sentToCarrier.get(`${call.info.id}-transfer`) ?? [])[0] ?? '' : '',
    callerAnswer: call ? (sentToCarrier.get(call.info.id) ?? [])[0] ?? '' : '',
    // The caller's 440 Hz as the desk decoded it, and the desk's 1 kHz as the caller decoded it.
    deskHeard440: toneSeconds(deskDecoded, 440, 8000),
    callerHeard1000: toneSeconds(phoneHeard, 1000, 8000),
    output: runs.flatMap((r) => r.output.split('\n').filter((l) => /srtp|crypto|error|SAVP|answer|reason/i.test(l)).slice(-6)),
  })}\n`);
} finally {
  for (const r of runs) r.cleanup();
  await fx.close();
  rtpengine.bridge.close();
  await rtpengine.process.stop();
}
process.exit(0);
