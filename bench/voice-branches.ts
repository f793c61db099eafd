/**
 * Branch accuracy of the example recipes by voice. Every scenario of examples/recipes/*.scenarios.yaml
 * runs over real RTP (two MediaSessions on loopback, G.711): the agent is the production voice
 * pipeline (PhoneConversation, pocketsphinx with the block's expectation, espeak-ng, offline
 * engine); the caller speaks each scripted turn with flite (a voice other than the agent's) once
 * the agent has finished speaking, keys DTMF, stays silent or hangs up as the scenario says.
 *
 * Each scenario is right (its expectations hold), missed (the run left through a fallback / no
 * answer: a reprompt that never got a usable answer, or a value misheard) or WRONG (another
 * branch: a listening block left through an exit the same scenario as text never takes there, or
 * another disposition). Prints per recipe
 * right / missed / wrong, each scenario's path, and the caller-heard turn latency (end of the
 * caller's speech -> first agent audio) median and p90.
 *
 * `--caller literal` (default) says each scripted turn once, whatever the agent answers.
 * `--caller repairs` answers as a person would when not understood: after "Sorry, I did not catch
 * that" (or the question again after a "no") it says the same turn again, at most twice (unless
 * the recipe does not take that turn as an answer even as text: "hmm", "what?"), and it
 * answers "Sorry, did you say: X?" with "Yes" when X is what it said (X's words are among its
 * turn's words), else "No". Scenarios right only thanks to a repair are counted apart.
 *
 *   node --import tsx bench/voice-branches.ts [--voice slt] [--caller literal|repairs] [--only text] [--recipe name]
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { OfflineEngine } from '../control-api/llm/offline-engine.js';
import { QuickJsCodeRunner } from '../control-api/recipes/code-sandbox/quickjs-code-runner.js';
import type { Recipe } from '../control-api/recipes/recipe-schema.js';
import type { Scenario } from '../control-api/recipes/simulator/scenario-schema.js';
import { loadScenarioFile, runScenario, type ScenarioOutcome } from '../control-api/recipes/simulator/simulation.js';
import { simulationKnowledge } from '../control-api/recipes/simulator/simulation-services.js';
import { MediaService } from '../media/media-service.js';
import { PhoneConversation } from '../media/voice/phone-conversation.js';
import { frameLevelDb } from '../media/voice/vad.js';
import { FarEnd, fliteSpeech, mediaPair, offlineConversation } from '../test/voice/voice-harness.js';

const args = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const voice = arg('voice') ?? 'slt';
const only = arg('only');
const recipeFilter = arg('recipe');
const repairs = arg('caller') === 'repairs';
/** Times a caller in repair mode says a turn again before giving up on it. */
const maxRepeats = 2;
const examples = path.resolve(import.meta.dirname, '../examples/recipes');

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const voiced = (samples: Int16Array): boolean => frameLevelDb(samples) > -45;

/** Waits until the agent has spoken after `since` and then been quiet for `quietMs`; false on timeout or end. */
async function agentReplied(far: FarEnd, since: number, ended: AbortSignal, quietMs = 900, timeoutMs = 40_000): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline && !ended.aborted) {
    const last = [...far.heard].reverse().find((f) => f.at > since && voiced(f.samples));
    if (last && performance.now() - last.at >= quietMs) return true;
    await sleep(50);
  }
  return false;
}

function trailingSilenceMs(pcm: Int16Array): number {
  let end = pcm.length;
  while (end >= 160 && !voiced(pcm.subarray(end - 160, end))) end -= 160;
  return (pcm.length - end) / 8;
}

/** Dispositions a recipe reaches through a `fallback` exit: a miss, not another branch. */
function missDispositions(recipe: Recipe): Set<string> {
  const out = new Set<string>();
  const byId = new Map(recipe.blocks.map((b) => [b.id, b]));
  for (const c of recipe.connections) {
    const to = byId.get(c.to);
    const disposition = (to?.settings as { disposition?: string } | undefined)?.disposition;
    if (c.exit === 'fallback' && to?.type === 'close' && disposition) out.add(disposition);
  }
  return out;
}

interface Verdict {
  readonly recipe: string;
  readonly scenario: string;
  readonly verdict: 'right' | 'missed' | 'WRONG';
  readonly repaired: boolean;
  readonly detail: string;
}

async function main(): Promise<void> {
  const service = new MediaService({ bindAddress: '127.0.0.1', portMin: 46000, portMax: 46399 });
  const code = new QuickJsCodeRunner({ workers: 1 });
  const engine = new OfflineEngine();
  const verdicts: Verdict[] = [];
  const latencies: number[] = [];
  const files = (await readdir(examples)).filter((f) => f.endsWith('.scenarios.yaml') && (!recipeFilter || f.includes(recipeFilter))).sort();
  try {
    for (const name of files) {
      const { file, recipe } = await loadScenarioFile(path.join(examples, name));
      const knowledge = file.knowledge.length > 0 ? await simulationKnowledge(file.knowledge) : undefined;
      const misses = missDispositions(recipe);
      try {
        for (const scenario of file.scenarios) {
          if (!scenario.engines.includes('offline') || (only && !scenario.name.includes(only))) continue;
          // The same scenario as text (perfect hearing): the branches the caller asks for, and the
          // turns the recipe does not take as an answer even as text ("hmm", "what?"), after which a
          // repairing caller goes on with its script instead of saying them again.
          const asText = await runScenario(recipe, file, scenario, { engine, engineKind: 'offline', code, knowledge });
          const nonAnswers = new Set(
            asText.result.steps.flatMap((step) => step.turns).filter((t) => t.kind === 'reprompt' && t.heard).map((t) => normalised(t.heard ?? '')),
          );
          const askedFor = new Set(asText.result.steps.filter(listening).map((step) => `${step.blockId}>${step.exit ?? ''}`));
          const { outcome, repaired } = await byVoice(service, scenario, nonAnswers, (conversation) => runScenario(recipe, file, scenario, { engine, engineKind: 'offline', code, knowledge, conversation }), latencies);
          const { result, failures } = outcome;
          const expected = scenario.expect.disposition;
          // Wrong: a listening block left through an exit other than its fallback that the caller,
          // heard perfectly, never took there (a branch nobody asked for), or another disposition.
          const strayExit = result.steps.filter(listening).find((step) => step.exit && step.exit !== 'fallback' && !askedFor.has(`${step.blockId}>${step.exit}`));
          const verdict: Verdict['verdict'] =
            strayExit || (failures.length > 0 && result.disposition !== undefined && result.disposition !== expected && !misses.has(result.disposition))
              ? 'WRONG'
              : failures.length === 0
                ? 'right'
                : 'missed';
          const heard = result.transcript.filter((t) => t.speaker === 'caller').map((t) => (t.ignored ? `(${t.ignored}: ${t.text})` : t.text));
          verdicts.push({ recipe: recipe.name, scenario: scenario.name, verdict, repaired, detail: `${result.path.join(' > ')} [${result.disposition ?? result.reason}] heard ${JSON.stringify(heard)}${failures.length ? `; ${failures[0]}` : ''}` });
          process.stdout.write(`${verdict.padEnd(6)}${repaired ? '*' : ' '} ${recipe.name} / ${scenario.name}: ${verdicts.at(-1)?.detail}\n`);
        }
      } finally {
        await knowledge?.close();
      }
    }
  } finally {
    await code.close();
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
  process.exitCode = verdicts.some((v) => v.verdict === 'WRONG') ? 1 : 0;
}

/** Blocks that listen to the caller and branch on what they hear. */
const listening = (step: { readonly type: string }): boolean => step.type === 'smartAi' || step.type === 'ask';

/** The words of a text, lower case. */
const wordsOf = (text: string): string[] => text.toLowerCase().split(/[^a-z0-9']+/).filter(Boolean);
const normalised = (text: string): string => wordsOf(text).join(' ');

/** What a caller in repair mode answers to what the agent said after its turn; undefined: carry on. */
function repairFor(turn: string, agentLines: readonly string[], nonAnswers: ReadonlySet<string>): string | undefined {
  for (const line of agentLines) {
    const asked = /did you say:?\s*(.*?)\?/i.exec(line);
    if (asked) {
      const own = new Set(wordsOf(turn));
      return wordsOf(asked[1] ?? '').every((w) => own.has(w)) ? 'Yes' : 'No';
    }
    if (/^sorry, i did not catch that/i.test(line) && !nonAnswers.has(normalised(turn))) return turn;
  }
  return undefined;
}

/** Runs one scenario with the caller speaking it over RTP; collects the turn latencies. */
async function byVoice(
  service: MediaService,
  scenario: Scenario,
  nonAnswers: ReadonlySet<string>,
  run: (conversation: (s: Scenario) => { conversation: PhoneConversation; signal: AbortSignal }) => Promise<ScenarioOutcome>,
  latencies: number[],
): Promise<{ outcome: ScenarioOutcome; repaired: boolean }> {
  const { caller, agent } = await mediaPair(service);
  const far = new FarEnd(caller);
  const ended = new AbortController();
  const conversation = offlineConversation(agent, ended, {
    transfer: async () => scenario.transfer,
  });
  // What the agent says, as text: a person on the line hears it; the repairing caller reacts to it.
  const said: { at: number; text: string }[] = [];
  const say = conversation.say.bind(conversation);
  conversation.say = (text, options) => {
    said.push({ at: performance.now(), text });
    return say(text, options);
  };
  let repaired = false;
  const running = run(() => ({ conversation, signal: ended.signal }));
  const speak = async (text: string): Promise<number> => {
    const pcm = await fliteSpeech(text, voice);
    await far.speak(pcm);
    const spokeEnd = performance.now() - trailingSilenceMs(pcm);
    void (async () => {
      for (const deadline = spokeEnd + 10_000; performance.now() < deadline && !ended.signal.aborted; await sleep(20)) {
        const reply = far.heard.find((f) => f.at > spokeEnd && voiced(f.samples));
        if (reply) return void latencies.push(reply.at - spokeEnd);
      }
    })();
    return spokeEnd;
  };
  const drive = async (): Promise<void> => {
    let since = 0;
    let waited = false;
    for (const turn of scenario.turns) {
      if (!waited && !(await agentReplied(far, since, ended.signal))) return;
      waited = false;
      if (typeof turn === 'object' && 'hangup' in turn) {
        ended.abort();
        return;
      }
      if (typeof turn === 'object' && 'silence' in turn) {
        since = performance.now();
        continue;
      }
      if (typeof turn === 'object' && 'dtmf' in turn) {
        await caller.sendDtmf(`${turn.dtmf}#`);
        since = performance.now();
        continue;
      }
      const text = typeof turn === 'string' ? turn : turn.say;
      since = await speak(text);
      for (let repeats = 0; repairs; ) {
        if (!(await agentReplied(far, since, ended.signal))) return;
        waited = true;
        const answer = repairFor(text, said.filter((l) => l.at > since).map((l) => l.text), nonAnswers);
        if (answer === undefined || (answer === text && ++repeats > maxRepeats)) break;
        repaired = true;
        since = await speak(answer);
        // After a "no" the agent asks again: the caller says its turn once more.
        if (answer === 'No') {
          if (!(await agentReplied(far, since, ended.signal)) || ++repeats > maxRepeats) break;
          since = await speak(text);
        }
      }
    }
    // The last answer given: the recipe closes (or asks again) on its own.
    await agentReplied(far, since, ended.signal, 1500, 60_000);
    await sleep(500);
    ended.abort();
  };
  const [outcome] = await Promise.all([running, drive()]);
  far.stop();
  await caller.close?.();
  await agent.close?.();
  return { outcome, repaired };
}

await main();
