import assert from 'node:assert/strict';
import { parseDatagram } from '../sip/message/parser.js';
import type { SipResponse } from '../sip/message/message.js';
import {
  backoffSeconds,
  grantedSeconds,
  initialRegisterState,
  refreshDelaySeconds,
  transition,
  type RegisterEvent,
  type RegisterPolicy,
  type RegisterState,
  type RegisterTransition,
} from './register-state.js';

const policy: RegisterPolicy = { expiresSeconds: 600, credentials: true, contactUser: 'r-abc', backoffBaseSeconds: 30, backoffMaxSeconds: 1800 };

const response = (status: number, reason: string, cseq: number, extra: string[] = []): SipResponse =>
  parseDatagram(
    Buffer.from(
      [
        `SIP/2.0 ${status} ${reason}`,
        'Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK-1',
        'From: <sip:alice@carrier.example>;tag=a',
        'To: <sip:alice@carrier.example>;tag=b',
        'Call-ID: reg@vap',
        `CSeq: ${cseq} REGISTER`,
        ...extra,
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    ),
  ) as SipResponse;

const at = (r: SipResponse, now = 0, random = 1): RegisterEvent => ({ kind: 'response', response: r, now, random });
const ok = (cseq: number, contact = '<sip:r-abc@192.0.2.1:5060>;expires=300'): SipResponse => response(200, 'OK', cseq, [`Contact: ${contact}`]);
const challenge = (cseq: number, realm = 'carrier', stale = false): SipResponse =>
  response(401, 'Unauthorized', cseq, [`WWW-Authenticate: Digest realm="${realm}", nonce="n${cseq}", algorithm=SHA-256, qop="auth"${stale ? ', stale=true' : ''}`]);

function run(from: RegisterState, events: RegisterEvent[], p = policy): RegisterTransition {
  let t: RegisterTransition = { state: from, actions: [] };
  for (const e of events) t = transition(t.state, e, p);
  return t;
}

const start = initialRegisterState(policy);
const registering = run(start, [{ kind: 'start' }]).state;
const registered = run(registering, [at(ok(1), 1_000)]).state;

describe('registration state machine (RFC 3261 sec. 10.2)', () => {
  describe('unregistered', () => {
    it('start sends the first REGISTER on CSeq 1 asking for the policy lifetime', () => {
      const t = transition(start, { kind: 'start' }, policy);
      assert.equal(t.state.name, 'registering');
      assert.deepEqual(t.actions, [{ kind: 'send-register', cseq: 1, expires: 600 }]);
    });
    it('stop before anything was sent stops without sending', () => {
      assert.deepEqual(transition(start, { kind: 'stop' }, policy), { state: { name: 'stopped' }, actions: [{ kind: 'clear-timer' }] });
    });
  });

  describe('registering', () => {
    it('a 200 listing our Contact binds for the expires it names and arms the refresh (sec. 10.2.4)', () => {
      const t = transition(registering, at(ok(1), 1_000), policy);
      assert.equal(t.state.name, 'registered');
      assert.deepEqual(t.state.name === 'registered' && t.state.binding, { grantedSeconds: 300, expiresAt: 301_000 });
      assert.deepEqual(t.actions, [{ kind: 'set-timer', ms: 240_000 }]);
    });

    it('a 401 is answered once per realm on the next CSeq (sec. 22.2, 22.3)', () => {
      const c = challenge(1);
      const t = transition(registering, at(c), policy);
      assert.equal(t.state.name, 'registering');
      assert.deepEqual(t.actions, [{ kind: 'send-register', cseq: 2, expires: 600, challenge: c }]);
      const again = transition(t.state, at(challenge(2)), policy);
      assert.equal(again.state.name, 'failed', 'the same realm challenging again refused the credentials');
      assert.match(again.state.name === 'failed' ? again.state.failure.error : '', /^401 Unauthorized/);
    });

    it('a stale nonce for an answered realm is answered again (RFC 7616 sec. 3.3)', () => {
      const t = run(registering, [at(challenge(1)), at(challenge(2, 'carrier', true))]);
      assert.equal(t.state.name, 'registering');
      assert.equal(t.actions[0]?.kind === 'send-register' && t.actions[0].cseq, 3);
    });

    it('a 401 without credentials fails the registration', () => {
      const t = transition(registering, at(challenge(1)), { ...policy, credentials: false });
      assert.equal(t.state.name, 'failed');
    });

    it('423 Interval Too Brief asks again with its Min-Expires (sec. 10.2.8)', () => {
      const t = transition(registering, at(response(423, 'Interval Too Brief', 1, ['Min-Expires: 3600'])), policy);
      assert.equal(t.state.name, 'registering');
      assert.deepEqual(t.actions, [{ kind: 'send-register', cseq: 2, expires: 3600 }]);
      // Kept for refreshes: the lifetime asked stays the registrar's minimum.
      const refreshed = run(t.state, [at(ok(2, '<sip:r-abc@192.0.2.1>;expires=3600')), { kind: 'timer', now: 1 }]);
      assert.deepEqual(refreshed.actions, [{ kind: 'send-register', cseq: 3, expires: 3600 }]);
    });

    it('a 423 that names no longer interval is a refusal', () => {
      assert.equal(transition(registering, at(response(423, 'Interval Too Brief', 1, ['Min-Expires: 60'])), policy).state.name, 'failed');
      assert.equal(transition(registering, at(response(423, 'Interval Too Brief', 1)), policy).state.name, 'failed');
    });

    it('a timeout or 5xx backs off for the RFC 5626 sec. 4.5 wait, a 503 at least its Retry-After', () => {
      const t = transition(registering, at(response(408, 'Request Timeout', 1), 5_000, 0), policy);
      assert.equal(t.state.name, 'backing-off');
      assert.deepEqual(t.actions, [{ kind: 'set-timer', ms: 15_000 }]);
      assert.equal(t.state.name === 'backing-off' && t.state.failure.retryAt, 20_000);
      const busy = transition(registering, at(response(503, 'Service Unavailable', 1, ['Retry-After: 120']), 0, 0), policy);
      assert.deepEqual(busy.actions, [{ kind: 'set-timer', ms: 120_000 }]);
    });

    it('a 403 is a refusal retried only after the longest wait', () => {
      const t = transition(registering, at(response(403, 'Forbidden', 1), 0, 1), policy);
      assert.equal(t.state.name, 'failed');
      assert.deepEqual(t.actions, [{ kind: 'set-timer', ms: 1_800_000 }]);
    });

    it('an unresolvable registrar backs off', () => {
      const t = transition(registering, { kind: 'unreachable', cseq: 1, error: 'registrar not resolved: ENOTFOUND', now: 0, random: 1 }, policy);
      assert.equal(t.state.name, 'backing-off');
    });

    it('an answer to an earlier CSeq is ignored (sec. 10.2: CSeq up by one per REGISTER)', () => {
      const t = run(registering, [at(challenge(1))]);
      assert.deepEqual(transition(t.state, at(ok(1)), policy), { state: t.state, actions: [] });
    });

    it('a 200 that lists other contacts but not ours is a failure', () => {
      const t = transition(registering, at(ok(1, '<sip:someone-else@192.0.2.9>;expires=300')), policy);
      assert.equal(t.state.name, 'failed');
    });

    it('stop while the REGISTER is out un-registers (Expires: 0, sec. 10.2.2)', () => {
      const t = transition(registering, { kind: 'stop' }, policy);
      assert.equal(t.state.name, 'unregistering');
      assert.deepEqual(t.actions, [{ kind: 'clear-timer' }, { kind: 'send-register', cseq: 2, expires: 0 }]);
    });
  });

  describe('registered', () => {
    it('the timer refreshes on the next CSeq (sec. 10.2.1.1), and the answer re-arms it', () => {
      const t = transition(registered, { kind: 'timer', now: 241_000 }, policy);
      assert.equal(t.state.name, 'refreshing');
      assert.deepEqual(t.actions, [{ kind: 'send-register', cseq: 2, expires: 600 }]);
      const again = transition(t.state, at(ok(2), 242_000), policy);
      assert.equal(again.state.name, 'registered');
      assert.deepEqual(again.actions, [{ kind: 'set-timer', ms: 240_000 }]);
    });

    it('a refresh challenged again for the realm (a new nonce) is answered: realms count per attempt', () => {
      const first = run(registering, [at(challenge(1)), at(ok(2))]).state;
      const t = run(first, [{ kind: 'timer', now: 1 }, at(challenge(3))]);
      assert.equal(t.state.name, 'refreshing');
      assert.equal(t.actions[0]?.kind === 'send-register' && t.actions[0].cseq, 4);
    });

    it('stop un-registers, and the 200 to it stops', () => {
      const t = transition(registered, { kind: 'stop' }, policy);
      assert.deepEqual(t.actions, [{ kind: 'clear-timer' }, { kind: 'send-register', cseq: 2, expires: 0 }]);
      assert.deepEqual(transition(t.state, at(ok(2)), policy).state, { name: 'stopped' });
    });

    it('un-registering answers a challenge, and stops on a refusal', () => {
      const t = run(registered, [{ kind: 'stop' }, at(challenge(2))]);
      assert.equal(t.state.name, 'unregistering');
      const sent = t.actions[0];
      assert.deepEqual(sent?.kind === 'send-register' && [sent.cseq, sent.expires, sent.challenge?.status], [3, 0, 401]);
      assert.deepEqual(transition(t.state, at(response(500, 'Server Error', 3)), policy).state, { name: 'stopped' });
    });
  });

  describe('backing-off and failed', () => {
    it('consecutive failures double the wait up to the maximum; a success resets the count', () => {
      let s = registering;
      const waits: number[] = [];
      for (let cseq = 1; cseq <= 8; cseq++) {
        const t = transition(s, at(response(500, 'Server Error', cseq), 0, 1), policy);
        waits.push((t.actions[0] as { ms: number }).ms / 1000);
        s = transition(t.state, { kind: 'timer', now: 10_000_000 }, policy).state;
      }
      assert.deepEqual(waits, [30, 60, 120, 240, 480, 960, 1800, 1800]);
      const back = transition(s, at(ok(9)), policy).state;
      assert.equal(back.name === 'registered' && back.memory.failures, 0);
    });

    it('a timer that fires before retryAt does nothing; after it a new REGISTER goes', () => {
      const t = transition(registering, at(response(500, 'Server Error', 1), 0, 1), policy);
      assert.deepEqual(transition(t.state, { kind: 'timer', now: 10_000 }, policy).actions, []);
      assert.deepEqual(transition(t.state, { kind: 'timer', now: 30_000 }, policy).actions, [{ kind: 'send-register', cseq: 2, expires: 600 }]);
    });

    it('stop while waiting stops without sending', () => {
      const t = transition(registering, at(response(500, 'Server Error', 1)), policy);
      assert.deepEqual(transition(t.state, { kind: 'stop' }, policy), { state: { name: 'stopped' }, actions: [{ kind: 'clear-timer' }] });
    });
  });

  describe('stopped', () => {
    it('takes no event', () => {
      for (const e of [{ kind: 'start' }, { kind: 'timer', now: 1 }, { kind: 'stop' }, at(ok(1))] as RegisterEvent[]) {
        assert.deepEqual(transition({ name: 'stopped' }, e, policy), { state: { name: 'stopped' }, actions: [] });
      }
    });
  });

  describe('helpers', () => {
    it('refreshes at half the lifetime or a minute before its end, whichever is later, never under 5 s', () => {
      assert.equal(refreshDelaySeconds(3600), 3540);
      assert.equal(refreshDelaySeconds(60), 30);
      assert.equal(refreshDelaySeconds(4), 5);
    });
    it('backoff draws between half and all of the upper bound', () => {
      assert.equal(backoffSeconds(policy, 1, 0), 15);
      assert.equal(backoffSeconds(policy, 3, 1), 120);
    });
    it('the granted lifetime: our Contact\'s expires, else Expires, else what was asked', () => {
      assert.equal(grantedSeconds(response(200, 'OK', 1, ['Expires: 90']), 'r-abc', 600), 90);
      assert.equal(grantedSeconds(response(200, 'OK', 1), 'r-abc', 600), 600);
      assert.equal(grantedSeconds(response(200, 'OK', 1, ['Contact: <sip:x@h>;expires=10, <sip:r-abc@h>;expires=20', 'Expires: 90']), 'r-abc', 600), 20);
      assert.equal(grantedSeconds(response(200, 'OK', 1, ['Contact: <sip:r-abc@h>', 'Expires: 90']), 'r-abc', 600), 90);
    });
  });
});
