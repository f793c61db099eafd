import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface SipsakProbe {
  /** sipsak's exit code: 0 when the OPTIONS got a 200 (its manual: 1 other final, 2 timeout, 3 error). */
  readonly exitCode: number;
  /** Send (the first, when sipsak retransmitted) to final response as sipsak measured it, if any. */
  readonly latencyMs: number | undefined;
  readonly output: string;
}

/**
 * sipsak (Debian `sipsak`, the OPTIONS monitor carriers and Nagios checks use) probing a SIP
 * server every `everyMs`: `count` independent runs started from one shell, so this process forks
 * once, each from `localIp` (sipsak's `--local-ip`), each bounded by `boundSeconds` (5 s).
 */
export async function sipsakProbes(options: { readonly port: number; readonly localIp: string; readonly count: number; readonly everyMs: number; readonly boundSeconds?: number }): Promise<SipsakProbe[]> {
  const work = mkdtempSync(path.join(tmpdir(), 'sipsak-'));
  const one = `timeout ${options.boundSeconds ?? 5} sipsak -vv -s sip:monitor@127.0.0.1 -r ${options.port} --local-ip ${options.localIp}`;
  const script = `for i in $(seq 1 ${options.count}); do (${one} > "$W/p$i.txt" 2>&1; echo "exit=$?" >> "$W/p$i.txt") & sleep ${options.everyMs / 1000}; done; wait`;
  const child = spawn('bash', ['-c', script], { env: { ...process.env, W: work }, stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  const probes: SipsakProbe[] = [];
  for (let i = 1; i <= options.count; i++) {
    const output = readFileSync(path.join(work, `p${i}.txt`), 'utf8');
    // "reply received after N ms", or after a retransmission "reply received N ms after first send".
    const latency = /reply received (?:after )?([\d.]+) ms/.exec(output)?.[1];
    probes.push({ exitCode: Number(/exit=(\d+)/.exec(output)?.[1] ?? -1), latencyMs: latency === undefined ? undefined : Number(latency), output });
  }
  rmSync(work, { recursive: true, force: true });
  return probes;
}
