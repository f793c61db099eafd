import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock } from '../../../core/clock.js';
import { TypedEmitter } from '../../../core/typed-emitter.js';
import { SipRequest, SipResponse } from '../message/message.js';
import { parseDatagram } from '../message/parser.js';
import { SipError } from '../ua/sip-error.js';
import type { RefreshObserver } from './dialog.js';
import { expiryMs, MAX_422_RETRIES, negotiateAsUas, negotiatedByResponse, parseMinSe, parseSessionExpires, SessionTimer, type SessionTimerLeg } from './session-timer.js';

const head = (start: string, extra: string[]): string =>
  [
    start,
    'Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-st1',
    'From: <sip:a@127.0.0.1>;tag=a1',
    'To: <sip:b@127.0.0.1>;tag=b1',
    'Call-ID: st-1',
    `CSeq: 2 ${start.startsWith('SIP/') ? 'UPDATE' : start.split(' ')[0]}`,
    'Max-Forwards: 70',
    'Contact: <sip:a@127.0.0.1:5070>',
    ...extra,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');

const request = (method: string, extra: string[] = []): SipRequest => parseDatagram(Buffer.from(head(`${method} sip:b@127.0.0.1 SIP/2.0`, extra))) as SipRequest;
const response = (status: number, extra: string[] = []): SipResponse => parseDatagram(Buffer.from(head(`SIP/2.0 ${status} X`, extra))) as SipResponse;

const policy = { intervalSeconds: 1800, minSeSeconds: 90 };

/** A dialog stand-in that records what the timer sends and answers with queued responses. */
class FakeLeg extends TypedEmitter<{ destroy: [{ reason: string }] }> implements SessionTimerLeg {
  readonly callId = 'st-1';
  remoteAllow: readonly string[] | undefined = ['INVITE', 'ACK', 'BYE', 'UPDATE'];
  refreshObserver: RefreshObserver | undefined;
  readonly sent: Array<{ method: string; headers: ReadonlyArray<readonly [string, string]>; sdp?: string }> = [];
  answers: SipResponse[] = [];

  private next(): SipResponse {
    return this.answers.shift() ?? response(200, ['Session-Expires: 1800;refresher=uac']);
  }

  async request(method: string, options: { headers?: ReadonlyArray<readonly [string, string]> } = {}): Promise<SipResponse> {
    this.sent.push({ method, headers: options.headers ?? [] });
    return this.next();
  }

  async reinvite(sdp: string, options: { headers?: ReadonlyArray<readonly [string, string]>; onResponse?: (r: SipResponse) => void } = {}): Promise<string | undefined> {
    this.sent.push({ method: 'INVITE', headers: options.headers ?? [], sdp });
    const res = this.next();
    options.onResponse?.(res);
    if (res.status >= 300) throw new SipError(res.status, res.reason);
    return 'v=0 answer';
  }
}

const header = (h: ReadonlyArray<readonly [string, string]>, name: string): string | undefined => h.find(([n]) => n.toLowerCase() === name)?.[1];
const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('RFC 4028 session timers', () => {
  describe('headers and negotiation', () => {
    it('parses Session-Expires with its refresher and Min-SE (sec. 4, 5)', () => {
      assert.deepEqual(parseSessionExpires('1800;refresher=UAS'), { seconds: 1800, refresher: 'uas' });
      assert.deepEqual(parseSessionExpires(' 90 '), { seconds: 90, refresher: undefined });
      assert.equal(parseSessionExpires('abc'), undefined);
      assert.equal(parseMinSe('120;x=1'), 120);
      assert.equal(parseMinSe(undefined), undefined);
    });

    it('as UAS refuses too small an interval with 422 and our Min-SE when the UAC supports timers (sec. 9)', () => {
      assert.deepEqual(negotiateAsUas(request('INVITE', ['Supported: timer', 'Session-Expires: 60']), policy), { kind: 'too-small', minSe: 90 });
    });

    it('raises a proxy-inserted small interval instead of a 422 the UAC could not handle, and refreshes itself', () => {
      const n = negotiateAsUas(request('INVITE', ['Session-Expires: 60']), policy);
      assert.equal(n.kind, 'active');
      if (n.kind !== 'active') return;
      assert.deepEqual([n.seconds, n.refresher], [90, 'uas']);
      assert.equal(header(n.headers, 'require'), undefined);
    });

    it('copies interval and refresher, and adds Require: timer for a UAC that supports timers', () => {
      const n = negotiateAsUas(request('INVITE', ['Supported: timer, 100rel', 'Session-Expires: 600;refresher=uas', 'Min-SE: 120']), policy);
      assert.equal(n.kind, 'active');
      if (n.kind !== 'active') return;
      assert.deepEqual([n.seconds, n.refresher], [600, 'uas']);
      assert.equal(header(n.headers, 'session-expires'), '600;refresher=uas');
      assert.equal(header(n.headers, 'require'), 'timer');
    });

    it('volunteers its own interval when none was asked: the UAC refreshes if it supports timers, else we do', () => {
      const withTimer = negotiateAsUas(request('INVITE', ['Supported: timer', 'Min-SE: 2000']), policy);
      assert.equal(withTimer.kind === 'active' && `${withTimer.seconds}/${withTimer.refresher}`, '2000/uac');
      const without = negotiateAsUas(request('INVITE'), policy);
      assert.equal(without.kind === 'active' && `${without.seconds}/${without.refresher}`, '1800/uas');
      assert.deepEqual(negotiateAsUas(request('INVITE'), { ...policy, intervalSeconds: 0 }), { kind: 'none' });
    });

    it('as UAC reads the 2xx: no Session-Expires means no timer (sec. 7.2)', () => {
      assert.equal(negotiatedByResponse(response(200)), undefined);
      assert.deepEqual(negotiatedByResponse(response(200, ['Session-Expires: 300;refresher=uas'])), { seconds: 300, refresher: 'uas' });
      assert.deepEqual(negotiatedByResponse(response(200, ['Session-Expires: 300'])), { seconds: 300, refresher: 'uac' });
    });

    it('gives up at the interval less min(32 s, a third of it) (sec. 10)', () => {
      assert.equal(expiryMs(1800), 1768_000);
      assert.equal(expiryMs(90), 60_000);
    });
  });

  describe('SessionTimer on a FakeClock', () => {
    let clock: FakeClock;
    let leg: FakeLeg;
    let expired: string[];
    let answers: string[];
    let timer: SessionTimer;
    beforeEach(() => {
      clock = new FakeClock(0);
      leg = new FakeLeg();
      expired = [];
      answers = [];
      timer = new SessionTimer(leg, clock, pino({ level: 'silent' }), policy, {
        offer: () => 'v=0 offer',
        answer: (sdp) => answers.push(sdp),
        expired: (why) => expired.push(why),
      });
    });

    it('as refresher sends UPDATE at half the interval when the peer allows it, and again after each 2xx', async () => {
      timer.arm(1800, true);
      clock.advance(899_999);
      assert.equal(leg.sent.length, 0);
      clock.advance(1);
      await flush();
      assert.equal(leg.sent.length, 1);
      const first = leg.sent[0];
      assert.equal(first?.method, 'UPDATE');
      assert.equal(header(first?.headers ?? [], 'session-expires'), '1800;refresher=uac');
      assert.equal(header(first?.headers ?? [], 'supported'), 'timer');
      clock.advance(900_000);
      await flush();
      assert.equal(leg.sent.length, 2);
      clock.advance(900_000);
      await flush();
      assert.equal(leg.sent.length, 3);
      assert.deepEqual(expired, []);
    });

    it('refreshes with a re-INVITE offering the current SDP when the peer did not list UPDATE', async () => {
      leg.remoteAllow = ['INVITE', 'ACK', 'BYE'];
      timer.arm(120, true);
      clock.advance(60_000);
      await flush();
      assert.equal(leg.sent[0]?.method, 'INVITE');
      assert.equal(leg.sent[0]?.sdp, 'v=0 offer');
      assert.deepEqual(answers, ['v=0 answer']);
      assert.equal(timer.active, true);
    });

    it('hands the refresher role over when the 2xx says refresher=uas', async () => {
      leg.answers.push(response(200, ['Session-Expires: 1800;refresher=uas']));
      timer.arm(1800, true);
      clock.advance(900_000);
      await flush();
      assert.equal(timer.weRefresh, false);
      clock.advance(1_767_999);
      assert.equal(leg.sent.length, 1);
      assert.deepEqual(expired, []);
      clock.advance(1);
      assert.deepEqual(expired, ['session-expired']);
    });

    it('as the side that does not refresh, ends the session when no refresh came in time', () => {
      timer.arm(1800, false);
      clock.advance(1_767_999);
      assert.deepEqual(expired, []);
      clock.advance(1);
      assert.deepEqual(expired, ['session-expired']);
      assert.equal(leg.sent.length, 0);
    });

    it('a refresh from the peer restarts the timer with the interval it negotiates', () => {
      timer.arm(1800, false);
      clock.advance(1_700_000);
      const seen = leg.refreshObserver?.check(request('UPDATE', ['Supported: timer', 'Session-Expires: 600;refresher=uac']));
      assert.equal(header(seen?.headers ?? [], 'session-expires'), '600;refresher=uac');
      seen?.commit();
      assert.equal(timer.intervalSeconds, 600);
      clock.advance(567_999);
      assert.deepEqual(expired, []);
      clock.advance(1);
      assert.deepEqual(expired, ['session-expired']);
    });

    it('answers 422 with Min-SE to a peer refresh below our minimum', () => {
      timer.arm(1800, false);
      assert.throws(
        () => leg.refreshObserver?.check(request('UPDATE', ['Supported: timer', 'Session-Expires: 30'])),
        (e: unknown) => e instanceof SipError && e.status === 422 && e.headers?.some(([n, v]) => n === 'Min-SE' && v === '90') === true,
      );
    });

    it('retries a refresh refused 422 with the Min-SE it names', async () => {
      leg.answers.push(response(422, ['Min-SE: 3600']));
      timer.arm(1800, true);
      clock.advance(900_000);
      await flush();
      await flush();
      assert.equal(leg.sent.length, 2);
      assert.equal(header(leg.sent[1]?.headers ?? [], 'session-expires'), '3600;refresher=uac');
      assert.equal(header(leg.sent[1]?.headers ?? [], 'min-se'), '3600');
    });

    it('retries refresh 422s while each raises the Min-SE, at most MAX_422_RETRIES times (sec. 7.4)', async () => {
      leg.answers.push(response(422, ['Min-SE: 2000']), response(422, ['Min-SE: 2400']), response(422, ['Min-SE: 3000']), response(422, ['Min-SE: 3600']));
      timer.arm(1800, true);
      clock.advance(900_000);
      for (let i = 0; i < 10; i++) await flush();
      assert.equal(MAX_422_RETRIES, 3);
      assert.deepEqual(leg.sent.map((r) => header(r.headers, 'min-se')), ['90', '2000', '2400', '3000'], 'the first refresh and three retries, no fourth');
      assert.deepEqual(expired, []);
      // A 422 that does not raise the interval is not retried at all.
      const other = new FakeLeg();
      other.answers.push(response(422, ['Min-SE: 1800']));
      new SessionTimer(other, clock, pino({ level: 'silent' }), policy, { offer: () => 'v=0 offer', expired: () => undefined }).arm(1800, true);
      clock.advance(900_000);
      for (let i = 0; i < 5; i++) await flush();
      assert.equal(other.sent.length, 1);
    });

    for (const status of [405, 501]) {
      it(`falls back to re-INVITE when the refresh UPDATE is refused ${status}, for this and later refreshes (RFC 3311)`, async () => {
        leg.answers.push(response(status));
        timer.arm(1800, true);
        clock.advance(900_000);
        for (let i = 0; i < 5; i++) await flush();
        assert.deepEqual(leg.sent.map((r) => r.method), ['UPDATE', 'INVITE']);
        assert.equal(leg.sent[1]?.sdp, 'v=0 offer');
        assert.equal(header(leg.sent[1]?.headers ?? [], 'session-expires'), '1800;refresher=uac');
        assert.deepEqual(answers, ['v=0 answer']);
        assert.equal(timer.active, true);
        clock.advance(900_000);
        for (let i = 0; i < 5; i++) await flush();
        assert.deepEqual(leg.sent.map((r) => r.method), ['UPDATE', 'INVITE', 'INVITE'], 'the next refresh goes straight to re-INVITE');
        assert.deepEqual(expired, []);
      });
    }

    it('ends the call when a refresh gets 481 or times out (408)', async () => {
      leg.answers.push(response(408));
      timer.arm(1800, true);
      clock.advance(900_000);
      await flush();
      assert.deepEqual(expired, ['session-refresh-failed']);
    });

    it('a 2xx naming an interval under 90 s (even 0) is raised to our Min-SE, not refreshed in a loop', async () => {
      leg.answers.push(response(200, ['Session-Expires: 0;refresher=uac']));
      timer.arm(1800, true);
      clock.advance(900_000);
      await flush();
      assert.equal(leg.sent.length, 1);
      assert.equal(timer.intervalSeconds, 90);
      clock.advance(44_999);
      await flush();
      assert.equal(leg.sent.length, 1, 'no refresh before half our Min-SE');
      clock.advance(1);
      await flush();
      assert.equal(leg.sent.length, 2);
      assert.equal(header(leg.sent[1]?.headers ?? [], 'session-expires'), '90;refresher=uac');
      // From 90 s up the peer's value stands, even below a higher Min-SE of ours: it expires by it.
      const strict = new SessionTimer(new FakeLeg(), clock, pino({ level: 'silent' }), { intervalSeconds: 3600, minSeSeconds: 1800 }, { offer: () => undefined, expired: () => undefined });
      strict.arm(900, true);
      assert.equal(strict.intervalSeconds, 900);
      strict.arm(0, true);
      assert.equal(strict.intervalSeconds, 90);
      strict.stop();
    });

    it('keeps every timer within what a Node timer can hold (2^31-1 ms): a huge interval does not expire at once', () => {
      const delays: number[] = [];
      const recording = new (class extends FakeClock {
        override setTimeout(callback: () => void, ms: number) {
          delays.push(ms);
          return super.setTimeout(callback, ms);
        }
      })(0);
      const t = new SessionTimer(new FakeLeg(), recording, pino({ level: 'silent' }), policy, { offer: () => undefined, expired: (why) => expired.push(why) });
      t.arm(9_999_999_999, true);
      assert.ok(delays.length === 2 && delays.every((ms) => ms >= 1 && ms <= 2 ** 31 - 1), `delays ${delays.join(', ')}`);
      recording.advance(2 ** 31 - 2);
      assert.deepEqual(expired, []);
    });

    it('stops with the dialog: no refresh and no expiry after destroy', async () => {
      timer.arm(1800, true);
      leg.emit('destroy', { reason: 'remote-bye' });
      clock.advance(3_600_000);
      await flush();
      assert.equal(leg.sent.length, 0);
      assert.deepEqual(expired, []);
      assert.equal(leg.refreshObserver, undefined);
    });
  });
});
