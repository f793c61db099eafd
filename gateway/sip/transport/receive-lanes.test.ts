import assert from 'node:assert/strict';
import { ReceiveGate, type AdmissionDecision, type AdmissionPolicy } from './receive-gate.js';
import type { Flow } from './types.js';

const flow = (address: string, port = 5062): Flow => ({
  transport: 'UDP', reliable: false, secure: false, open: true,
  local: { address: '127.0.0.1', port: 5060 }, remote: { address, port },
  send: () => undefined,
});

/** A datagram as the wire has it; `name` goes into the Call-ID so deliveries can be told apart. */
function datagram(method: string, name: string, opts: { toTag?: string; response?: boolean } = {}): Buffer {
  const start = opts.response ? 'SIP/2.0 200 OK' : `${method} sip:+914440000001@127.0.0.1 SIP/2.0`;
  return Buffer.from(
    `${start}\r\nVia: SIP/2.0/UDP 127.0.0.9:5062;branch=z9hG4bK-${name};rport\r\nFrom: <sip:a@127.0.0.9>;tag=f\r\n` +
      `To: <sip:+914440000001@127.0.0.1>${opts.toTag ? `;tag=${opts.toTag}` : ''}\r\nCall-ID: ${name}\r\nCSeq: 1 ${method}\r\nContent-Length: 0\r\n\r\n`,
    'latin1',
  );
}

const callIdOf = (buf: Buffer): string => /\r\nCall-ID: ([^\r]+)/.exec(buf.toString('latin1'))?.[1] ?? '?';

/** Admits everything; an INVITE without To tag is a new call, as AbuseGuard decides. */
const admitAll: AdmissionPolicy = {
  admit: (_source, req): AdmissionDecision => (req.method === 'INVITE' && req.toTag === undefined ? { action: 'admit', newCall: true } : { action: 'admit' }),
};

const rounds = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('Receive lanes: what is read first under a flood of new INVITEs', () => {
  it('hands on responses, ACK, in-dialog requests and OPTIONS before the new INVITEs queued ahead of them', async () => {
    const seen: string[] = [];
    const gate = new ReceiveGate({ policy: admitAll, retryAfterSeconds: 5, server: 't', turnBudget: 4 });
    const intake = gate.intake((buf) => seen.push(callIdOf(buf)));
    const flood = flow('127.0.0.9');
    for (let i = 0; i < 40; i++) intake.receive(datagram('INVITE', `flood-${i}`), flood, () => undefined);
    intake.receive(datagram('BYE', 'bye-of-a-call', { toTag: 'up' }), flood, () => undefined);
    intake.receive(datagram('OPTIONS', 'probe'), flow('127.0.0.2'), () => undefined);
    intake.receive(datagram('INVITE', 'response-to-ours', { response: true }), flow('127.0.0.30'), () => undefined);
    intake.receive(datagram('ACK', 'ack-of-a-call', { toTag: 'up' }), flood, () => undefined);
    assert.equal(gate.waitingCalls, 40, 'new INVITEs count against capacity while they wait');
    await rounds(1);
    assert.deepEqual(seen, ['bye-of-a-call', 'probe', 'response-to-ours', 'ack-of-a-call', 'flood-0', 'flood-1', 'flood-2', 'flood-3']);
    assert.equal(gate.waitingCalls, 36);
    // Something arriving now still goes ahead of the 36 INVITEs left.
    intake.receive(datagram('OPTIONS', 'late-probe'), flow('127.0.0.2'), () => undefined);
    await rounds(1);
    assert.equal(seen[8], 'late-probe');
    await rounds(20);
    assert.deepEqual(seen.filter((s) => s.startsWith('flood')), Array.from({ length: 40 }, (_, i) => `flood-${i}`), 'INVITEs in their order');
    assert.equal(gate.waitingCalls, 0);
  });

  it('keeps a CANCEL behind the INVITE it cancels', async () => {
    const seen: string[] = [];
    const gate = new ReceiveGate({ policy: admitAll, retryAfterSeconds: 5, server: 't', turnBudget: 1 });
    const intake = gate.intake((buf) => seen.push(`${buf.toString('latin1').split(' ')[0]} ${callIdOf(buf)}`));
    intake.receive(datagram('INVITE', 'a'), flow('127.0.0.9'), () => undefined);
    intake.receive(datagram('CANCEL', 'a'), flow('127.0.0.9'), () => undefined);
    await rounds(3);
    assert.deepEqual(seen, ['INVITE a', 'CANCEL a']);
  });

  it('answers 503 with Retry-After, instead of parsing it, a new INVITE that waited longer than maxWaitMs', async () => {
    let now = 0;
    const seen: string[] = [];
    const replies: string[] = [];
    const gate = new ReceiveGate({ policy: admitAll, retryAfterSeconds: 7, server: 't', maxWaitMs: 1000, now: () => now });
    const intake = gate.intake((buf) => seen.push(callIdOf(buf)));
    const reply = (wire: Buffer): void => void replies.push(wire.toString('latin1'));
    intake.receive(datagram('INVITE', 'stale'), flow('127.0.0.9'), reply);
    intake.receive(datagram('OPTIONS', 'not-timed'), flow('127.0.0.9'), reply);
    now = 1001;
    intake.receive(datagram('INVITE', 'fresh'), flow('127.0.0.9'), reply);
    await rounds(2);
    assert.deepEqual(seen, ['not-timed', 'fresh']);
    assert.equal(replies.length, 1);
    assert.match(replies[0] as string, /^SIP\/2\.0 503 Service Unavailable\r\n[\s\S]*Call-ID: stale\r\n[\s\S]*Retry-After: 7\r\n/);
    assert.equal(gate.waitingCalls, 0);
  });

  it('forgets what waits when stopped, and the capacity count with it', () => {
    const gate = new ReceiveGate({ policy: admitAll, retryAfterSeconds: 5, server: 't' });
    const intake = gate.intake(() => assert.fail('nothing is delivered after stop'));
    for (let i = 0; i < 5; i++) intake.receive(datagram('INVITE', `x${i}`), flow('127.0.0.9'), () => undefined);
    intake.stop();
    assert.equal(gate.waitingCalls, 0);
    assert.deepEqual(gate.waiting, { priority: 0, calls: 0 });
  });
});
