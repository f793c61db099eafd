import assert from 'node:assert/strict';
import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import { CallRegistry } from '../../gateway/call/call-registry.js';
import { AbuseGuard } from '../../gateway/inbound/abuse-guard.js';
import { EdgeSources } from '../../gateway/inbound/edge-source.js';
import { inviteSteps } from '../../gateway/inbound/invite-steps.js';
import { MethodRouter, type Step } from '../../gateway/inbound/method-router.js';
import { DEFAULT_SESSION_TIMER } from '../../gateway/sip/dialog/session-timer.js';
import { parseDatagram } from '../../gateway/sip/message/parser.js';
import type { SipMessage, SipRequest, SipResponse } from '../../gateway/sip/message/message.js';
import { InviteServerTransaction } from '../../gateway/sip/transaction/server.js';
import type { Flow } from '../../gateway/sip/transport/types.js';
import { ServerRequest } from '../../gateway/sip/ua/server-request.js';
import { SipError } from '../../gateway/sip/ua/sip-error.js';
import { SipStack } from '../../gateway/sip/ua/sip-stack.js';
import { MediaService } from '../../media/media-service.js';
import { captureLogs } from '../helpers/log-capture.js';

const flow: Flow = {
  transport: 'UDP', reliable: false, secure: false, open: true,
  local: { address: '127.0.0.1', port: 5060 }, remote: { address: '127.0.0.9', port: 5062 },
  send: () => undefined,
};

/**
 * The media step answers 503 "no media capacity" only when the media port failed. Found by the
 * SIP fuzz bench on main: for an INVITE without SDP (late offer) the step ran the rest of the
 * chain inside its try, so any later step's error (there, a bad From URI thrown while answering)
 * came back as 503 plus a misleading warning, and its real status was lost.
 */
describe('gateway: errors after the media step of a late-offer INVITE', function () {
  this.timeout(20_000);
  const log = captureLogs('warn');
  const media = new MediaService({ bindAddress: '127.0.0.1', portMin: 47_100 + 2 * Math.floor(Math.random() * 400), portMax: 48_000, logger: pino({ level: 'silent' }) });
  after(async () => {
    await media.close();
  });

  it('keeps the status a later step answers, and closes the offered session', async () => {
    const stack = new SipStack({ clock: systemClock, logger: log.logger, publicAddress: '127.0.0.1' });
    const registry = new CallRegistry();
    const steps = inviteSteps({
      // The directory is never asked: the chain below has no lookup step, and the source is trusted.
      host: stack, directory: { trunksForSource: async () => [], numberByE164: async () => undefined, trunkByExtension: async () => undefined, numberForTrunk: async () => undefined },
      media, callHandler: { handle: async () => undefined }, registry,
      guard: new AbuseGuard({ clock: systemClock, concurrentCalls: () => 0 }), clock: systemClock, logger: log.logger,
      trustedSources: new Set([flow.remote.address]), edge: new EdgeSources([]), maxCallsPerNumber: 1, maxCallsPerTenant: 1, ringMs: 0, retryAfterSeconds: 5,
      sessionTimer: DEFAULT_SESSION_TIMER,
    });
    const named = (name: string): Step<ServerRequest> => steps.find((s) => s.name === name) as Step<ServerRequest>;
    // Stands for any step after media that answers with its own status (486 here).
    const busy: Step<ServerRequest> = async () => {
      throw new SipError(486, 'Busy Here (a later step)');
    };
    const router = new MethodRouter(log.logger).use('INVITE', named('trying'), named('source'), named('media'), busy);

    const invite = parseDatagram(Buffer.from(
      'INVITE sip:+914440000001@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.9:5062;branch=z9hG4bKlate1\r\nMax-Forwards: 70\r\n' +
      'From: <sip:caller@127.0.0.9>;tag=a\r\nTo: <sip:+914440000001@127.0.0.1>\r\nCall-ID: late-offer-1\r\nCSeq: 1 INVITE\r\n' +
      'Contact: <sip:caller@127.0.0.9:5062>\r\nContent-Length: 0\r\n\r\n',
    )) as SipRequest;
    const sent: SipMessage[] = [];
    const tx = new InviteServerTransaction(invite, { reliable: true, send: (m) => void sent.push(m) }, {}, { clock: systemClock });
    const before = media.openSessions;
    await router.handle(new ServerRequest(invite, flow, tx, stack));

    const final = sent.filter((m): m is SipResponse => !m.isRequest && (m as SipResponse).status >= 200);
    assert.deepEqual(final.map((r) => `${r.status} ${r.reason}`), ['486 Busy Here (a later step)']);
    const end = Date.now() + 3000;
    while (media.openSessions !== before && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    assert.equal(media.openSessions, before, 'the late offer\'s session is closed again');
    assert.deepEqual(log.find('no media session available'), []);
    assert.equal(registry.inProgress, 0);
  });
});
