import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { OriginateRequest } from '../../core/ports/originator.js';
import { freeUdpPort, scenarioDir } from '../helpers/sipp.js';
import { numbers } from './gateway-harness.js';

/** SIPp (Debian sip-tester) as the far end of an outbound call: a UAS scenario on a loopback port. */
export interface SippUas {
  readonly port: number;
  /** Settles when SIPp exits (after `calls` calls, or killed at the time bound). */
  readonly done: Promise<{ exitCode: number | null; errors: string; messages: string; timedOut: boolean }>;
  stop(): void;
}

export async function startSippUas(scenario: string, options: { calls?: number; timeoutMs?: number; keys?: Record<string, string> } = {}): Promise<SippUas> {
  const work = mkdtempSync(path.join(tmpdir(), 'sipp-uas-'));
  const port = await freeUdpPort('127.0.0.1');
  const mediaPort = await freeUdpPort('127.0.0.1', port);
  const errorFile = path.join(work, 'errors.log');
  const msgFile = path.join(work, 'messages.log');
  const timeoutMs = options.timeoutMs ?? 20_000;
  const args = [
    '-sf', path.join(scenarioDir, scenario),
    '-t', 'u1', '-i', '127.0.0.1', '-p', String(port), '-mi', '127.0.0.1', '-mp', String(mediaPort),
    '-m', String(options.calls ?? 1), '-nostdin',
    '-trace_err', '-error_file', errorFile, '-trace_msg', '-message_file', msgFile,
    '-timeout', `${Math.ceil(timeoutMs / 1000)}s`, '-timeout_error',
  ];
  for (const [k, v] of Object.entries(options.keys ?? {})) args.push('-key', k, v);
  const child = spawn('sipp', args, { cwd: scenarioDir, stdio: ['ignore', 'ignore', 'ignore'] });
  let timedOut = false;
  const killer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs + 5000);
  const done = new Promise<{ exitCode: number | null; errors: string; messages: string; timedOut: boolean }>((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(killer);
      const read = (f: string): string => (existsSync(f) ? readFileSync(f, 'utf8') : '');
      const result = { exitCode: code, errors: read(errorFile), messages: read(msgFile), timedOut };
      rmSync(work, { recursive: true, force: true });
      resolve(result);
    }),
  );
  // SIPp binds within a few ms; a request sent before that would be lost and retransmitted anyway.
  await new Promise((r) => setTimeout(r, 300));
  return { port, done, stop: () => child.kill('SIGTERM') };
}

/** Asserts the SIPp UAS ran its scenario to the end; the failure shows its error log and the last messages. */
export function expectSippUasSuccess(r: { exitCode: number | null; errors: string; messages: string }): void {
  assert.equal(r.exitCode, 0, `SIPp UAS failed (exit ${r.exitCode}):\n${r.errors}\n${r.messages.slice(-4000)}`);
}

/** An outbound call from the fixture's trunk DID through `trunkId` to a fixed callee; `extra` overrides. */
export function outboundRequest(tenantId: string, trunkId: string, extra: Partial<OriginateRequest> = {}): OriginateRequest {
  return {
    from: { e164: numbers.trunkDid, phoneNumberId: '00000000-0000-4000-8000-000000000001', sipTrunkId: trunkId },
    to: '+919812345678',
    ringTimeoutMs: 15_000,
    startLogic: { mode: 'immediately' },
    context: { tenantId, campaignId: 'c1', messageId: 'm1', attempt: 1, recipeId: 'r1', variables: {} },
    signal: new AbortController().signal,
    ...extra,
  };
}
