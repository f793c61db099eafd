import assert from 'node:assert/strict';
import { runFuzz } from '../helpers/http-fuzz/fuzz-run.js';
import { startFuzzTarget, type FuzzTarget } from '../helpers/http-fuzz/fuzz-target.js';
import { testPostgres } from '../helpers/postgres-cluster.js';

/**
 * A small fixed-seed slice of bench/http-fuzz.ts (issue 12): every operation of the served OpenAPI
 * documents and SendMessage, valid and mutated (U+0000 and lone surrogates in bodies, keys, paths
 * and queries; deep nesting; invalid JSON; wrong types and content types; oversized bodies), against
 * the real platform on PostgreSQL. No request may get a 5xx or go unanswered.
 */
describe('HTTP fuzz slice (fixed seed)', function () {
  this.timeout(180_000);
  let target: FuzzTarget;

  before(async function () {
    this.timeout(120_000);
    target = await startFuzzTarget({ databaseUrl: await (await testPostgres()).createDatabase() });
  });
  after(async () => target?.stop());

  it('answers 800 generated requests over every operation without a 5xx', async () => {
    const report = await runFuzz(target, { seed: 12, requests: 800, concurrency: 4, bodyLimitBytes: 1024 * 1024 });
    assert.equal(report.requests, 800);
    assert.equal(report.operations.length, report.perOperation.size, 'every operation was exercised');
    assert.ok(report.operations.length >= 80, `operations: ${report.operations.length}`);
    assert.deepEqual(report.failures, []);
    assert.deepEqual(target.errorLogs, [], 'nothing was logged as a server fault');
    assert.ok((report.histogram.get('400') ?? 0) > 0, `mutations reached the validators: ${JSON.stringify([...report.histogram])}`);
  });

  // The mix above draws oversized bodies at random, and the draws follow the order answers come
  // back in (the fuzz learns ids from them): once, on a loaded machine, none of the 800 got its
  // 413. The limit is checked here on its own, both ways a body can be sent.
  it('answers a body over the limit 413, whether its length is declared or chunked', async () => {
    const limit = 1024 * 1024;
    const url = `http://127.0.0.1:${target.controlPort}/v1/tenants/${target.clientId}/recipes`;
    const headers = { Authorization: `Bearer ${target.tokens.management}`, 'Content-Type': 'application/json' };
    const body = Buffer.alloc(limit + 1024, 0x20);
    body.write('{"name":"');
    const declared = await fetch(url, { method: 'POST', headers, body });
    assert.equal(declared.status, 413, await declared.text());
    const chunks = async function* (): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < body.length; at += 64 * 1024) yield body.subarray(at, at + 64 * 1024);
    };
    const chunked = await fetch(url, { method: 'POST', headers, body: chunks(), duplex: 'half' } as RequestInit);
    assert.equal(chunked.status, 413, await chunked.text());
  });
});
