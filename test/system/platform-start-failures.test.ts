import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exitCode, spawnPlatform, waitForLine, type PlatformProcess } from '../helpers/platform-process.js';
import { testPostgres } from '../helpers/postgres-cluster.js';

/** A TCP port held by this test, so the platform finds it in use. */
async function occupyTcp(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

const noStackTrace = (p: PlatformProcess): void => {
  const everything = `${p.stderr}\n${p.rawLines.join('\n')}\n${p.lines.map((l) => JSON.stringify(l)).join('\n')}`;
  assert.doesNotMatch(everything, /\n\s+at |"stack"/, `no stack trace expected:\n${everything}`);
};

/** The one fatal line: names the listener with its role, the address and port, and the reason. */
function fatalLine(p: PlatformProcess): Record<string, unknown> {
  const fatal = p.lines.filter((l) => l['level'] === 'fatal');
  assert.equal(fatal.length, 1, `one fatal line expected: ${JSON.stringify(p.lines)} ${p.stderr}`);
  return fatal[0]!;
}

// PostgreSQL (the private cluster) rather than PGlite: its migrations take a fraction of the time.
const baseEnv = async (): Promise<Record<string, string>> => ({
  DATABASE_URL: await (await testPostgres()).createDatabase(),
  DATA_DIR: mkdtempSync(path.join(tmpdir(), 'vap-start-')),
  CONTROL_HOST: '127.0.0.1',
  CONTROL_PORT: '0',
  SANDBOX_HOST: '127.0.0.1',
  SANDBOX_PORT: '0',
  SIP_HOST: '127.0.0.1',
  SIP_PORT: '0',
  SIP_TLS_PORT: '0',
  SIP_WS_PORT: '0', SIP_WSS_PORT: '0',
  PROVIDERS_HOST: '127.0.0.1',
  PROVIDERS_PORT: '0',
});

/**
 * A port already in use at start crashed the process with a stack trace when it was the SIP
 * WebSocket port (an uncaught 'error' event), and printed one for the others (issue 12). Every
 * listen failure must be one clear line naming the role, listener and port, with a non-zero
 * sysexits status (69, EX_UNAVAILABLE) and no stack trace; every role started before it stops.
 */
describe('platform start-up failures', function () {
  this.timeout(180_000);

  it('the SIP WebSocket port in use: one line naming it, exit 69, no stack trace', async () => {
    const { port, server } = await occupyTcp();
    try {
      const p = spawnPlatform({ ...(await baseEnv()), ROLES: 'gateway', SIP_WS_PORT: String(port) });
      assert.equal(await exitCode(p), 69, p.stderr);
      const line = fatalLine(p);
      assert.equal(line['msg'], `SIP WS (gateway role) cannot listen on 127.0.0.1:${port}: the port is already in use (EADDRINUSE)`);
      assert.deepEqual([line['port'], line['code']], [port, 'EADDRINUSE']);
      noStackTrace(p);
    } finally {
      server.close();
    }
  });

  it('the control API port in use: one line naming it, exit 69', async () => {
    const { port, server } = await occupyTcp();
    try {
      const p = spawnPlatform({ ...(await baseEnv()), ROLES: 'control', CONTROL_PORT: String(port) });
      assert.equal(await exitCode(p), 69, p.stderr);
      assert.equal(fatalLine(p)['msg'], `control API (control role) cannot listen on 127.0.0.1:${port}: the port is already in use (EADDRINUSE)`);
      noStackTrace(p);
    } finally {
      server.close();
    }
  });

  it('the provider webhook port in use: one line naming it, exit 69, the SIP stack stopped again', async () => {
    const { port, server } = await occupyTcp();
    try {
      const p = spawnPlatform({ ...(await baseEnv()), ROLES: 'gateway', PROVIDERS_PORT: String(port) });
      assert.equal(await exitCode(p), 69, p.stderr);
      assert.equal(fatalLine(p)['msg'], `provider webhooks (gateway role) cannot listen on 127.0.0.1:${port}: the port is already in use (EADDRINUSE)`);
      noStackTrace(p);
    } finally {
      server.close();
    }
  });

  it('the SIP UDP port in use: one line naming it, exit 69', async () => {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const port = socket.address().port;
    try {
      const p = spawnPlatform({ ...(await baseEnv()), ROLES: 'gateway', SIP_PORT: String(port) });
      assert.equal(await exitCode(p), 69, p.stderr);
      assert.equal(fatalLine(p)['msg'], `SIP UDP (gateway role) cannot listen on 127.0.0.1:${port}: the port is already in use (EADDRINUSE)`);
      noStackTrace(p);
    } finally {
      socket.close();
    }
  });

  it('a config file with an unknown key: exit 78 with a line naming its path', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vap-cfg-'));
    const file = path.join(dir, 'platform.yaml');
    writeFileSync(file, 'control:\n  prot: 9090\n');
    const p = spawnPlatform({ ...(await baseEnv()), ROLES: 'control' }, ['--config', file]);
    assert.equal(await exitCode(p), 78, p.stderr);
    assert.match(p.stderr, /^ {2}- control\.prot: unknown setting \(did you mean control\.port\?\)$/m);
    assert.equal(p.lines.length, 0, 'nothing started');
  });

  it('a DATABASE_URL naming a database that does not exist: one line naming it (no password), exit 78, no stack trace', async () => {
    const cluster = await testPostgres();
    const url = new URL(cluster.adminUrl);
    url.password = 'not-to-be-logged';
    url.pathname = '/no_such_database';
    const p = spawnPlatform({ ...(await baseEnv()), ROLES: 'control', DATABASE_URL: url.href });
    assert.equal(await exitCode(p), 78, p.stderr);
    const line = fatalLine(p);
    assert.equal(line['msg'], `PostgreSQL database "no_such_database" on 127.0.0.1:${cluster.port}: the database does not exist: create it (createdb) or fix the name in DATABASE_URL (3D000)`);
    assert.equal(line['database'], 'no_such_database');
    noStackTrace(p);
    assert.doesNotMatch(`${p.stderr}${JSON.stringify(p.lines)}`, /not-to-be-logged/);
  });

  it('a second platform on a data directory in use: one line naming the process that holds it, exit 75, no stack trace', async () => {
    const env = { ...(await baseEnv()), DATABASE_URL: '', ROLES: 'sandbox' };
    const first = spawnPlatform(env);
    try {
      await waitForLine(first, 'platform started', 90_000);
      const second = spawnPlatform(env);
      assert.equal(await exitCode(second), 75, second.stderr);
      const line = fatalLine(second);
      assert.match(String(line['msg']), new RegExp(`is in use by process ${first.child.pid} \\(a running platform\\?\\)`));
      noStackTrace(second);
    } finally {
      first.child.kill('SIGTERM');
      await exitCode(first);
    }
  });
});
