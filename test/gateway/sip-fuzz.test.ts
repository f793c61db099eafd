import assert from 'node:assert/strict';
import { linesAt, startFuzzGateway, type FuzzGateway } from '../fuzz/fuzz-gateway.js';
import { runSipFuzz } from '../fuzz/sip-fuzz-run.js';

/**
 * A fixed slice of bench/sip-fuzz.ts (seed 4475, 2,000 cases over UDP and TCP) against the real
 * gateway: malformed input is answered 4xx (501/505 where the RFC requires them), never 5xx, the
 * process throws nothing uncaught, liveness probes from another source are all answered and
 * nothing is logged at error level. On the code before header validation this slice got 500s
 * and "inbound step failed" errors (a malformed To/From/Contact URI thrown inside routing).
 */
describe('gateway: seeded SIP fuzz slice (bench/sip-fuzz.ts)', function () {
  this.timeout(60_000);
  let gw: FuzzGateway;

  before(async () => {
    gw = await startFuzzGateway();
  });
  after(async () => {
    await gw?.fx.close();
  });

  it('answers 2,000 mutated requests without a 5xx, a crash, an error log or a missed probe', async () => {
    const stats = await runSipFuzz({
      seed: 4475,
      cases: 2000,
      udpPort: gw.fx.gateway.ports.UDP as number,
      tcpPort: gw.fx.gateway.ports.TCP as number,
      sources: gw.sources,
      probeSource: gw.probeSource,
      did: gw.did,
      probeEvery: 100,
    });
    assert.equal(stats.serverErrors, 0, JSON.stringify(stats.fiveXx.slice(0, 5)));
    assert.deepEqual(stats.crashSamples, []);
    assert.equal(stats.uncaughtExceptions + stats.unhandledRejections, 0);
    assert.equal(stats.probesUnanswered, 0);
    assert.equal(stats.probesAnswered, stats.probesSent);
    assert.deepEqual(linesAt(gw.log, 'error', 'fatal').map((l) => l.msg), []);
    // It did reach the gateway's depths: most cases were answered, some became calls.
    assert.ok(stats.responses > stats.sent / 2, `${stats.responses} answers to ${stats.sent} cases`);
    assert.ok((stats.byStatus.get(200) ?? 0) > stats.probesSent, 'some INVITEs became calls');
    assert.ok((stats.byStatus.get(400) ?? 0) > 100, 'malformed requests were answered 400');
  });
});
