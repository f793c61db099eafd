import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const depcruise = path.join(repoRoot, 'node_modules/.bin/depcruise');
const config = path.join(repoRoot, '.dependency-cruiser.cjs');
const layering = path.join(repoRoot, 'scripts/layering.mjs');

describe('layering check', function () {
  this.timeout(60_000);

  it('passes on the platform source: no rule broken, no circle between control-api folders', () => {
    const run = spawnSync(process.execPath, [layering], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /no layering violations, no folder circles/);
  });

  it("fails on control-api's floors: an import up a floor, a module on no floor, a circle of folders without a module cycle", () => {
    const run = spawnSync(process.execPath, [layering, path.join(repoRoot, 'test/fixtures/floor-layering')], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(run.status, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /platform-floor: control-api\/platform\/store\/database\.ts -> control-api\/features\/calls\/calls\.ts/);
    assert.match(run.stdout, /control-api-on-floors: control-api\/loose\.ts -> control-api\/model\/domain\/tenant\.ts/);
    assert.match(run.stdout, /folder circle: control-api\/features\/calls, control-api\/features\/insights, control-api\/features\/reports\n/);
    assert.match(run.stdout, /control-api\/features\/reports\/report\.ts -> control-api\/features\/calls\/call-types\.ts/);
    assert.doesNotMatch(run.stdout, /no-circular/);
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
    assert.match(out, /no-test-helpers-in-production-folders: control-api\/features\/campaigns\/test-support\.ts → core\/kernel\.ts/);
    assert.match(out, /no-imports-of-test-helpers-in-production-folders: control-api\/features\/campaigns\/scheduler\.ts → control-api\/features\/campaigns\/test-support\.ts/);
    assert.match(out, /no-orphan-test-helpers-in-production-folders: gateway\/sip\/fixtures\/orphan-message\.ts/);
    assert.match(out, /no-dev-dependencies-in-production: media\/dev-only\.ts → \S*node_modules\/sinon\//);
    assert.match(out, /4 dependency violations/);
  });
});
