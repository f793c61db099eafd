import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sharedClusterVariable, stopTestPostgres, testPostgres } from '../helpers/postgres-cluster.js';

/**
 * Runs once before the whole suite, in mocha's main process. In a parallel run (`--parallel`) it
 * starts the one PostgreSQL cluster every worker shares: workers are forked after this and inherit
 * its address. A serial run (one file while developing) starts the cluster only if a test asks.
 */
export async function mochaGlobalSetup(): Promise<void> {
  if (!process.argv.includes('--parallel')) return;
  const cluster = await testPostgres();
  process.env[sharedClusterVariable] = cluster.adminUrl;
}

/** Runs once after the whole suite: tears down shared real components. */
export async function mochaGlobalTeardown(): Promise<void> {
  await stopTestPostgres();
}

/**
 * With `TEST_FILE_STATS=<file>` set, each test file's wall time and CPU (its worker's own, and
 * that of the processes it started and waited for: platforms, SIPp, speech tools) are appended
 * to that file as one JSON line, to find where the suite's time goes (scripts/test-suite.mjs
 * prints the largest). Root hooks run once per file in a parallel run.
 */
const statsFile = process.env['TEST_FILE_STATS'];
let started: { wall: number; own: NodeJS.CpuUsage; children: number } | undefined;

function childrenCpuMs(): number {
  // /proc/self/stat fields 16 and 17: cutime and cstime, in clock ticks (100 per second).
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[13] ?? 0) + Number(fields[14] ?? 0)) * 10;
}

export const mochaHooks = statsFile
  ? {
      beforeAll(): void {
        started = { wall: performance.now(), own: process.cpuUsage(), children: childrenCpuMs() };
      },
      afterAll(this: Mocha.Context): void {
        if (!started) return;
        const own = process.cpuUsage(started.own);
        const file = this.test?.parent?.suites.find((s) => s.file)?.file ?? this.test?.parent?.file ?? 'unknown';
        const line = {
          file: path.relative(process.cwd(), file),
          wallMs: Math.round(performance.now() - started.wall),
          ownCpuMs: Math.round((own.user + own.system) / 1000),
          childCpuMs: childrenCpuMs() - started.children,
        };
        appendFileSync(statsFile, `${JSON.stringify(line)}\n`);
      },
    }
  : {};
