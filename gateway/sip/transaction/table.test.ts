import assert from 'node:assert/strict';
import { FakeClock } from '../../../core/clock.js';
import { Headers, SipRequest, createResponse, type SipMessage } from '../message/index.js';
import { InviteServerTransaction, TransactionTable, createCancel, type TransactionTransport } from './index.js';

const transport = (sent: SipMessage[] = []): TransactionTransport => ({ reliable: false, send: (m) => void sent.push(m) });

function request(method: string, branch: string, cseq = `1 ${method}`): SipRequest {
  return new SipRequest(
    method,
    'sip:bob@example.com',
    new Headers([
      ['Via', `SIP/2.0/UDP 192.0.2.1:5060;branch=${branch}`],
      ['From', '<sip:alice@example.com>;tag=a1'],
      ['To', '<sip:bob@example.com>'],
      ['Call-ID', 'table-test'],
      ['CSeq', cseq],
    ]),
  );
}

describe('transaction table (RFC 3261 sec. 17.1.3, 17.2.3, 9.2)', () => {
  it('routes responses to the client transaction and forgets it when it ends', () => {
    const clock = new FakeClock(0);
    const table = new TransactionTable({ clock });
    const got: number[] = [];
    const options = request('OPTIONS', 'z9hG4bKc1');
    table.startClient(options, transport(), { response: (r) => got.push(r.status), timeout: () => {}, transportError: () => {} });
    assert.equal(table.receiveResponse(createResponse(options, 200)), true);
    assert.equal(table.receiveResponse(createResponse(request('OPTIONS', 'z9hG4bKother'), 200)), false);
    assert.deepEqual(got, [200]);
    clock.advance(5000);
    assert.deepEqual(table.size, { clients: 0, servers: 0 });
  });

  it('absorbs request retransmissions and the ACK for a failure, passes on the ACK for a 2xx', () => {
    const clock = new FakeClock(0);
    const table = new TransactionTable({ clock });
    const sent: SipMessage[] = [];
    const invite = request('INVITE', 'z9hG4bKs1');
    const first = table.receiveRequest(invite, transport(sent), {});
    assert.equal(first.kind, 'new');
    assert.equal(table.receiveRequest(invite, transport(sent), {}).kind, 'absorbed');
    const tx = first.kind === 'new' ? first.transaction : undefined;
    assert.ok(tx instanceof InviteServerTransaction);
    tx.respond(createResponse(invite, 486, undefined, { toTag: 'x' }));
    const ackForFailure = request('ACK', 'z9hG4bKs1', '1 ACK');
    assert.equal(table.receiveRequest(ackForFailure, transport(sent), {}).kind, 'absorbed');
    assert.equal(tx.state, 'confirmed');
    const ackFor2xx = request('ACK', 'z9hG4bKnew-branch', '1 ACK');
    assert.equal(table.receiveRequest(ackFor2xx, transport(sent), {}).kind, 'ack');
    clock.advance(10_000);
    assert.deepEqual(table.size, { clients: 0, servers: 0 });
  });

  it('pairs a CANCEL with the INVITE transaction it cancels', () => {
    const table = new TransactionTable({ clock: new FakeClock(0) });
    const invite = request('INVITE', 'z9hG4bKs2');
    const inv = table.receiveRequest(invite, transport(), {});
    const cancel = table.receiveRequest(createCancel(invite), transport(), {});
    assert.ok(inv.kind === 'new' && cancel.kind === 'new');
    assert.equal(cancel.cancels, inv.transaction);
    assert.notEqual(cancel.transaction, inv.transaction);
  });

  it('absorbs retransmissions of an RFC 2543 INVITE (no branch) and pairs its CANCEL (sec. 17.2.3, 9.2)', () => {
    const clock = new FakeClock(0);
    const table = new TransactionTable({ clock });
    const rfc2543 = (method: string, cseq = `1 ${method}`): SipRequest => {
      const r = request(method, 'unused', cseq);
      r.headers.set('via', 'SIP/2.0/UDP 192.0.2.1:5060');
      r.headers.set('from', '<sip:alice@example.com>');
      return r;
    };
    const first = table.receiveRequest(rfc2543('INVITE'), transport(), {});
    assert.equal(first.kind, 'new');
    assert.equal(table.receiveRequest(rfc2543('INVITE'), transport(), {}).kind, 'absorbed', 'not a second call');
    const cancel = table.receiveRequest(rfc2543('CANCEL', '1 CANCEL'), transport(), {});
    assert.ok(first.kind === 'new' && cancel.kind === 'new');
    assert.equal(cancel.cancels, first.transaction);
    first.transaction.respond(createResponse(first.transaction.request as SipRequest, 487, undefined, { toTag: 'x' }));
    assert.equal(table.receiveRequest(rfc2543('ACK', '1 ACK'), transport(), {}).kind, 'absorbed');
    assert.equal(table.receiveRequest(rfc2543('INVITE', '2 INVITE'), transport(), {}).kind, 'new');
  });
});
