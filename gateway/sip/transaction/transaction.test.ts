import assert from 'node:assert/strict';
import { FakeClock } from '../../../core/clock.js';
import { Headers, SipRequest, createResponse, isRequest, type SipMessage, type SipResponse } from '../message/index.js';
import {
  InviteClientTransaction,
  InviteServerTransaction,
  NonInviteClientTransaction,
  NonInviteServerTransaction,
  clientTransactionKey,
  createCancel,
  newBranch,
  serverTransactionKey,
  type ClientTransactionUser,
  type TransactionTransport,
} from './index.js';

const T1 = 500;

class RecordingTransport implements TransactionTransport {
  readonly sent: { at: number; msg: SipMessage }[] = [];
  failNext = false;
  constructor(
    readonly reliable: boolean,
    private readonly clock: FakeClock,
  ) {}
  send(msg: SipMessage): void {
    if (this.failNext) throw new Error('ICMP unreachable');
    this.sent.push({ at: this.clock.now(), msg });
  }
  /** Times at which requests of `method` (or responses with `status`) went out. */
  times(what: string | number): number[] {
    return this.sent
      .filter(({ msg }) => (isRequest(msg) ? msg.method === what : (msg as SipResponse).status === what))
      .map(({ at }) => at);
  }
}

function request(method: string, branch = 'z9hG4bKtest1'): SipRequest {
  return new SipRequest(
    method,
    'sip:bob@example.com',
    new Headers([
      ['Via', `SIP/2.0/UDP 192.0.2.1:5060;branch=${branch}`],
      ['Max-Forwards', '70'],
      ['Route', '<sip:proxy.example.com;lr>'],
      ['From', '<sip:alice@example.com>;tag=a1'],
      ['To', '<sip:bob@example.com>'],
      ['Call-ID', 'tx-test'],
      ['CSeq', `7 ${method}`],
    ]),
  );
}

function recorder(): ClientTransactionUser & { events: string[]; responses: SipResponse[] } {
  const events: string[] = [];
  const responses: SipResponse[] = [];
  return {
    events,
    responses,
    response: (r) => {
      responses.push(r);
      events.push(`response ${r.status}`);
    },
    timeout: () => events.push('timeout'),
    transportError: () => events.push('transport-error'),
    terminated: () => events.push('terminated'),
  };
}

describe('INVITE client transaction (RFC 3261 sec. 17.1.1, RFC 6026 sec. 7.2)', () => {
  let clock: FakeClock;
  beforeEach(() => (clock = new FakeClock(0)));

  it('retransmits with Timer A doubling from T1 and gives up at Timer B = 64*T1', () => {
    const net = new RecordingTransport(false, clock);
    const tu = recorder();
    const tx = new InviteClientTransaction(request('INVITE'), net, tu, { clock });
    tx.start();
    clock.advance(64 * T1);
    assert.deepEqual(net.times('INVITE'), [0, 500, 1500, 3500, 7500, 15500, 31500]);
    assert.deepEqual(tu.events, ['timeout', 'terminated']);
    assert.equal(tx.state, 'terminated');
  });

  it('sends nothing more on a reliable transport', () => {
    const net = new RecordingTransport(true, clock);
    const tx = new InviteClientTransaction(request('INVITE'), net, recorder(), { clock });
    tx.start();
    clock.advance(10_000);
    assert.deepEqual(net.times('INVITE'), [0]);
  });

  it('stops retransmitting on a provisional and ACKs a failure itself, absorbing repeats until Timer D', () => {
    const net = new RecordingTransport(false, clock);
    const tu = recorder();
    const invite = request('INVITE');
    const tx = new InviteClientTransaction(invite, net, tu, { clock });
    tx.start();
    clock.advance(100);
    tx.receiveResponse(createResponse(invite, 180, undefined, { toTag: 'b1' }));
    assert.equal(tx.state, 'proceeding');
    clock.advance(40_000);
    assert.deepEqual(net.times('INVITE'), [0], 'no retransmission in Proceeding, no Timer B');
    const busy = createResponse(invite, 486, undefined, { toTag: 'b1' });
    tx.receiveResponse(busy);
    assert.equal(tx.state, 'completed');
    tx.receiveResponse(busy);
    const acks = net.sent.filter(({ msg }) => isRequest(msg) && msg.method === 'ACK').map(({ msg }) => msg as SipRequest);
    assert.equal(acks.length, 2, 'each retransmitted final response is ACKed again');
    const ack = acks[0]!;
    assert.equal(ack.uri, invite.uri);
    assert.equal(ack.topVia.branch, invite.topVia.branch);
    assert.equal(ack.to.tag, 'b1');
    assert.deepEqual(ack.cseq, { seq: 7, method: 'ACK' });
    assert.deepEqual(ack.headers.getAll('route'), ['<sip:proxy.example.com;lr>']);
    assert.deepEqual(tu.events, ['response 180', 'response 486']);
    clock.advance(31_999);
    assert.equal(tx.state, 'completed');
    clock.advance(1);
    assert.equal(tx.state, 'terminated');
  });

  it('passes 2xx and its retransmissions to the TU in Accepted until Timer M', () => {
    const net = new RecordingTransport(false, clock);
    const tu = recorder();
    const invite = request('INVITE');
    const tx = new InviteClientTransaction(invite, net, tu, { clock });
    tx.start();
    const ok = createResponse(invite, 200, undefined, { toTag: 'b2' });
    tx.receiveResponse(ok);
    assert.equal(tx.state, 'accepted');
    clock.advance(1000);
    tx.receiveResponse(ok);
    assert.deepEqual(tu.events, ['response 200', 'response 200']);
    assert.deepEqual(net.times('ACK'), [], 'the ACK for 2xx belongs to the TU');
    clock.advance(64 * T1 - 1000);
    assert.equal(tx.state, 'terminated');
  });

  it('reports a transport error and terminates', () => {
    const net = new RecordingTransport(false, clock);
    net.failNext = true;
    const tu = recorder();
    new InviteClientTransaction(request('INVITE'), net, tu, { clock }).start();
    assert.deepEqual(tu.events, ['transport-error', 'terminated']);
  });
});

describe('non-INVITE client transaction (RFC 3261 sec. 17.1.2)', () => {
  let clock: FakeClock;
  beforeEach(() => (clock = new FakeClock(0)));

  it('retransmits with Timer E capped at T2 and times out with Timer F', () => {
    const net = new RecordingTransport(false, clock);
    const tu = recorder();
    new NonInviteClientTransaction(request('OPTIONS'), net, tu, { clock }).start();
    clock.advance(64 * T1);
    assert.deepEqual(net.times('OPTIONS'), [0, 500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500]);
    assert.deepEqual(tu.events, ['timeout', 'terminated']);
  });

  it('keeps retransmitting at T2 in Proceeding, then waits Timer K after the final response', () => {
    const net = new RecordingTransport(false, clock);
    const tu = recorder();
    const bye = request('BYE');
    const tx = new NonInviteClientTransaction(bye, net, tu, { clock });
    tx.start();
    clock.advance(600);
    tx.receiveResponse(createResponse(bye, 100));
    clock.advance(9000);
    assert.deepEqual(net.times('BYE'), [0, 500, 1500, 5500, 9500]);
    tx.receiveResponse(createResponse(bye, 200));
    tx.receiveResponse(createResponse(bye, 200));
    assert.deepEqual(tu.events, ['response 100', 'response 200']);
    clock.advance(4999);
    assert.equal(tx.state, 'completed');
    clock.advance(1);
    assert.equal(tx.state, 'terminated');
  });
});

describe('INVITE server transaction (RFC 3261 sec. 17.2.1, RFC 6026 sec. 7.1)', () => {
  let clock: FakeClock;
  beforeEach(() => (clock = new FakeClock(0)));

  it('sends 100 Trying when the TU is silent for 200 ms and repeats the last provisional', () => {
    const net = new RecordingTransport(false, clock);
    const invite = request('INVITE');
    const tx = new InviteServerTransaction(invite, net, {}, { clock });
    clock.advance(200);
    assert.deepEqual(net.times(100), [200]);
    tx.respond(createResponse(invite, 180, undefined, { toTag: 's1' }));
    tx.receiveRequest(invite);
    assert.deepEqual(net.times(180), [200, 200]);
  });

  it('does not send 100 when the TU answers in time', () => {
    const net = new RecordingTransport(false, clock);
    const invite = request('INVITE');
    const tx = new InviteServerTransaction(invite, net, {}, { clock });
    clock.advance(50);
    tx.respond(createResponse(invite, 180));
    clock.advance(1000);
    assert.deepEqual(net.times(100), []);
  });

  it('retransmits a failure with Timer G until the ACK, then absorbs ACKs until Timer I', () => {
    const net = new RecordingTransport(false, clock);
    const invite = request('INVITE');
    const ended: string[] = [];
    const tx = new InviteServerTransaction(invite, net, { terminated: () => ended.push('t') }, { clock });
    tx.respond(createResponse(invite, 486, undefined, { toTag: 's2' }));
    assert.equal(tx.state, 'completed');
    clock.advance(7600);
    assert.deepEqual(net.times(486), [0, 500, 1500, 3500, 7500]);
    tx.receiveRequest(invite);
    assert.equal(net.times(486).length, 6, 'an INVITE retransmission gets the final response again');
    const ack = new SipRequest('ACK', invite.uri, new Headers([...invite.headers.lines()].map(([, n, v]) => [n, v.replace('7 INVITE', '7 ACK')])));
    tx.receiveRequest(ack);
    assert.equal(tx.state, 'confirmed');
    clock.advance(20_000);
    assert.equal(net.times(486).length, 6, 'Timer G stopped');
    assert.equal(tx.state, 'terminated');
    assert.deepEqual(ended, ['t']);
  });

  it('gives up with Timer H when no ACK comes', () => {
    const net = new RecordingTransport(true, clock);
    const invite = request('INVITE');
    const events: string[] = [];
    const tx = new InviteServerTransaction(invite, net, { timeout: () => events.push('timeout') }, { clock });
    tx.respond(createResponse(invite, 404));
    clock.advance(64 * T1);
    assert.deepEqual(net.times(404), [0], 'no Timer G on a reliable transport');
    assert.deepEqual(events, ['timeout']);
    assert.equal(tx.state, 'terminated');
  });

  it('moves to Accepted on 2xx: absorbs INVITE retransmissions, sends TU 2xx retransmissions, hands the ACK to the TU', () => {
    const net = new RecordingTransport(false, clock);
    const invite = request('INVITE');
    const acks: SipRequest[] = [];
    const tx = new InviteServerTransaction(invite, net, { ack: (a) => acks.push(a) }, { clock });
    const ok = createResponse(invite, 200, undefined, { toTag: 's3' });
    tx.respond(ok);
    assert.equal(tx.state, 'accepted');
    tx.receiveRequest(invite);
    clock.advance(500);
    tx.respond(ok);
    assert.deepEqual(net.times(200), [0, 500], 'only the TU retransmits 2xx');
    const ack = new SipRequest('ACK', invite.uri, invite.headers);
    tx.receiveRequest(ack);
    assert.equal(acks.length, 1);
    clock.advance(64 * T1);
    assert.equal(tx.state, 'terminated');
  });
});

describe('non-INVITE server transaction (RFC 3261 sec. 17.2.2)', () => {
  it('absorbs retransmissions while Trying, repeats the final response, and ends after Timer J', () => {
    const clock = new FakeClock(0);
    const net = new RecordingTransport(false, clock);
    const options = request('OPTIONS');
    const tx = new NonInviteServerTransaction(options, net, {}, { clock });
    tx.receiveRequest(options);
    assert.equal(net.sent.length, 0);
    tx.respond(createResponse(options, 200));
    tx.receiveRequest(options);
    assert.deepEqual(net.times(200), [0, 0]);
    clock.advance(64 * T1 - 1);
    assert.equal(tx.state, 'completed');
    clock.advance(1);
    assert.equal(tx.state, 'terminated');
    const reliable = new NonInviteServerTransaction(options, new RecordingTransport(true, clock), {}, { clock });
    reliable.respond(createResponse(options, 200));
    clock.advance(0);
    assert.equal(reliable.state, 'terminated', 'Timer J is zero on reliable transports');
  });

  it('over a datagram transport keeps the final response as sent and repeats those octets', () => {
    const clock = new FakeClock(0);
    const wires: Buffer[] = [];
    const net: TransactionTransport = {
      reliable: false,
      send: () => assert.fail('the final response goes out serialized'),
      sendWire: (w) => wires.push(w),
    };
    const bye = request('BYE');
    const tx = new NonInviteServerTransaction(bye, net, {}, { clock });
    tx.respond(createResponse(bye, 200));
    assert.equal(tx.request, undefined, 'the request is not kept for Timer J');
    tx.receiveRequest(bye);
    assert.equal(wires.length, 2);
    assert.equal(wires[1], wires[0]);
    assert.match(wires[0]?.toString('utf8') ?? '', /^SIP\/2\.0 200 OK\r\n[\s\S]*CSeq: 7 BYE\r\n/);
    clock.advance(64 * T1);
    assert.equal(tx.state, 'terminated');
  });
});

describe('transaction matching (RFC 3261 sec. 17.1.3, 17.2.3)', () => {
  it('matches responses by branch and CSeq method, and ACK to its INVITE', () => {
    const invite = request('INVITE', newBranch());
    assert.equal(clientTransactionKey(createResponse(invite, 180)), clientTransactionKey(invite));
    const cancel = createCancel(invite);
    assert.equal(cancel.topVia.branch, invite.topVia.branch);
    assert.notEqual(clientTransactionKey(cancel), clientTransactionKey(invite), 'CANCEL is its own transaction');
    const ack = new SipRequest('ACK', invite.uri, invite.headers);
    assert.equal(serverTransactionKey(ack), serverTransactionKey(invite));
    assert.notEqual(serverTransactionKey(cancel), serverTransactionKey(invite));
  });

  it('matches RFC 2543 requests (no magic cookie) on Request-URI, From tag, Call-ID, CSeq and top Via', () => {
    const invite = request('INVITE', 'rfc2543-branch');
    const key = serverTransactionKey(invite);
    assert.ok(key);
    assert.equal(serverTransactionKey(request('INVITE', 'rfc2543-branch')), key, 'a retransmission');
    assert.equal(serverTransactionKey(new SipRequest('ACK', invite.uri, invite.headers)), key);
    assert.notEqual(serverTransactionKey(request('INVITE', 'another-2543-branch')), key);
    const next = request('INVITE', 'rfc2543-branch');
    next.headers.set('cseq', '8 INVITE');
    assert.notEqual(serverTransactionKey(next), key);
  });
});
