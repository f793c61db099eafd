import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnPlatform, waitForLine, type PlatformProcess } from '../helpers/platform-process.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The trunk's termination address: SIPp sends from it. */
export const carrierIp = '127.0.0.41';
export const did = '+914440007001';

/**
 * A tenant whose number plays a long message (about 20 s of espeak-ng) before closing, so a call
 * stays up as long as a test needs: the caller hangs up first, or a drain ends it.
 */
export function operationsTenant(): readonly object[] {
  const long = Array.from({ length: 6 }, () => 'Thank you for calling the operations desk, your call matters to us and we are checking your account details now.').join(' ');
  return [
    { apiVersion: 'vap/v1', kind: 'Tenant', spec: { clientId: 'ops', name: 'Ops' } },
    { apiVersion: 'vap/v1', kind: 'SipTrunk', tenant: 'ops', spec: { name: 'carrier', inbound: { terminationAddresses: [carrierIp], dids: [did] }, outbound: { username: 'ops-out', password: 'ops-sip-password-1', transport: 'udp' } } },
    {
      apiVersion: 'vap/v1',
      kind: 'Recipe',
      tenant: 'ops',
      spec: {
        name: 'hold',
        startBlockId: 'talk',
        blocks: [
          { id: 'talk', type: 'message', settings: { text: long } },
          { id: 'bye', type: 'close', settings: { closingScript: 'Goodbye.', disposition: 'done' } },
        ],
        connections: [{ from: 'talk', exit: 'next', to: 'bye' }],
      },
    },
    { apiVersion: 'vap/v1', kind: 'PhoneNumber', tenant: 'ops', spec: { number: did, recipe: 'hold', provider: { type: 'customSipTrunk', trunk: 'carrier' }, language: 'en-US' } },
  ];
}

/** `apply -f` with the CLI into the data directory (PGlite), as an operator would. */
export async function applyDocuments(dataDir: string, docs: readonly object[]): Promise<void> {
  const file = path.join(dataDir, 'ops.yaml');
  writeFileSync(file, docs.map((d) => JSON.stringify(d)).join('\n---\n'));
  const apply = spawn(process.execPath, ['--import', 'tsx', 'bin/cli.ts', 'apply', '-f', file], { cwd: repoRoot, env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', CONFIG_FILE: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  apply.stdout.on('data', (d: Buffer) => (out += d.toString()));
  apply.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(apply, 'exit')) as [number | null];
  assert.equal(code, 0, out);
}

export interface RunningPlatform {
  readonly process: PlatformProcess;
  readonly sipPort: number;
  readonly controlUrl: string;
  readonly operatorToken: string;
}

/** The platform process with the gateway, control and worker roles on loopback, PGlite in `dataDir`. */
export async function startOperationsPlatform(dataDir: string, env: Record<string, string> = {}): Promise<RunningPlatform> {
  const started = spawnPlatform({
    DATABASE_URL: '',
    CONFIG_FILE: '',
    DATA_DIR: dataDir,
    ROLES: 'gateway,control,worker',
    CONTROL_HOST: '127.0.0.1',
    CONTROL_PORT: '0',
    SIP_HOST: '127.0.0.1',
    SIP_PORT: '0',
    SIP_TLS_PORT: '0',
    SIP_WS_PORT: '0', SIP_WSS_PORT: '0',
    SIP_PUBLIC_ADDRESS: '127.0.0.1',
    RTP_BIND_ADDRESS: '127.0.0.1',
    ...env,
  });
  try {
    const control = await waitForLine(started, 'control API listening', 120_000);
    const sip = started.lines.find((l) => String(l['msg']).startsWith('SIP gateway listening')) ?? (await waitForSipLine(started));
    await waitForLine(started, 'platform started', 120_000);
    return {
      process: started,
      sipPort: (sip['ports'] as Record<string, number>)['UDP'] as number,
      controlUrl: `http://127.0.0.1:${String(control['port'])}`,
      operatorToken: readFileSync(path.join(dataDir, 'operator-token'), 'utf8').trim(),
    };
  } catch (error) {
    started.child.kill('SIGKILL');
    throw error;
  }
}

async function waitForSipLine(started: PlatformProcess): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const hit = started.lines.find((l) => String(l['msg']).startsWith('SIP gateway listening'));
    if (hit) return hit;
    if (started.child.exitCode !== null || Date.now() > deadline) {
      const fatal = started.lines.filter((l) => l['level'] === 'fatal').map((l) => String(l['msg']));
      throw new Error(`gateway did not start (exit ${started.child.exitCode}): ${fatal.join('; ')} ${started.stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `promtool check metrics` on an exposition: its exit code and every line it printed. */
export function promtoolCheck(exposition: string): { status: number | null; findings: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8', timeout: 30_000 });
  if (run.error) throw run.error;
  return { status: run.status, findings: `${run.stdout}${run.stderr}`.trim() };
}

/** The value of one series in an exposition (labels written exactly as prom-client prints them). */
export function seriesValue(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
