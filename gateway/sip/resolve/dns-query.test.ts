import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import dnsPacket, { type Answer } from 'dns-packet';
import { ServiceQuery } from './dns-query.js';

const srvAnswer = (target: string, ttl: number): Answer => ({ type: 'SRV', name: '_sip._udp.q.test', ttl, class: 'IN', data: { target, port: 5060, priority: 10, weight: 10 } });

/** The UDP exchange of dns-query.ts against a hand-driven server on 127.0.0.1. */
describe('ServiceQuery (NAPTR/SRV over UDP with their TTLs)', function () {
  this.timeout(10_000);

  it('takes only the reply from the server asked with our ID and question (RFC 5452 sec. 9.1), and its TTL', async () => {
    const server = createSocket('udp4');
    const spoofer = createSocket('udp4');
    await Promise.all([server, spoofer].map((s) => new Promise<void>((r) => s.bind(0, '127.0.0.1', r))));
    server.on('message', (msg, from) => {
      const q = dnsPacket.decode(msg);
      const question = q.questions?.[0];
      assert.ok(question && q.id !== undefined);
      const reply = (id: number, name: string, target: string): Buffer =>
        dnsPacket.encode({ id, type: 'response', flags: 0, questions: [{ ...question, name }], answers: [srvAnswer(target, 42)] });
      // Right ID from another port, a wrong ID, another question: all ignored; then the real one.
      spoofer.send(reply(q.id as number, question.name, 'spoofed-port.test'), from.port, from.address);
      server.send(reply(((q.id as number) + 1) % 65536, question.name, 'wrong-id.test'), from.port, from.address);
      server.send(reply(q.id as number, 'other.test', 'wrong-question.test'), from.port, from.address);
      setTimeout(() => server.send(reply(q.id as number, question.name, 'real.test'), from.port, from.address), 50);
    });
    try {
      const query = new ServiceQuery({ servers: [`127.0.0.1:${server.address().port}`], timeoutMs: 1000, tries: 1 });
      const result = await query.query('SRV', '_sip._udp.q.test');
      assert.equal(result.kind, 'answer');
      if (result.kind !== 'answer') return;
      assert.equal(result.ttlSeconds, 42);
      assert.deepEqual(result.answers.map((a) => (a.type === 'SRV' ? a.data.target : '')), ['real.test']);
    } finally {
      server.close();
      spoofer.close();
    }
  });

  it('tries the next server after a timeout or SERVFAIL, and reports failed when none answers', async () => {
    const dead = createSocket('udp4');
    const failing = createSocket('udp4');
    await Promise.all([dead, failing].map((s) => new Promise<void>((r) => s.bind(0, '127.0.0.1', r))));
    let asked = 0;
    dead.on('message', () => asked++);
    failing.on('message', (msg, from) => {
      asked++;
      const q = dnsPacket.decode(msg);
      failing.send(dnsPacket.encode({ id: q.id as number, type: 'response', flags: 2, questions: q.questions ?? [] }), from.port, from.address); // rcode 2: SERVFAIL
    });
    try {
      const query = new ServiceQuery({ servers: [`127.0.0.1:${dead.address().port}`, `127.0.0.1:${failing.address().port}`], timeoutMs: 200, tries: 2 });
      assert.deepEqual(await query.query('NAPTR', 'q.test'), { kind: 'failed' });
      assert.equal(asked, 4, 'two rounds over both servers');
    } finally {
      dead.close();
      failing.close();
    }
  });
});
