import assert from 'node:assert/strict';
import { FakeClock } from '../../core/clock.js';
import { Headers } from '../sip/message/headers.js';
import { SipRequest } from '../sip/message/message.js';
import type { Flow } from '../sip/transport/types.js';
import { AbuseGuard } from './abuse-guard.js';

const flow = (address: string): Flow => ({
  transport: 'UDP', reliable: false, secure: false, open: true,
  local: { address: '127.0.0.1', port: 5060 }, remote: { address, port: 5060 },
  send: () => undefined,
});
const req = (method: string, ua?: string): SipRequest => new SipRequest(method, 'sip:x@127.0.0.1', new Headers(ua ? [['User-Agent', ua]] : []));

describe('AbuseGuard', () => {
  it('refills a source bucket at its rate and answers 503 with Retry-After when empty', () => {
    const clock = new FakeClock(0);
    const g = new AbuseGuard({ clock, perSourceRate: 2, perSourceBurst: 3, concurrentCalls: () => 0, retryAfterSeconds: 9 });
    for (let i = 0; i < 3; i++) assert.equal(g.verdict(req('OPTIONS'), flow('127.0.0.9')).action, 'accept');
    const v = g.verdict(req('OPTIONS'), flow('127.0.0.9'));
    assert.deepEqual(v.action === 'reject' && [v.status, v.headers], [503, [['Retry-After', '9']]]);
    assert.equal(g.verdict(req('OPTIONS'), flow('127.0.0.8')).action, 'accept', 'other sources are not affected');
    clock.advance(500);
    assert.equal(g.verdict(req('OPTIONS'), flow('127.0.0.9')).action, 'accept');
  });

  it('limits INVITEs only by the global concurrency', () => {
    let live = 5;
    const g = new AbuseGuard({ clock: new FakeClock(0), maxConcurrentCalls: 5, concurrentCalls: () => live });
    assert.equal(g.verdict(req('INVITE'), flow('127.0.0.9')).action, 'reject');
    assert.equal(g.verdict(req('OPTIONS'), flow('127.0.0.9')).action, 'accept');
    live = 4;
    assert.equal(g.verdict(req('INVITE'), flow('127.0.0.9')).action, 'accept');
  });

  it('drops scanner User-Agents, case-insensitively', () => {
    const g = new AbuseGuard({ clock: new FakeClock(0), concurrentCalls: () => 0 });
    for (const ua of ['friendly-scanner', 'SIPVicious 0.3.4', 'sipcli/v1.8', 'VaxSIPUserAgent/3.1']) {
      assert.equal(g.verdict(req('OPTIONS', ua), flow('127.0.0.9')).action, 'drop', ua);
    }
    assert.equal(g.verdict(req('OPTIONS', 'Asterisk PBX 20'), flow('127.0.0.9')).action, 'accept');
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
    assert.equal(g.verdict(req('OPTIONS'), flow('127.0.0.9')).action, 'drop');
    clock.advance(60_001);
    assert.equal(g.verdict(req('OPTIONS'), flow('127.0.0.9')).action, 'accept');
  });
});
