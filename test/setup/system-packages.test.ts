import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const here = import.meta.dirname;
const script = path.join(here, 'system-packages.sh');

/** What the pretest step would install, without installing: `--print-missing`. */
function missingPackages(env: Record<string, string>): { status: number | null; packages: string[]; stderr: string } {
  const run = spawnSync('bash', [script, '--print-missing'], { env: { ...process.env, ...env }, encoding: 'utf8' });
  return { status: run.status, packages: run.stdout.trim().split(/\s+/).filter(Boolean), stderr: run.stderr };
}

describe('test/setup/system-packages.sh (the pretest step)', () => {
  let scratch: string;
  beforeEach(() => {
    scratch = mkdtempSync(path.join(tmpdir(), 'vap-syspkg-'));
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('is not fooled by a package shim on the PATH: a fake protoc first on the PATH still leaves protobuf-compiler to install', () => {
    // npm puts node_modules/.bin first on the PATH; @protobuf-ts/protoc has a `protoc` there.
    const fakeBin = path.join(scratch, 'bin');
    spawnSync('mkdir', ['-p', fakeBin]);
    for (const tool of ['protoc', 'sipp', 'sox', 'flite', 'promtool']) {
      writeFileSync(path.join(fakeBin, tool), '#!/bin/sh\necho "a shim, not the system tool" >&2\nexit 1\n');
      chmodSync(path.join(fakeBin, tool), 0o755);
    }
    // An empty root: the machine as a newcomer has it, none of the suite's packages installed.
    const bareRoot = path.join(scratch, 'root');
    spawnSync('mkdir', ['-p', bareRoot]);
    const result = missingPackages({ PATH: `${fakeBin}:${process.env['PATH']}`, SYSTEM_PACKAGES_ROOT: bareRoot });
    assert.equal(result.status, 0, result.stderr);
    for (const pkg of ['protobuf-compiler', 'sip-tester', 'sox', 'flite', 'prometheus']) assert.ok(result.packages.includes(pkg), `${pkg} in ${result.packages.join(' ')}`);
  });

  it('names every package of its list on a bare machine, and nothing on this one (the suite has installed them)', () => {
    const listed = readFileSync(path.join(here, 'system-packages.txt'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'))
      .map((l) => l.trim().split(/\s+/)[1]);
    const bareRoot = path.join(scratch, 'root');
    spawnSync('mkdir', ['-p', bareRoot]);
    assert.deepEqual(missingPackages({ SYSTEM_PACKAGES_ROOT: bareRoot }).packages, listed);
    assert.deepEqual(missingPackages({}).packages, []);
  });

  it('refuses a list entry that is a command name looked up on the PATH', () => {
    const list = path.join(scratch, 'list.txt');
    writeFileSync(list, '/usr/bin/sipp sip-tester\nprotoc protobuf-compiler\n');
    const result = missingPackages({ SYSTEM_PACKAGES_LIST: list });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /"protoc" must be an absolute path \(package protobuf-compiler\)/);
  });
});
