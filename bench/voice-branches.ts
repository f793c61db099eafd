/**
 * Branch accuracy of the example recipes by voice, over real RTP without signalling (two
 * MediaSessions on loopback, G.711): every offline scenario of examples/recipes/*.scenarios.yaml
 * spoken by a flite caller against the production voice pipeline (test/voice/scripted-caller.ts
 * says how the caller behaves and how a scenario is judged right / missed / WRONG). Prints each
 * scenario's path and what was heard, right / missed / wrong per recipe, and the caller-heard
 * turn latency (end of the caller's speech -> first agent audio) median and p90; exits 1 on any
 * wrong branch. test/voice/example-branches-sip.test.ts runs the same over SIP calls.
 *
 * `--caller literal` (default) says each scripted turn once, whatever the agent answers;
 * `--caller repairs` says it again when not understood and answers "Just to check: ...?".
 *
 * `--concurrency 3` places three calls at a time (each takes the next scenario): the latency
 * figures are then those of a node carrying three conversations.
 *
 *   node --import tsx bench/voice-branches.ts [--voice slt] [--caller literal|repairs] [--only text] [--recipe name] [--concurrency 1]
 */
import { availableParallelism, loadavg } from 'node:os';
import { MediaService } from '../media/media-service.js';
import { speakExampleScenarios, type CallLeg, type Verdict } from '../test/voice/scripted-caller.js';
import { mediaPair } from '../test/voice/voice-harness.js';

const args = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const voice = arg('voice') ?? 'slt';
const repairs = arg('caller') === 'repairs';

async function main(): Promise<void> {
  const service = new MediaService({ bindAddress: '127.0.0.1', portMin: 46000, portMax: 46399 });
  const latencies: number[] = [];
  /** Two RTP sessions on loopback (no signalling): the call ends when either side hangs up. */
  const connect = async (): Promise<CallLeg> => {
    const { caller, agent } = await mediaPair(service);
    const ended = new AbortController();
    const end = async (): Promise<void> => ended.abort();
    return { caller, agent, ended: ended.signal, callerHangup: end, agentHangup: end, close: async () => void (await Promise.all([caller.close?.(), agent.close?.()])) };
  };
  let verdicts: Verdict[];
  try {
    verdicts = await speakExampleScenarios(connect, {
      voice,
      repairs,
      ...(arg('recipe') ? { recipe: arg('recipe') } : {}),
      ...(arg('only') ? { only: arg('only') } : {}),
      concurrency: Number(arg('concurrency') ?? 1),
      latencies,
      onVerdict: (v) => process.stdout.write(`${v.verdict.padEnd(6)}${v.repaired ? '*' : ' '} ${v.recipe} / ${v.scenario}: ${v.detail}\n`),
    });
  } finally {
    await service.close();
  }
  process.stdout.write(`\nflite voice ${voice} (caller ${repairs ? 'repairs' : 'literal'}), agent espeak-ng, pocketsphinx with block expectations, offline engine\n`);
  process.stdout.write('recipe                         right (after a repair)  missed  wrong\n');
  for (const recipe of new Set(verdicts.map((v) => v.recipe))) {
    const of = verdicts.filter((v) => v.recipe === recipe);
    const count = (k: Verdict['verdict']): number => of.filter((v) => v.verdict === k).length;
    const afterRepair = of.filter((v) => v.verdict === 'right' && v.repaired).length;
    process.stdout.write(`${recipe.padEnd(30)} ${String(count('right')).padStart(5)} ${`(${afterRepair})`.padStart(18)} ${String(count('missed')).padStart(7)} ${String(count('WRONG')).padStart(6)}\n`);
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  const pct = (p: number): string => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(0) : '-');
  process.stdout.write(`caller-heard turn latency (end of caller speech -> first agent audio), ${sorted.length} turns: median ${pct(0.5)} ms, p90 ${pct(0.9)} ms\n`);
  process.stdout.write(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')} (${availableParallelism()} cores)\n`);
  process.exitCode = verdicts.some((v) => v.verdict === 'WRONG') ? 1 : 0;
}

await main();
