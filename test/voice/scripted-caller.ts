import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { CallMediaSession } from '../../core/ports/media.js';
import { extractBoolean, extractDate, extractDigits, extractNumber } from '../../control-api/platform/llm/extract.js';
import { intentMeaning } from '../../control-api/features/recipes/blocks/meaning-words.js';
import { OfflineEngine } from '../../control-api/platform/llm/offline-engine.js';
import { QuickJsCodeRunner } from '../../control-api/features/recipes/code-sandbox/quickjs-code-runner.js';
import type { Intent, Recipe } from '../../control-api/model/recipes/recipe-schema.js';
import { localTime } from '../../control-api/features/recipes/runtime/call-context.js';
import type { Scenario, ScenarioFile } from '../../control-api/features/recipes/simulator/scenario-schema.js';
import { loadScenarioFile, runScenario, type ScenarioOutcome } from '../../control-api/features/recipes/simulator/simulation.js';
import { simulationKnowledge } from '../../control-api/features/recipes/simulator/simulation-services.js';
import type { PhoneConversation } from '../../media/voice/phone-conversation.js';
import { frameLevelDb } from '../../media/voice/vad.js';
import { FarEnd, fliteSpeech, offlineConversation } from './voice-harness.js';

/**
 * The example recipes' scenarios spoken by a synthetic caller over a real call: the agent is the
 * production voice pipeline (PhoneConversation, pocketsphinx with the block's expectation,
 * espeak-ng, offline engine) on one media session, the caller speaks each scripted turn with
 * flite (a voice other than the agent's) on the other once the agent has finished speaking (900 ms
 * of quiet after a line that asks something; 2.5 s after one that does not, since the agent may
 * still be between two lines of its own, a Message and then the question after an API call), keys
 * DTMF, stays silent or hangs up as the scenario says. bench/voice-branches.ts runs it over two
 * RTP sessions on loopback, test/voice/example-branches-sip.test.ts over a SIP call.
 *
 * Each scenario is right (its expectations hold), missed (the run left through a fallback / no
 * answer: a reprompt that never got a usable answer, or a value misheard) or WRONG (another
 * branch: a listening block left through an exit the same scenario as text never takes there, or
 * another disposition).
 *
 * A repairing caller answers as a person would when not understood: after "Sorry, I did not catch
 * that" (or the question again after a "no") it says the same turn again, at most twice (unless
 * the recipe does not take that turn as an answer even as text: "hmm", "what?"), and it answers
 * "Just to check: X?" as a person who knows what they meant: "Yes" when X is the meaning its turn
 * had (the intent its block left through when the same scenario runs as text, in the words the
 * agent uses for that intent) with the values it said (a date in X is the date it said, a number
 * one it said, a yes/no its own), else "No"; after a "No" it says its turn again. Scenarios right
 * only thanks to a repair are counted apart.
 */

/** One call's two ends: the caller's and the agent's media, and how the call ends. */
export interface CallLeg {
  readonly caller: CallMediaSession;
  readonly agent: CallMediaSession;
  /** Aborted when the call has ended, whoever ended it. */
  readonly ended: AbortSignal;
  /** The caller hangs up. */
  callerHangup(): Promise<void>;
  /** The agent hangs up (the recipe closed the call). */
  agentHangup(): Promise<void>;
  close(): Promise<void>;
}

export interface Verdict {
  readonly recipe: string;
  readonly scenario: string;
  readonly verdict: 'right' | 'missed' | 'WRONG';
  readonly repaired: boolean;
  readonly detail: string;
}

export interface CallerOptions {
  /** flite voice of the caller (default slt). */
  readonly voice?: string;
  /** Repairs misunderstandings as a person would (see above); else says each turn once. */
  readonly repairs?: boolean;
  /** Only scenario files whose name contains this. */
  readonly recipe?: string;
  /** Only scenarios whose name contains this. */
  readonly only?: string;
  /** Each scenario's verdict as soon as it is known. */
  readonly onVerdict?: (verdict: Verdict) => void;
  /** Caller-heard turn latencies (end of caller speech -> first agent audio, ms) are pushed here. */
  readonly latencies?: number[];
  /** Calls at a time (default 1: latency figures of one call alone). */
  readonly concurrency?: number;
}

/** Times a caller in repair mode says a turn again before giving up on it. */
const maxRepeats = 2;
const examples = path.resolve(import.meta.dirname, '../../examples/recipes');

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const voiced = (samples: Int16Array): boolean => frameLevelDb(samples) > -45;

/** Every offline scenario of examples/recipes/*.scenarios.yaml spoken over calls `connect` places. */
export async function speakExampleScenarios(connect: () => Promise<CallLeg>, options: CallerOptions = {}): Promise<Verdict[]> {
  const code = new QuickJsCodeRunner({ workers: 1 });
  const engine = new OfflineEngine();
  const verdicts: Verdict[] = [];
  const files = (await readdir(examples)).filter((f) => f.endsWith('.scenarios.yaml') && (!options.recipe || f.includes(options.recipe))).sort();
  const loaded = await Promise.all(files.map((name) => loadScenarioFile(path.join(examples, name))));
  const knowledge = await Promise.all(loaded.map(({ file }) => (file.knowledge.length > 0 ? simulationKnowledge(file.knowledge) : undefined)));
  const jobs = loaded.flatMap(({ file, recipe }, i) =>
    file.scenarios
      .filter((scenario) => scenario.engines.includes('offline') && (!options.only || scenario.name.includes(options.only)))
      .map((scenario) => ({ file, recipe, scenario, knowledge: knowledge[i] })),
  );
  const judge = async ({ file, recipe, scenario, knowledge }: (typeof jobs)[number]): Promise<Verdict> => {
    // The same scenario as text (perfect hearing): the branches the caller asks for, and the
    // turns the recipe does not take as an answer even as text ("hmm", "what?"), after which a
    // repairing caller goes on with its script instead of saying them again.
    const asText = await runScenario(recipe, file, scenario, { engine, engineKind: 'offline', code, knowledge });
    const nonAnswers = new Set(
      asText.result.steps.flatMap((step) => step.turns).filter((t) => t.kind === 'reprompt' && t.heard).map((t) => normalised(t.heard ?? '')),
    );
    const askedFor = new Set(asText.result.steps.filter(listening).map((step) => `${step.blockId}>${step.exit ?? ''}`));
    const { outcome, repaired } = await byVoice(
      await connect(),
      scenario,
      { nonAnswers, meant: meaningsOf(recipe, asText.result), intents: listeningIntents(recipe), today: callToday(file) },
      (conversation) => runScenario(recipe, file, scenario, { engine, engineKind: 'offline', code, knowledge, conversation }),
      options,
    );
    const { result, failures } = outcome;
    // Wrong: a listening block left through an exit other than its fallback that the caller,
    // heard perfectly, never took there (a branch nobody asked for), or another disposition.
    const strayExit = result.steps.filter(listening).find((step) => step.exit && step.exit !== 'fallback' && !askedFor.has(`${step.blockId}>${step.exit}`));
    const otherDisposition = failures.length > 0 && result.disposition !== undefined && result.disposition !== scenario.expect.disposition && !missDispositions(recipe).has(result.disposition);
    const verdict: Verdict['verdict'] = strayExit || otherDisposition ? 'WRONG' : failures.length === 0 ? 'right' : 'missed';
    const heard = result.transcript.filter((t) => t.speaker === 'caller').map((t) => (t.ignored ? `(${t.ignored}: ${t.text})` : t.text));
    const detail = `${result.path.join(' > ')} [${result.disposition ?? result.reason}] heard ${JSON.stringify(heard)}${failures.length ? `; ${failures[0]}` : ''}`;
    // BRANCHES_TRANSCRIPT=1: each call's transcript on stderr, to see why a branch was missed.
    if (process.env.BRANCHES_TRANSCRIPT) process.stderr.write(`${JSON.stringify(result.transcript, null, 1)}\n`);
    return { recipe: recipe.name, scenario: scenario.name, verdict, repaired, detail };
  };
  try {
    // `concurrency` calls at a time, each taking the next scenario.
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < jobs.length) {
        const verdict = await judge(jobs[next++]!);
        verdicts.push(verdict);
        options.onVerdict?.(verdict);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 1) }, worker));
  } finally {
    await Promise.all(knowledge.map((k) => k?.close()));
    await code.close();
  }
  return verdicts;
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

/** Blocks that listen to the caller and branch on what they hear. */
const listening = (step: { readonly type: string }): boolean => step.type === 'smartAi' || step.type === 'ask';

/** The words of a text, lower case. */
const wordsOf = (text: string): string[] => text.toLowerCase().split(/[^a-z0-9']+/).filter(Boolean);
const normalised = (text: string): string => wordsOf(text).join(' ');

/** What a caller in repair mode answers to what the agent said after its turn; undefined: carry on. */
function repairFor(turn: string, agentLines: readonly string[], run: TextRun): string | undefined {
  for (const line of agentLines) {
    const asked = /just to check:\s*(.*)\?\s*$/i.exec(line);
    if (asked) return isWhatIMeant(turn, asked[1] ?? '', run) ? 'Yes' : 'No';
    // A reprompt ("Sorry, I did not catch that", "Sorry, will you be able to come?"): said again.
    if (/^sorry,/i.test(line) && !run.nonAnswers.has(normalised(turn))) return turn;
  }
  return undefined;
}

/**
 * "Just to check: X?" judged by the caller who said `turn`: X names the meaning the turn had (or
 * none: an Ask's value alone), and every value in X is one the turn stated.
 */
function isWhatIMeant(turn: string, checked: string, { meant, intents, today }: TextRun): boolean {
  const said = normalised(checked);
  // The intent whose wording the question opens with (its text before any value placeholder).
  const about = intents
    .map((intent) => ({ name: intent.name, opening: normalised(intentMeaning(intent).split('{{')[0] ?? '') }))
    .filter((i) => i.opening && said.startsWith(i.opening))
    .sort((a, b) => b.opening.length - a.opening.length)[0];
  if (about && about.name !== meant.get(normalised(turn))) return false;
  // The values, after the intent's own wording ("that is all for today" states no date): a date
  // must be the date said, a number one the turn states, a yes/no its own.
  const wording = about ? (intentMeaning(intents.find((i) => i.name === about.name)!).split('{{')[0] ?? '').trim() : '';
  const values = wording && checked.toLowerCase().startsWith(wording.toLowerCase()) ? checked.slice(wording.length) : checked;
  const date = extractDate(values, today);
  if (date !== undefined && date !== extractDate(turn, today)) return false;
  const own = new Set([...(turn.match(/\d[\d,]*/g) ?? []).map((n) => n.replace(/,/g, '')), String(extractNumber(turn) ?? ''), extractDigits(turn) ?? '']);
  const numbers = (values.replace(/\b\d{1,2}\s+(january|february|march|april|may|june|july|august|september|october|november|december)\b/gi, '').match(/\d+/g) ?? []);
  if (!numbers.every((n) => own.has(n))) return false;
  const polar = /\byou said (yes|no)\b/i.exec(checked)?.[1];
  return polar === undefined || extractBoolean(turn) === (polar.toLowerCase() === 'yes');
}
/**
 * Waits until the agent has spoken after `since` and then been quiet for `quietMs`, when its last
 * line asked something (`asked`), else for `patientMs`: a person answers a question at once but
 * lets an agent that is still between two lines (a Message, then an API call, then its question)
 * go on. False on timeout or end.
 */
async function agentReplied(far: FarEnd, since: number, ended: AbortSignal, quietMs = 900, timeoutMs = 40_000, asked: () => boolean = () => true, patientMs = 2_500): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline && !ended.aborted) {
    const last = [...far.heard].reverse().find((f) => f.at > since && voiced(f.samples));
    const quiet = last ? performance.now() - last.at : 0;
    if (last && quiet >= quietMs && (asked() || quiet >= patientMs)) return true;
    await sleep(50);
  }
  return false;
}

function trailingSilenceMs(pcm: Int16Array): number {
  let end = pcm.length;
  while (end >= 160 && !voiced(pcm.subarray(end - 160, end))) end -= 160;
  return (pcm.length - end) / 8;
}

/** What the scenario's run as text (perfect hearing) tells the caller about its own turns. */
interface TextRun {
  /** Turns the recipe does not take as an answer even as text ("hmm", "what?"). */
  readonly nonAnswers: ReadonlySet<string>;
  /** Per turn: the intent it was taken as, as text (the meaning the caller had). */
  readonly meant: ReadonlyMap<string, string>;
  /** Every intent of the recipe's listening blocks: how the agent words each meaning. */
  readonly intents: readonly Intent[];
  /** The call's day: "tomorrow" in a turn is the date the agent reads back. */
  readonly today: string;
}

/** The scenario call's day in its timezone (the day the agent's dates are relative to). */
function callToday(file: ScenarioFile): string {
  return localTime(file.call.now ? Date.parse(file.call.now) : Date.now(), file.call.timezone).date;
}

/**
 * What each caller turn meant: for each turn that made its block leave through an intent in the
 * text run (the block's last turn before that exit), that intent. Earlier turns in the same block
 * meant none of them (the refund question asked before "Thanks, bye" is no goodbye).
 */
function meaningsOf(recipe: Recipe, run: ScenarioOutcome['result']): Map<string, string> {
  const out = new Map<string, string>();
  const turns = run.transcript.filter((t) => t.speaker === 'caller' && !t.ignored);
  let next = 0;
  for (const step of run.steps) {
    let last: (typeof turns)[number] | undefined;
    while (next < turns.length && turns[next]!.blockId === step.blockId) last = turns[next++];
    const block = recipe.blocks.find((b) => b.id === step.blockId);
    const intent = block && 'intents' in block.settings ? block.settings.intents.find((i) => i.name === step.exit) : undefined;
    if (last && intent) out.set(normalised(last.text), intent.name);
  }
  return out;
}

function listeningIntents(recipe: Recipe): Intent[] {
  return recipe.blocks.flatMap((b) => (b.type === 'smartAi' || b.type === 'ask' ? b.settings.intents : []));
}

/** Runs one scenario with the caller speaking it on `leg`; collects the turn latencies. */
async function byVoice(
  leg: CallLeg,
  scenario: Scenario,
  textRun: TextRun,
  run: (conversation: (s: Scenario) => { conversation: PhoneConversation; signal: AbortSignal }) => Promise<ScenarioOutcome>,
  options: CallerOptions,
): Promise<{ outcome: ScenarioOutcome; repaired: boolean }> {
  const voice = options.voice ?? 'slt';
  const far = new FarEnd(leg.caller);
  const ended = new AbortController();
  leg.ended.addEventListener('abort', () => ended.abort(), { once: true });
  const conversation = offlineConversation(leg.agent, ended, {
    transfer: async () => scenario.transfer,
    hangup: () => leg.agentHangup(),
  });
  // What the agent says, as text: a person on the line hears it; the repairing caller reacts to it.
  const said: { at: number; text: string }[] = [];
  const say = conversation.say.bind(conversation);
  conversation.say = (text, sayOptions) => {
    said.push({ at: performance.now(), text });
    return say(text, sayOptions);
  };
  // Streamed lines (a block's opening) too, once their text is known.
  const sayStream = conversation.sayStream.bind(conversation);
  conversation.sayStream = async (pieces, sayOptions) => {
    const at = performance.now();
    const result = await sayStream(pieces, sayOptions);
    said.push({ at, text: result.text });
    return result;
  };
  /** The agent's last line asks something: a person answers it after a short pause, else waits longer. */
  const asked = (): boolean => /\?\s*$/.test(said.at(-1)?.text ?? '');
  let repaired = false;
  const running = run(() => ({ conversation, signal: ended.signal }));
  /** When the caller's last line started: what the agent says from then on answers it. */
  let spokeFrom = 0;
  const speak = async (text: string): Promise<number> => {
    const pcm = await fliteSpeech(text, voice);
    spokeFrom = performance.now();
    await far.speak(pcm);
    const spokeEnd = performance.now() - trailingSilenceMs(pcm);
    void (async () => {
      for (const deadline = spokeEnd + 10_000; performance.now() < deadline && !ended.signal.aborted; await sleep(20)) {
        const reply = far.heard.find((f) => f.at > spokeEnd && voiced(f.samples));
        if (reply) return void options.latencies?.push(reply.at - spokeEnd);
      }
    })();
    return spokeEnd;
  };
  const drive = async (): Promise<void> => {
    let since = 0;
    let waited = false;
    for (const turn of scenario.turns) {
      if (!waited && !(await agentReplied(far, since, ended.signal, 900, 40_000, asked))) return;
      waited = false;
      if (typeof turn === 'object' && 'hangup' in turn) {
        await leg.callerHangup();
        return;
      }
      if (typeof turn === 'object' && 'silence' in turn) {
        since = performance.now();
        continue;
      }
      if (typeof turn === 'object' && 'dtmf' in turn) {
        await leg.caller.sendDtmf(`${turn.dtmf}#`);
        since = performance.now();
        continue;
      }
      const text = typeof turn === 'string' ? turn : turn.say;
      since = await speak(text);
      for (let repeats = 0; options.repairs; ) {
        if (!(await agentReplied(far, since, ended.signal, 900, 40_000, asked))) return;
        waited = true;
        // From the start of the caller's line: under load the paced audio ends late, and the
        // agent's reply may have begun before the last packet left (its check then went unseen).
        const answer = repairFor(text, said.filter((l) => l.at > spokeFrom).map((l) => l.text), textRun);
        if (answer === undefined || (answer === text && ++repeats > maxRepeats)) break;
        repaired = true;
        since = await speak(answer);
        // After a "no" the agent asks again: the caller says its turn once more.
        if (answer === 'No') {
          if (!(await agentReplied(far, since, ended.signal, 900, 40_000, asked)) || ++repeats > maxRepeats) break;
          since = await speak(text);
        }
      }
    }
    // The last answer given: the recipe closes (or asks again) on its own.
    await agentReplied(far, since, ended.signal, 1500, 60_000);
    await sleep(500);
    if (!ended.signal.aborted) await leg.callerHangup();
  };
  const [outcome] = await Promise.all([running, drive()]);
  far.stop();
  await leg.close();
  return { outcome, repaired };
}
