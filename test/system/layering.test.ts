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

  it('fails on test helpers in production folders and on production code needing a devDependency', () => {
    const fixture = path.join(repoRoot, 'test/fixtures/test-helper-layering');
    const run = spawnSync(depcruise, ['--config', config, '--output-type', 'err', 'core', 'gateway', 'media', 'control-api'], { cwd: fixture, encoding: 'utf8' });
    assert.notEqual(run.status, 0);
    const out = run.stdout + run.stderr;
    // One violation per way a helper can sit in production: it imports, it is imported, it is an orphan.
    assert.match(out, /no-test-helpers-in-production-folders: control-api\/campaigns\/test-support\.ts → core\/kernel\.ts/);
    assert.match(out, /no-imports-of-test-helpers-in-production-folders: control-api\/campaigns\/scheduler\.ts → control-api\/campaigns\/test-support\.ts/);
    assert.match(out, /no-orphan-test-helpers-in-production-folders: gateway\/sip\/fixtures\/orphan-message\.ts/);
    assert.match(out, /no-dev-dependencies-in-production: media\/dev-only\.ts → \S*node_modules\/sinon\//);
    assert.match(out, /4 dependency violations/);
  });
});
