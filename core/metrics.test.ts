import assert from 'node:assert/strict';
import { cellCounter, metricsRegistry, sampledGauge, type Sample } from './metrics.js';

/** The registry's text for one metric family (its HELP/TYPE lines left out). */
async function seriesOf(name: string): Promise<string[]> {
  const text = await metricsRegistry.getSingleMetricAsString(name);
  return text.split('\n').filter((l) => l.startsWith(name));
}

describe('core metrics helpers', () => {
  // The registry is the process's: other tests scrape it.
  after(() => {
    metricsRegistry.removeSingleMetric('vap_test_cells_total');
    metricsRegistry.removeSingleMetric('vap_test_sampled');
  });

  it('cell counters: a held cell is incremented, and the value shows at scrape time under its labels', async () => {
    const counter = cellCounter('test_cells_total', 'cells for the unit test', ['method', 'status']);
    const ok = counter.cell('INVITE', '200');
    assert.equal(counter.cell('INVITE', '200'), ok, 'the same cell for the same labels');
    ok.value++;
    ok.value++;
    counter.cell('BYE', '481').value++;
    assert.deepEqual(await seriesOf('vap_test_cells_total'), ['vap_test_cells_total{method="INVITE",status="200"} 2', 'vap_test_cells_total{method="BYE",status="481"} 1']);
    ok.value++;
    assert.match((await seriesOf('vap_test_cells_total'))[0] ?? '', / 3$/);
    assert.equal(cellCounter('test_cells_total', 'again', ['method', 'status']), counter, 'registered once');
  });

  it('sampled gauges: read at scrape time, same labels added up, a label set no longer sampled disappears', async () => {
    let samples: Sample[] = [[{ tenant: 'a' }, 1], [{ tenant: 'a' }, 1], [{ tenant: 'b' }, 1]];
    sampledGauge('test_sampled', 'sampled for the unit test', ['tenant'], () => samples);
    assert.deepEqual(await seriesOf('vap_test_sampled'), ['vap_test_sampled{tenant="a"} 2', 'vap_test_sampled{tenant="b"} 1']);
    samples = [[{ tenant: 'b' }, 4]];
    assert.deepEqual(await seriesOf('vap_test_sampled'), ['vap_test_sampled{tenant="b"} 4']);
  });
});
