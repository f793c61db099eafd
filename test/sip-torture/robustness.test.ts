import assert from 'node:assert/strict';
import {
  SipParseError,
  StreamFramer,
  createErrorResponse,
  isRequest,
  parseDatagram,
  serialize,
  type SipMessage,
} from '../../gateway/sip/message/index.js';
import { loadTortureMessage, tortureMessageNames } from './load-fixture.js';

/** Deterministic PRNG (mulberry32) so a failure can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SPECIALS = [':', ';', ',', '"', '<', '>', '\\', '%', '=', '@', '[', ']', ' ', '\t', '\r\n', '\r\n ', '\0', '\u00ff', '\r\n\r\n'].map((s) =>
  Buffer.from(s, 'latin1'),
);

function mutate(src: Buffer, rnd: () => number): Buffer {
  const pick = (n: number): number => Math.floor(rnd() * n);
  let buf = Buffer.from(src);
  const edits = 1 + pick(4);
  for (let e = 0; e < edits; e++) {
    const at = pick(buf.length + 1);
    switch (pick(5)) {
      case 0: // flip a byte
        if (buf.length) buf[Math.min(at, buf.length - 1)] = pick(256);
        break;
      case 1: // insert a syntactically loaded character
        buf = Buffer.concat([buf.subarray(0, at), SPECIALS[pick(SPECIALS.length)]!, buf.subarray(at)]);
        break;
      case 2: // truncate
        buf = buf.subarray(0, at);
        break;
      case 3: // delete a span
        buf = Buffer.concat([buf.subarray(0, at), buf.subarray(at + 1 + pick(20))]);
        break;
      default: // duplicate a span
        buf = Buffer.concat([buf.subarray(0, at), buf.subarray(at, at + 1 + pick(40)), buf.subarray(at)]);
    }
  }
  return buf;
}

/** Touches every lazily parsed view, which must also fail only with SipParseError. */
function exercise(m: SipMessage): void {
  const views: (() => unknown)[] = [
    () => m.contacts.map((c) => c.uri),
    () => m.routes.map((r) => r.uri),
    () => m.recordRoutes,
    () => m.from.uri,
    () => m.to.uri,
    () => (isRequest(m) ? m.requestUri : undefined),
    () => parseDatagram(serialize(m)),
  ];
  for (const view of views) {
    try {
      view();
    } catch (e) {
      if (!(e instanceof SipParseError)) throw e;
    }
  }
}

function survive(buf: Buffer): void {
  try {
    exercise(parseDatagram(buf));
  } catch (e) {
    if (!(e instanceof SipParseError)) throw e;
    createErrorResponse(e);
  }
}

describe('parser robustness: malformed input never crashes or wedges', () => {
  const fixtures = tortureMessageNames().map((n) => loadTortureMessage(n));

  it('random mutations and truncations of every torture message throw nothing but SipParseError', () => {
    const rnd = prng(4475);
    const started = Date.now();
    let cases = 0;
    for (const fixture of fixtures) {
      for (let i = 0; i < 200; i++) {
        const buf = mutate(fixture, rnd);
        try {
          survive(buf);
        } catch (e) {
          assert.fail(`non-parse error on a mutation of ${fixture.subarray(0, 40).toString()}: ${String(e)}\n${buf.toString('latin1')}`);
        }
        cases++;
      }
    }
    assert.equal(cases, fixtures.length * 200);
    assert.ok(Date.now() - started < 10_000, 'finishes quickly');
  });

  it('every prefix of every message is handled', () => {
    for (const fixture of fixtures) {
      for (let len = 0; len <= fixture.length; len += 5) survive(fixture.subarray(0, len));
    }
  });

  it('the stream framer survives mutated streams, failing only with SipParseError', () => {
    const rnd = prng(5626);
    for (let i = 0; i < 400; i++) {
      const framer = new StreamFramer({ maxHeaderBytes: 8192, maxBodyBytes: 4096 });
      const stream = Buffer.concat([0, 1, 2].map(() => mutate(fixtures[Math.floor(rnd() * fixtures.length)]!, rnd)));
      try {
        for (let at = 0; at < stream.length; at += 1 + Math.floor(rnd() * 200)) {
          for (const item of framer.push(stream.subarray(at, at + 1 + Math.floor(rnd() * 200)))) {
            if (item.kind === 'message') exercise(item.message);
          }
        }
      } catch (e) {
        if (!(e instanceof SipParseError)) throw e;
        assert.ok(e.fatal);
      }
    }
  });

  it('adversarial shapes stay linear in time', () => {
    const head = 'OPTIONS sip:a@example.com SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:b@e>;tag=1\r\nTo: <sip:a@e>\r\nCall-ID: x\r\nCSeq: 1 OPTIONS\r\n';
    const shapes = [
      `Contact: ${'<'.repeat(100_000)}`,
      `Contact: ${'"\\'.repeat(50_000)}`,
      `Route: ${',<sip:a@b>'.repeat(20_000)}`,
      `Via: SIP/2.0/UDP h${';a'.repeat(30_000)}`,
      `To: <sip:a@b>${';p=q'.repeat(30_000)}`,
      `X-Fold: a${'\r\n b'.repeat(30_000)}`,
      `Subject: ${'%'.repeat(100_000)}`,
      `X: y${'\r\nno colon here'.repeat(30_000)}`,
      `Via: ${'SIP/2.0/UDP h;branch=z9hG4bKa,'.repeat(10_000)}SIP/2.0/UDP h`,
    ];
    for (const shape of shapes) {
      const buf = Buffer.from(`${head}${shape}\r\nContent-Length: 0\r\n\r\n`, 'latin1');
      const started = process.hrtime.bigint();
      survive(buf);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      assert.ok(ms < 1500, `${shape.slice(0, 20)}... took ${ms.toFixed(0)} ms`);
    }
  });
});
