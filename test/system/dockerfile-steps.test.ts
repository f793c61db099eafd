import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/**
 * The image's steps, run without a Docker engine by scripts/check-dockerfile.ts (docs/deployment.md),
 * offline and inside a network namespace that has only loopback: npm installs from this machine's
 * npm cache, so the test reaches nothing but 127.0.0.1.
 */
describe("the Dockerfile's steps, run without a Docker engine", function () {
  this.timeout(600_000);

  it('build the image in a sandbox; it runs as node, passes its HEALTHCHECK with /data owned by node, and stops on SIGTERM', async () => {
    const command = 'ip link set lo up && exec "$0" --import tsx scripts/check-dockerfile.ts --offline';
    const child = spawn('unshare', ['--net', 'sh', '-c', command, process.execPath], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 0, output.slice(-6000));
    assert.match(output, /static checks: no findings/);
    assert.match(output, /RUN npm ci --ignore-scripts/);
    assert.match(output, /RUN npm run build:dist[\s\S]*dist\/ built in/);
    assert.match(output, /RUN npm ci --omit=dev --ignore-scripts/);
    assert.match(output, /COPY --from=build \/app\/dist \.\/dist/);
    assert.match(output, /as node \(uid 1000\)/);
    assert.match(output, /HEALTHCHECK passed/);
    assert.match(output, /\/data now holds .*secret\.key.*sip-tls.*, all owned by node/);
    assert.match(output, /SIGTERM: stopped with exit 0/);
  });
});
