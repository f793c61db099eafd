/** Readers for bench/sip-overload.ts: SIPp's counts and response times, /proc, /metrics, and the bench's own documents. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { udpReceiveDrops } from '../gateway/sip/transport/udp-drops.js';

export interface FloodCounts {
  readonly invites: number;
  readonly retransmissions: number;
  readonly answered: number;
  readonly refused: number;
  readonly busy: number;
  readonly unanswered: number;
  readonly unfinished: number;
  readonly unexpected: number;
}

/** SIPp's -trace_counts CSV of uac-invite-flood-timed.xml: columns "<line>_<message>_<counter>", last row the totals. */
export function floodCounts(dir: string): FloodCounts | undefined {
  const file = readdirSync(dir).find((f) => f.endsWith('_counts.csv'));
  if (!file) return undefined;
  const rows = readFileSync(path.join(dir, file), 'utf8').trim().split('\n');
  if (rows.length < 2) return undefined;
  const header = (rows[0] ?? '').split(';');
  const last = (rows[rows.length - 1] ?? '').split(';');
  const col = (name: string): number => Number(last[header.indexOf(name)] ?? 0);
  return {
    invites: col('0_INVITE_Sent'),
    retransmissions: col('0_INVITE_Retrans'),
    answered: col('5_200_Recv'),
    refused: col('4_503_Recv'),
    busy: col('3_486_Recv'),
    unanswered: col('1_100_Timeout'),
    unfinished: col('2_180_Timeout') + col('3_486_Timeout') + col('4_503_Timeout') + col('5_200_Timeout'),
    unexpected: header.reduce((n, h, i) => n + (h.endsWith('_Unexp') ? Number(last[i] ?? 0) : 0), 0),
  };
}

/** SIPp's -trace_rtt CSV (date_ms;response_time_ms;rtd_no): every INVITE's time to its final answer, sorted. */
export function rtts(dir: string): number[] {
  const file = readdirSync(dir).find((f) => f.endsWith('_rtt.csv'));
  if (!file) return [];
  return readFileSync(path.join(dir, file), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((row) => Number(row.split(';')[1]))
    .filter((n) => Number.isFinite(n))
    .sort((a, b) => a - b);
}

export const pct = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

export const kernelDrops = (address: string, port: number): number => udpReceiveDrops(address, port) ?? NaN;

/** Resident set size of a process, MB. */
export function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Math.round(Number(kb) / 1024);
}

/** CPU seconds of a process: itself, and with the children it reaped (espeak-ng, pocketsphinx). */
export function processCpu(pid: number): { self: number; withChildren: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  const self = ((f[11] ?? 0) + (f[12] ?? 0)) / 100;
  return { self, withChildren: self + ((f[13] ?? 0) + (f[14] ?? 0)) / 100 };
}

/** Jiffies of the whole machine from /proc/stat: busy (not idle or iowait) and total. */
export function machineCpu(): { busy: number; total: number } {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
}

/** Sum of a counter's samples in Prometheus text, grouped by the `reason` label, for samples matching `where`. */
export function metricSum(text: string, name: string, where: Record<string, string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = line.includes('{') ? Object.fromEntries([...line.slice(line.indexOf('{') + 1, line.lastIndexOf('}')).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]])) : {};
    if (!Object.entries(where).every(([k, v]) => labels[k] === v)) continue;
    const key = labels['reason'] ?? '';
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/**
 * A number on the example trunk whose recipe keeps talking: a Message, then a Condition that
 * never matches, back to the Message (a loop through a Condition is allowed; the recipe graph
 * refuses only loops that never wait or branch). The longest silence limit and call duration.
 */
export function holdLineDocuments(number: string): string {
  return `apiVersion: vap/v1
kind: Recipe
tenant: greenleaf
spec:
  name: bench-hold-line
  startBlockId: talk
  blocks:
    - id: talk
      type: message
      settings: { text: "Thank you for holding. Your call is important to us, and an agent will be with you shortly. While you wait, you can find answers to most questions about your order on our website, where you can also change the delivery date or the address. Please stay on the line, and we will be with you as soon as we can." }
    - id: again
      type: condition
      settings:
        branches:
          - name: never
            rules:
              - { variable: stop_holding, operator: equals, value: "yes" }
  connections:
    - { from: talk, exit: next, to: again }
    - { from: again, exit: never, to: talk }
    - { from: again, exit: else, to: talk }
---
apiVersion: vap/v1
kind: PhoneNumber
tenant: greenleaf
spec:
  number: "${number}"
  recipe: bench-hold-line
  provider: { type: customSipTrunk, trunk: greenleaf-carrier }
  language: en-IN
  endCallOnSilenceMinutes: 5
  maxCallDurationMinutes: 30
`;
}
