import assert from 'node:assert/strict';
import { FakeClock } from '../../core/clock.js';
import { Headers } from '../sip/message/headers.js';
import { SipRequest } from '../sip/message/message.js';
import { parseViaParm } from '../sip/message/via.js';
import type { ArrivingRequest } from '../sip/transport/receive-gate.js';
import type { Flow } from '../sip/transport/types.js';
import { AbuseGuard } from './abuse-guard.js';
import { CallCapacity } from './call-capacity.js';

const flow = (address: string): Flow => ({
  transport: 'UDP', reliable: false, secure: false, open: true,
  local: { address: '127.0.0.1', port: 5060 }, remote: { address, port: 5060 },
  send: () => undefined,
});
const arriving = (method: string, opts: { ua?: string; toTag?: string; callId?: string; branch?: string } = {}): ArrivingRequest => ({
  method,
  toTag: opts.toTag,
  topVia: parseViaParm(`SIP/2.0/UDP 127.0.0.9:5060;branch=${opts.branch ?? 'z9hG4bK-1'}`),
  header: (k) => (k === 'user-agent' ? opts.ua : k === 'call-id' ? (opts.callId ?? 'c1') : undefined),
});
const actions = (g: AbuseGuard, n: number, source = '127.0.0.9', method = 'INVITE'): string[] =>
  Array.from({ length: n }, () => g.admit(source, arriving(method)).action);

describe('AbuseGuard: per-source admission before the parse', () => {
  it('admits a burst, then refuses 503 up to the refusal rate, then drops; both buckets refill', () => {
    const clock = new FakeClock(0);
    const g = new AbuseGuard({ clock, perSourceRate: 2, perSourceBurst: 3, refusalRate: 4, concurrentCalls: () => 0 });
    assert.deepEqual(actions(g, 9), ['admit', 'admit', 'admit', 'refuse', 'refuse', 'refuse', 'refuse', 'drop', 'drop']);
    assert.equal(g.admit('127.0.0.8', arriving('OPTIONS')).action, 'admit', 'other sources are not affected');
    clock.advance(500);
    // Half a second: one admission token (2/s) and two refusal tokens (4/s).
    assert.deepEqual(actions(g, 4), ['admit', 'refuse', 'refuse', 'drop']);
    const d = g.admit('127.0.0.9', arriving('OPTIONS'));
    assert.deepEqual(d, { action: 'drop', reason: 'source over its refusal rate' });
  });

  it('refusal rate 0 drops everything over the admission rate', () => {
    const g = new AbuseGuard({ clock: new FakeClock(0), perSourceRate: 1, perSourceBurst: 1, refusalRate: 0, concurrentCalls: () => 0 });
    assert.deepEqual(actions(g, 3), ['admit', 'drop', 'drop']);
  });

  it('never limits CANCEL or requests of a live dialog; a To tag of no live dialog is charged like a new request', () => {
    const live = new Set(['up@127.0.0.9']);
    const g = new AbuseGuard({ clock: new FakeClock(0), perSourceRate: 1, perSourceBurst: 1, refusalRate: 0, concurrentCalls: () => 0, liveDialog: (id) => live.has(id) });
    assert.deepEqual(actions(g, 2), ['admit', 'drop']);
    assert.equal(g.admit('127.0.0.9', arriving('BYE', { toTag: 'a1', callId: 'up@127.0.0.9' })).action, 'admit');
    assert.equal(g.admit('127.0.0.9', arriving('INVITE', { toTag: 'a1', callId: 'up@127.0.0.9' })).action, 'admit', 're-INVITE');
    assert.equal(g.admit('127.0.0.9', arriving('CANCEL')).action, 'admit');
    assert.equal(g.admit('127.0.0.9', arriving('BYE', { toTag: 'forged', callId: 'nothing-here' })).action, 'drop');
  });

  it('drops scanner User-Agents, but answers OPTIONS monitors (sipsak, Kamailio dispatcher, SIPp)', () => {
    const g = new AbuseGuard({ clock: new FakeClock(0), concurrentCalls: () => 0 });
    for (const ua of ['friendly-scanner', 'SIPVicious 0.3.4', 'sipcli/v1.8', 'VaxSIPUserAgent/3.1']) {
      assert.deepEqual(g.admit('127.0.0.9', arriving('OPTIONS', { ua })), { action: 'drop', reason: 'scanner User-Agent' }, ua);
    }
    for (const ua of ['sipsak 0.9.8.1', 'kamailio (5.6.3 (x86_64/linux))', 'SIPp test caller', 'Asterisk PBX 20']) {
      assert.equal(g.admit('127.0.0.9', arriving('OPTIONS', { ua })).action, 'admit', ua);
    }
  });

  it('blocks a source after repeated authentication failures within the window, until the block expires', () => {
    const clock = new FakeClock(0);
    const g = new AbuseGuard({ clock, authFailureLimit: 3, authFailureWindowMs: 10_000, blockMs: 60_000, concurrentCalls: () => 0 });
    g.recordAuthFailure('127.0.0.9');
    clock.advance(11_000);
    g.recordAuthFailure('127.0.0.9');
    g.recordAuthFailure('127.0.0.9');
    assert.equal(g.isBlocked('127.0.0.9'), false, 'the first failure fell out of the window');
    g.recordAuthFailure('127.0.0.9');
    assert.deepEqual(g.admit('127.0.0.9', arriving('OPTIONS')), { action: 'drop', reason: 'source blocked' });
    clock.advance(60_001);
    assert.equal(g.admit('127.0.0.9', arriving('OPTIONS')).action, 'admit');
  });
});

describe('AbuseGuard: new calls by the node\'s capacity', () => {
  it('refuses a new INVITE the node has no room for, with the capacity\'s reason, from the source\'s refusal budget', () => {
    const clock = new FakeClock(0);
    let calls = 2;
    const capacity = new CallCapacity({ clock, maxCalls: 2, callsInProgress: () => calls });
    const g = new AbuseGuard({ clock, perSourceRate: 100, perSourceBurst: 100, refusalRate: 1, concurrentCalls: () => calls, capacity });
    assert.deepEqual(g.admit('127.0.0.9', arriving('INVITE')), { action: 'refuse', reason: 'node at its call capacity' });
    assert.deepEqual(g.admit('127.0.0.9', arriving('INVITE')), { action: 'drop', reason: 'source over its refusal rate' }, 'refusals are bounded per source');
    assert.deepEqual(g.admit('127.0.0.9', arriving('OPTIONS')), { action: 'admit' }, 'capacity is for new calls only');
    assert.deepEqual(g.admit('127.0.0.9', arriving('INVITE', { toTag: 'x' })).action, 'admit', 'not a new call (charged to the source only)');
    calls = 1;
    assert.deepEqual(g.admit('127.0.0.9', arriving('INVITE')), { action: 'admit', newCall: true });
  });

  it('spends the call rate only for calls it admits: a call its source may not make costs the node nothing', () => {
    const clock = new FakeClock(0);
    const capacity = new CallCapacity({ clock, maxCallsPerSecond: 2, callsInProgress: () => 0 });
    const g = new AbuseGuard({ clock, perSourceRate: 1, perSourceBurst: 1, refusalRate: 10, concurrentCalls: () => 0, capacity });
    assert.deepEqual(actions(g, 2, '127.0.0.8'), ['admit', 'refuse'], 'the second is over its source\'s rate');
    assert.deepEqual(g.admit('127.0.0.7', arriving('INVITE')), { action: 'admit', newCall: true }, 'the node still had a token for another source');
    assert.deepEqual(g.admit('127.0.0.6', arriving('INVITE')), { action: 'refuse', reason: 'node over its call rate' });
    clock.advance(500);
    assert.equal(g.admit('127.0.0.6', arriving('INVITE')).action, 'admit', 'half a second: one token back');
  });

  it('lets a retransmitted INVITE of a live transaction through whatever the capacity, never answering it 503', () => {
    const clock = new FakeClock(0);
    const capacity = new CallCapacity({ clock, maxCalls: 1, callsInProgress: () => 1 });
    const live = new Set(['z9hG4bK-ringing']);
    const g = new AbuseGuard({ clock, perSourceRate: 1, perSourceBurst: 1, refusalRate: 10, concurrentCalls: () => 1, capacity, retransmission: (r) => live.has(r.topVia?.branch ?? '') });
    assert.deepEqual(g.admit('127.0.0.9', arriving('INVITE', { branch: 'z9hG4bK-ringing' })), { action: 'admit' });
    assert.deepEqual(g.admit('127.0.0.9', arriving('INVITE', { branch: 'z9hG4bK-new' })), { action: 'refuse', reason: 'node at its call capacity' });
  });

  it('lets a resent BYE of a live transaction through though its source is over its rate (the transaction answers it again)', () => {
    const clock = new FakeClock(0);
    const live = new Set(['z9hG4bK-bye']);
    const g = new AbuseGuard({ clock, perSourceRate: 1, perSourceBurst: 1, refusalRate: 10, concurrentCalls: () => 0, retransmission: (r) => live.has(r.topVia?.branch ?? '') });
    assert.equal(g.admit('127.0.0.9', arriving('OPTIONS')).action, 'admit', 'the source\'s one token');
    assert.deepEqual(g.admit('127.0.0.9', arriving('BYE', { branch: 'z9hG4bK-bye', toTag: 'gone' })), { action: 'admit' });
    assert.deepEqual(g.admit('127.0.0.9', arriving('BYE', { branch: 'z9hG4bK-other', toTag: 'gone' })), { action: 'refuse', reason: 'source over its rate' });
  });
});

describe('AbuseGuard: after the parse', () => {
  it('limits INVITEs by the global concurrency, with Retry-After', () => {
    let live = 5;
    const g = new AbuseGuard({ clock: new FakeClock(0), maxConcurrentCalls: 5, concurrentCalls: () => live, retryAfterSeconds: 9 });
    const req = (method: string): SipRequest => new SipRequest(method, 'sip:x@127.0.0.1', new Headers());
    const v = g.verdict(req('INVITE'), flow('127.0.0.9'));
    assert.deepEqual(v.action === 'reject' && [v.status, v.headers], [503, [['Retry-After', '9']]]);
    assert.equal(g.verdict(req('OPTIONS'), flow('127.0.0.9')).action, 'accept');
    live = 4;
    assert.equal(g.verdict(req('INVITE'), flow('127.0.0.9')).action, 'accept');
  });
});
