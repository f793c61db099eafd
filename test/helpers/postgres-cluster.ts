import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, chmodSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

/**
 * A private PostgreSQL cluster for the test run: initdb into a temp dir, postgres on a random
 * loopback port, removed at the end. As root (CI) it runs as the `postgres` user, because initdb
 * and postgres refuse to run as root.
 */
export interface PostgresCluster {
  readonly port: number;
  readonly adminUrl: string;
  createDatabase(name?: string): Promise<string>;
  stop(): Promise<void>;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(a) - Number(b)).at(-1);
  const found = newest ? path.join(root, newest, 'bin', 'initdb') : undefined;
  if (!found) throw new Error('PostgreSQL server binaries not found: run test/setup/system-packages.sh (installs Debian postgresql)');
  return path.dirname(found);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

const asRoot = process.getuid?.() === 0;
const asPostgres = (cmd: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);

async function waitReady(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited during start-up:\n${log()}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 30 s:\n${log()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = binDir();
  const root = mkdtempSync(path.join(tmpdir(), 'vap-pg-'));
  const dataDir = path.join(root, 'data');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(root, uid, gid);
  }
  chmodSync(root, 0o700);
  const [initCmd, initArgs] = asPostgres(path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  execFileSync(initCmd, initArgs, { stdio: 'pipe' });
  const port = await freePort();
  const [cmd, args] = asPostgres(path.join(bin, 'postgres'), [
    '-D', dataDir, '-p', String(port), '-k', root, '-c', 'listen_addresses=127.0.0.1',
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=400',
  ]);
  let output = '';
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const adminUrl = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  await waitReady(adminUrl, child, () => output);
  return {
    ...attachedCluster(adminUrl),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT'); // fast shutdown
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

let counter = 0;

/** A cluster another process started (its admin URL): databases are created in it, stopping it is that process's job. */
function attachedCluster(adminUrl: string): PostgresCluster {
  const url = new URL(adminUrl);
  return {
    port: Number(url.port),
    adminUrl,
    async createDatabase(name) {
      // The pid keeps the names of parallel test workers apart.
      const db = name ?? `test_${process.pid}_${++counter}`;
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${db.replace(/"/g, '')}"`);
      } finally {
        await client.end();
      }
      return `postgresql://postgres@127.0.0.1:${url.port}/${db}`;
    },
    async stop() {},
  };
}

/**
 * Set by the global setup of a parallel run (test/setup/mocha-hooks.ts): the workers share the
 * one cluster the main process started instead of each starting its own.
 */
export const sharedClusterVariable = 'VAP_TEST_POSTGRES_ADMIN_URL';

let shared: Promise<PostgresCluster> | undefined;

/** The run's cluster, started on first use (or shared from the main process) and stopped by the global teardown. */
export function testPostgres(): Promise<PostgresCluster> {
  const sharedUrl = process.env[sharedClusterVariable];
  shared ??= sharedUrl ? Promise.resolve(attachedCluster(sharedUrl)) : startPostgresCluster();
  return shared;
}

export async function stopTestPostgres(): Promise<void> {
  if (!shared) return;
  const cluster = await shared.catch(() => undefined);
  shared = undefined;
  await cluster?.stop();
}
