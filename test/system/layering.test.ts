import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const depcruise = path.join(repoRoot, 'node_modules/.bin/depcruise');
const config = path.join(repoRoot, '.dependency-cruiser.cjs');

describe('layering check', function () {
  this.timeout(60_000);

  it('passes on the platform source', () => {
    const run = spawnSync(depcruise, ['--config', config, '--output-type', 'err', 'core', 'gateway', 'media', 'control-api', 'bin'], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stdout + run.stderr);
  });

  it('fails on a forbidden import (media -> gateway)', () => {
    const fixture = path.join(repoRoot, 'test/fixtures/layering');
    const run = spawnSync(depcruise, ['--config', config, '--output-type', 'err', 'media', 'core', 'gateway'], { cwd: fixture, encoding: 'utf8' });
    assert.notEqual(run.status, 0);
    assert.match(run.stdout + run.stderr, /media-not-gateway/);
    assert.doesNotMatch(run.stdout + run.stderr, /core\/kernel/);
  });
});
