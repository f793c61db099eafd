import assert from 'node:assert/strict';
import { parseDatagram } from '../sip/message/parser.js';
import type { SipResponse } from '../sip/message/message.js';
import { MAX_422_RETRIES } from '../sip/dialog/session-timer.js';
import { initialState, transition, type AttemptMemory, type InviteEvent, type InviteState, type InviteTransition } from './invite-state.js';

const response = (status: number, reason: string, extra: string[] = []): SipResponse =>
  parseDatagram(
    Buffer.from(
      [
        `SIP/2.0 ${status} ${reason}`,
        'Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK-1',
        'From: <sip:+914440000001@127.0.0.1>;tag=a',
        'To: <sip:+919800000001@127.0.0.1>;tag=b',
        'Call-ID: state-test@127.0.0.1',
        'CSeq: 1 INVITE',
        ...extra,
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    ),
  ) as SipResponse;

const challenge407 = (realm: string): SipResponse => response(407, 'Proxy Authentication Required', [`Proxy-Authenticate: Digest realm="${realm}", nonce="n-${realm}", algorithm=MD5, qop="auth"`]);
const challenge401 = (realm: string): SipResponse => response(401, 'Unauthorized', [`WWW-Authenticate: Digest realm="${realm}", nonce="n-${realm}", algorithm=SHA-256, qop="auth"`]);
const ok = response(200, 'OK');
const memory: AttemptMemory = { cseq: 1, realms: [], interval: { seconds: 1800, minSe: 90 }, retries422: 0 };
const withCredentials = { credentials: true };

/** Runs events from a state, returning the last transition and every action on the way. */
function run(from: InviteState, events: InviteEvent[], policy = withCredentials): InviteTransition & { all: string[] } {
  let t: InviteTransition = { state: from, actions: [] };
  const all: string[] = [];
  for (const e of events) {
    t = transition(t.state, e, policy);
    all.push(...t.actions);
  }
  return { ...t, all };
}

const calling = initialState(memory);
const proceeding = run(calling, [{ kind: 'provisional', status: 180 }]).state;
const final = (r: SipResponse): InviteEvent => ({ kind: 'final', response: r });
const provisional = (status = 180): InviteEvent => ({ kind: 'provisional', status });
const ringTimeout: InviteEvent = { kind: 'cancel', cause: 'ring-timeout' };
const abort: InviteEvent = { kind: 'cancel', cause: 'aborted' };

describe('INVITE attempt state machine (RFC 3261 sec. 17.1.1, 9.1, 22.2/22.3)', () => {
  describe('calling (INVITE out, nothing heard)', () => {
    it('a provisional (100 included) moves to proceeding without any action', () => {
      assert.deepEqual(transition(calling, provisional(100), withCredentials), { state: { name: 'proceeding', memory }, actions: [] });
    });

    it('a CANCEL wanted now waits for a provisional: nothing is sent (sec. 9.1)', () => {
      assert.deepEqual(transition(calling, ringTimeout, withCredentials), { state: { name: 'cancel-pending', memory, cause: 'ring-timeout' }, actions: [] });
    });

    it('a 2xx is answered with an ACK', () => {
      assert.deepEqual(transition(calling, final(ok), withCredentials), { state: { name: 'done', end: { kind: 'answered', cancelled: undefined } }, actions: ['ack'] });
    });

    it('a final response with nothing heard before is silent (the stack\'s 408 after Timer B)', () => {
      const t = transition(calling, final(response(408, 'Request Timeout')), withCredentials);
      assert.deepEqual(t.state, { name: 'done', end: { kind: 'rejected', status: 408, reason: 'Request Timeout', cancelled: undefined, challenge: false, silent: true } });
    });

    it('a 407 is answered once for its realm on the next CSeq (sec. 22.2, 8.1.3.5)', () => {
      const c = challenge407('carrier');
      const t = transition(calling, final(c), withCredentials);
      assert.deepEqual(t, { state: { name: 'challenged', memory: { ...memory, cseq: 2, realms: ['carrier'] }, challenge: c }, actions: ['send-invite'] });
    });

    it('a 401 without credentials to answer it ends the attempt as a challenge', () => {
      const t = transition(calling, final(challenge401('carrier')), { credentials: false });
      assert.equal(t.state.name, 'done');
      assert.deepEqual(t.state.name === 'done' && t.state.end, { kind: 'rejected', status: 401, reason: 'Unauthorized', cancelled: undefined, challenge: true, silent: true });
    });

    it('a challenge with no Digest challenge we can parse is not answered', () => {
      const t = transition(calling, final(response(401, 'Unauthorized', ['WWW-Authenticate: Basic realm="x"'])), withCredentials);
      assert.equal(t.state.name === 'done' && t.state.end.kind === 'rejected' && t.state.end.challenge, true);
    });

    it('"resent" is what takes a retry back to calling; in calling it changes nothing', () => {
      assert.deepEqual(transition(calling, { kind: 'resent' }, withCredentials), { state: calling, actions: [] });
    });
  });

  describe('proceeding (a provisional came)', () => {
    it('a CANCEL wanted now goes at once (sec. 9.1)', () => {
      assert.deepEqual(transition(proceeding, abort, withCredentials), { state: { name: 'cancelling', memory, cause: 'aborted' }, actions: ['send-cancel'] });
    });

    it('more provisionals change nothing', () => {
      assert.deepEqual(transition(proceeding, provisional(183), withCredentials), { state: proceeding, actions: [] });
    });

    it('a 487 we did not cause is not silent and not a cancellation', () => {
      const t = transition(proceeding, final(response(487, 'Request Terminated')), withCredentials);
      assert.deepEqual(t.state, { name: 'done', end: { kind: 'rejected', status: 487, reason: 'Request Terminated', cancelled: undefined, challenge: false, silent: false } });
    });

    it('a 422 naming a higher Min-SE retries asking for it (RFC 4028 sec. 7.4), at most MAX_422_RETRIES times', () => {
      const t = transition(proceeding, final(response(422, 'Session Interval Too Small', ['Min-SE: 3600'])), withCredentials);
      assert.deepEqual(t, { state: { name: 'interval-too-small', memory: { ...memory, cseq: 2, interval: { seconds: 3600, minSe: 3600 }, retries422: 1 } }, actions: ['send-invite'] });
      const spent: InviteState = { name: 'proceeding', memory: { ...memory, retries422: MAX_422_RETRIES } };
      assert.equal(transition(spent, final(response(422, 'Session Interval Too Small', ['Min-SE: 3600'])), withCredentials).state.name, 'done');
    });

    it('a 422 that does not raise the interval, or without a timer offered, ends the attempt', () => {
      assert.equal(transition(proceeding, final(response(422, 'Session Interval Too Small', ['Min-SE: 1800'])), withCredentials).state.name, 'done');
      const noTimer: InviteState = { name: 'proceeding', memory: { ...memory, interval: undefined } };
      assert.equal(transition(noTimer, final(response(422, 'Session Interval Too Small', ['Min-SE: 3600'])), withCredentials).state.name, 'done');
    });
  });

  describe('cancel-pending (CANCEL wanted before anything was heard)', () => {
    const pending = run(calling, [ringTimeout]).state;

    it('sends the CANCEL with the first provisional', () => {
      assert.deepEqual(transition(pending, provisional(100), withCredentials), { state: { name: 'cancelling', memory, cause: 'ring-timeout' }, actions: ['send-cancel'] });
    });

    it('a second cause changes nothing: the first one is kept', () => {
      assert.deepEqual(transition(pending, abort, withCredentials), { state: pending, actions: [] });
    });

    it('a silent final response ends it as cancelled and silent, with no CANCEL ever sent', () => {
      const t = run(calling, [ringTimeout, final(response(408, 'Request Timeout'))]);
      assert.deepEqual(t.all, []);
      assert.deepEqual(t.state, { name: 'done', end: { kind: 'rejected', status: 408, reason: 'Request Timeout', cancelled: 'ring-timeout', challenge: false, silent: true } });
    });

    it('a challenge is not answered once a CANCEL is wanted', () => {
      const t = run(calling, [abort, final(challenge407('carrier'))]);
      assert.deepEqual(t.state, { name: 'done', end: { kind: 'rejected', status: 407, reason: 'Proxy Authentication Required', cancelled: 'aborted', challenge: true, silent: true } });
    });
  });

  describe('cancelling (CANCEL sent)', () => {
    it('the 487 after our ring-timeout CANCEL ends it as cancelled (classified no-answer)', () => {
      const t = run(proceeding, [ringTimeout, final(response(487, 'Request Terminated'))]);
      assert.deepEqual(t.all, ['send-cancel']);
      assert.deepEqual(t.state, { name: 'done', end: { kind: 'rejected', status: 487, reason: 'Request Terminated', cancelled: 'ring-timeout', challenge: false, silent: false } });
    });

    it('race: a 200 that overtakes the ring-timeout CANCEL is ACKed and the call is up', () => {
      const t = run(proceeding, [ringTimeout, final(ok)]);
      assert.deepEqual(t.all, ['send-cancel', 'ack']);
      assert.deepEqual(t.state, { name: 'done', end: { kind: 'answered', cancelled: 'ring-timeout' } });
    });

    it('race: a 200 that overtakes the CANCEL of an abort is ACKed and then BYEd (sec. 9.1)', () => {
      const t = run(proceeding, [abort, final(ok)]);
      assert.deepEqual(t.all, ['send-cancel', 'ack', 'bye']);
      assert.deepEqual(t.state, { name: 'done', end: { kind: 'answered-after-cancel' } });
    });

    it('race: a 200 to an INVITE whose CANCEL still waited for a provisional is ACKed and BYEd too', () => {
      assert.deepEqual(run(calling, [abort, final(ok)]).all, ['ack', 'bye']);
    });

    it('sends one CANCEL only: later provisionals and causes send nothing', () => {
      const t = run(proceeding, [abort, provisional(180), ringTimeout, provisional(183)]);
      assert.deepEqual(t.all, ['send-cancel']);
      assert.deepEqual(t.state, { name: 'cancelling', memory, cause: 'aborted' });
    });
  });

  describe('challenged (a 401/407 answered, once per realm: sec. 22.3)', () => {
    const first = run(calling, [final(challenge407('proxy.example'))]).state;

    it('"resent" moves to calling with the next CSeq and the realm remembered', () => {
      assert.deepEqual(transition(first, { kind: 'resent' }, withCredentials).state, { name: 'calling', memory: { ...memory, cseq: 2, realms: ['proxy.example'] } });
    });

    it('a second challenge for an answered realm means the credentials were refused: it ends the attempt', () => {
      const t = run(first, [{ kind: 'resent' }, provisional(100), final(challenge407('proxy.example'))]);
      assert.deepEqual(t.all, []);
      assert.deepEqual(t.state, { name: 'done', end: { kind: 'rejected', status: 407, reason: 'Proxy Authentication Required', cancelled: undefined, challenge: true, silent: false } });
    });

    it('a challenge for another realm (the callee after the proxy) is answered too, keeping both realms', () => {
      const t = run(first, [{ kind: 'resent' }, final(challenge401('callee.example'))]);
      assert.deepEqual(t.actions, ['send-invite']);
      assert.equal(t.state.name, 'challenged');
      assert.deepEqual(t.state.name === 'challenged' && t.state.memory, { ...memory, cseq: 3, realms: ['proxy.example', 'callee.example'] });
    });

    it('a CANCEL wanted between the challenge and the new INVITE waits for that INVITE\'s provisional', () => {
      const t = run(first, [abort, { kind: 'resent' }, provisional(100)]);
      assert.deepEqual(t.all, ['send-cancel']);
      assert.equal(t.state.name, 'cancelling');
    });

    it('a final response cannot come before the new INVITE is out: it is ignored', () => {
      assert.deepEqual(transition(first, final(ok), withCredentials), { state: first, actions: [] });
    });
  });

  describe('interval-too-small and done', () => {
    it('interval-too-small goes back to calling once the new INVITE is out', () => {
      const retry = run(proceeding, [final(response(422, 'Session Interval Too Small', ['Min-SE: 3600']))]).state;
      assert.equal(retry.name, 'interval-too-small');
      assert.equal(transition(retry, { kind: 'resent' }, withCredentials).state.name, 'calling');
    });

    it('done ignores every event', () => {
      const done = run(calling, [final(ok)]).state;
      for (const e of [provisional(), final(ok), abort, { kind: 'resent' } as const]) assert.deepEqual(transition(done, e, withCredentials), { state: done, actions: [] });
    });
  });
});
