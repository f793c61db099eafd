/**
 * Offline hearing accuracy at the example recipes' decision points (and the store assistant's
 * order-number Ask), without a call, on the splits of bench/corpus/: `tuning` (the recipes' own
 * phrasings said by the flite voices the tests use, what the recogniser's thresholds are tuned
 * on), `dev` (other flite and espeak-ng renderings and phrasings: where decision rules are
 * checked; `dev-b` to `dev-f`, more development splits with voices and phrasings of their own) and `heldout` (other voices - Festival, espeak-ng variants, tempo +-15%, 20 dB line
 * noise - saying paraphrases; never tuned on). Each
 * utterance is passed through G.711 mu-law (as on a phone line) with silence around it, and
 * recognised by pocketsphinx with the block's expectation, exactly as a live turn is.
 *
 * A hearing is right (the expected meaning, confident enough to act on), confirm (doubtful: the
 * agent asks "Just to check ...?", by its confidence or, as the block's hearing-doubt check decides,
 * a close rival reading), missed (no meaning, or too doubtful to use: a reprompt) or WRONG
 * (another meaning, or the right one with a wrong date or amount, confident enough to act on
 * without asking); an amount heard in pieces is missed (the block asks again). Each line shows the reading
 * without the winning meaning and how far (per 10 ms) it is behind. Each split ends with its
 * tally, the tally by rendering, and the recognition time per turn (end of the turn's audio ->
 * transcript) median / p90.
 *
 * Each hearing is judged twice: `heard` is the reading alone (its meaning, confidence, values and
 * the block's rival check), `block` is what the block itself does with it: the recipe's block is
 * run with the offline engine on that one turn (smart-ai/ask with every doubt check, the
 * "Just to check" question, the reprompt, the knowledge answer) and judged by what it did - left
 * through an exit with its values (right or WRONG), asked to check (confirm), asked again or
 * answered a question (missed, or right where nothing was to be acted on). `block` is the figure
 * a caller meets; the tallies show both.
 *
 * `--codec g722` puts a wideband line in place of G.711: the voices rendered at 16 kHz, G.722
 * both ways, the recogniser given the call's own 16 kHz audio (offline-utterance.ts).
 *
 * `--hearings FILE` keeps each hearing (reading, confidence, rivals, time) in FILE and reads it back
 * on the next run instead of decoding again: the block's decision rules (hearing-doubt.ts,
 * turn-decision.ts) can then be tried on a split in seconds. Delete the file after a change to the
 * recogniser, the grammar or the corpus.
 *
 *   node --import tsx bench/hearing-accuracy.ts [--split tuning|dev|dev-b|dev-c|dev-d|dev-e|dev-f|heldout|both] [--codec g711|g722] [--voices slt,awb] [--only text] [--block id] [--lead 0.2] [--stretch 1.3] [--hearings FILE] [--quiet]
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { amountInPieces, rivalReading } from '../control-api/features/recipes/blocks/hearing-doubt.js';
import { extractDate, extractDigits, extractNumber } from '../control-api/platform/llm/extract.js';
import { validRecipeSchema } from '../control-api/model/recipes/recipe-graph.js';
import type { Recipe } from '../control-api/model/recipes/recipe-schema.js';
import type { ScenarioFile } from '../control-api/features/recipes/simulator/scenario-schema.js';
import { expectationFor } from '../control-api/features/recipes/blocks/listen-expectation.js';
import type { Heard } from '../core/ports/conversation.js';
import type { KnowledgeSearch } from '../control-api/features/recipes/runtime/services.js';
import { knowledgeTags, vocabularySize } from '../control-api/features/recipes/blocks/knowledge-turn.js';
import { loadScenarioFile } from '../control-api/features/recipes/simulator/simulation.js';
import { simulationKnowledge, type SimulationKnowledge } from '../control-api/features/recipes/simulator/simulation-services.js';
import type { ListenExpectation } from '../core/ports/conversation.js';
import { smartAiSettingsSchema, type SmartAiSettings } from '../control-api/model/recipes/recipe-schema.js';
import { pcmu } from '../media/codecs/g711.js';
import { PocketsphinxStt } from '../media/speech/pocketsphinx-stt.js';
import { G722Decoder, G722Encoder } from '../media/codecs/g722.js';
import { Downsampler } from '../media/codecs/half-band.js';
import { defaultBlocks } from '../control-api/features/recipes/blocks/index.js';
import { CallEndedError } from '../core/ports/conversation.js';
import { fakeContext } from '../test/fakes/fake-block-context.js';
import { loadCorpus, render, render16k, type HearingCase, type Rendering } from './hearing-corpus.js';

const args = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
/** Renderings whose name contains one of these (`slt` picks flite-slt and festival-slt-hts). */
const voices = arg('voices')?.split(',');
const only = arg('only');
/** Only the cases of this listening block (`ask_order`). */
const onlyBlock = arg('block');
/** `both`: tuning and held-out, the two the issue reports. */
const splits = (arg('split') ?? 'both') === 'both' ? ['tuning', 'heldout'] : [arg('split')!];
/** Only the tallies, not a line per utterance. */
const quiet = args.includes('--quiet');
/** Seconds of line silence before the answer (a live turn starts ~0.1 s before the voice onset). */
const lead = Number(arg('lead') ?? 0.2);
/** flite's duration stretch: 1.3 is a caller saying it again, slower, after "Sorry, I did not catch that". */
const stretch = Number(arg('stretch') ?? 1);
const examples = path.resolve(import.meta.dirname, '../examples/recipes');
const tenantExamples = path.resolve(import.meta.dirname, '../examples/tenant');
/** The phone line: G.711 mu-law (8 kHz, the default) or G.722 (16 kHz, wideband). */
const codec = arg('codec') ?? 'g711';
if (codec !== 'g711' && codec !== 'g722') throw new Error(`--codec g711|g722, not ${codec}`);
/** Hearings kept from an earlier run (`--hearings`), by what was said, how, and to which block. */
const hearingsFile = arg('hearings');
const keptHearings: Record<string, Hearing & { readonly ms: number }> = hearingsFile && existsSync(hearingsFile) ? JSON.parse(readFileSync(hearingsFile, 'utf8')) : {};

/** Thresholds of the example recipes (the smartAi defaults). */
const reject = 0.3;
const confirm = 0.6;

type Verdict = 'right' | 'confirm' | 'missed' | 'WRONG';

function verdictOf(expected: string, meaning: string, confidence: number, text: string): Verdict {
  if (expected.startsWith('words:')) {
    // A knowledge question: no meaning to act on; right when a word the answer is found by was heard.
    const words = expected.slice('words:'.length).split('|');
    const found = words.some((w) => text.split(' ').some((t) => t.startsWith(w)));
    if (meaning && meaning !== 'unsure' && confidence >= confirm) return 'WRONG';
    if (confidence < reject || !found) return 'missed';
    return meaning && meaning !== 'unsure' ? 'confirm' : 'right';
  }
  const accepted = expected.split('|').filter(Boolean);
  const heard = confidence >= reject && (meaning !== '' || text !== '');
  if (accepted.length === 0) return !heard || !meaning || meaning === 'unsure' ? 'right' : confidence >= confirm ? 'WRONG' : 'confirm';
  if (!heard) return 'missed';
  // A value (a date) is heard as words with no phrase meaning.
  const ok = accepted.includes(meaning) || (meaning === '' && accepted.some((a) => a === 'date' || a === 'number' || a === 'digits'));
  if (ok) return confidence >= confirm ? 'right' : 'confirm';
  // A hedge ("maybe", "I don't know") is a meaning no block acts on: the block asks again.
  return confidence >= confirm && meaning !== '' && meaning !== 'unsure' ? 'WRONG' : 'missed';
}

interface Hearing {
  readonly text: string;
  readonly meaning: string;
  readonly confidence: number;
  /**
   * The competing readings, as the block gets them: the grammar's reading without the winning
   * meaning (likelihood gap per 10 ms), and the other noise realisation's when it disagrees.
   */
  readonly rivals: readonly { readonly text: string; readonly confidence: number; readonly scoreGap?: number }[];
}

async function hear(stt: PocketsphinxStt, expectation: ListenExpectation, pcm: Int16Array): Promise<Hearing & { readonly ms: number }> {
  let result: Hearing = { text: '', meaning: '', confidence: 0, rivals: [] };
  const stream = await stt.open({ language: 'en-US', keywords: [], expectation, signal: new AbortController().signal });
  stream.onTranscript((t) => {
    result = { text: t.text, meaning: t.meaning ?? '', confidence: t.confidence ?? 1, rivals: t.alternatives ?? [] };
  });
  // As on the line: a little lead-in and hangover silence, then the codec both ways.
  const rate = codec === 'g722' ? 16000 : 8000;
  const padded = new Int16Array(pcm.length + Math.round(rate * (lead + 0.4)));
  padded.set(pcm, Math.round(rate * lead));
  if (codec === 'g722') {
    // G.722 at 64 kbit/s both ways, then as the media session hands it on: 8 kHz frames with
    // their 16 kHz original beside them (media/session/codec-path.ts).
    const bytes = new Uint8Array(padded.length >> 1);
    new G722Encoder().encode(padded, bytes);
    const wide = new G722Decoder().decode(bytes);
    const down = new Downsampler();
    for (let i = 0; i + 320 <= wide.length; i += 320) {
      const frame = wide.subarray(i, i + 320);
      stream.push(down.process(frame), frame);
    }
  } else {
    const bytes = new Uint8Array(padded.length);
    pcmu.encode(padded, bytes);
    const coded = pcmu.decode(bytes);
    for (let i = 0; i < coded.length; i += 160) stream.push(coded.subarray(i, i + 160));
  }
  const start = performance.now();
  await stream.finish();
  return { ...result, ms: performance.now() - start };
}

/** What the block listens for on a call: its expectation, plus its knowledge vocabulary (AnswerFlow). */
interface BlockUnderTest {
  readonly expectation: ListenExpectation;
  readonly settings: SmartAiSettings;
  readonly type: string;
  /** The scenario file's call variables, so the block's lines render as on a call. */
  readonly variables: Readonly<Record<string, unknown>>;
  /** The scenario file's knowledge, for a block that answers questions (closed at the end). */
  readonly knowledge?: SimulationKnowledge;
}

/**
 * A recipe with its scenario file (examples/recipes), or one of the example tenant's recipes by
 * name (the store assistant's order-number Ask has no scenario file), with no call variables.
 */
async function exampleRecipe(recipeName: string): Promise<{ file: Pick<ScenarioFile, 'variables' | 'knowledge'>; recipe: Recipe }> {
  const scenarios = path.join(examples, `${recipeName}.scenarios.yaml`);
  if (existsSync(scenarios)) return loadScenarioFile(scenarios);
  for (const name of readdirSync(tenantExamples).filter((f) => f.endsWith('.yaml'))) {
    for (const doc of parseAllDocuments(readFileSync(path.join(tenantExamples, name), 'utf8'))) {
      const raw = doc.toJS() as { kind?: string; spec?: { name?: string } } | null;
      if (raw?.kind === 'Recipe' && raw.spec?.name === recipeName) return { file: { variables: {}, knowledge: [] }, recipe: validRecipeSchema.parse(raw.spec) as Recipe };
    }
  }
  throw new Error(`no example recipe ${recipeName}`);
}

async function blockExpectation(recipeName: string, blockId: string): Promise<BlockUnderTest> {
  const { file, recipe } = await exampleRecipe(recipeName);
  const found = recipe.blocks.find((b) => b.id === blockId);
  if (!found) throw new Error(`${recipeName}: no block ${blockId}`);
  const settings = found.settings as SmartAiSettings;
  const expectation = expectationFor(settings);
  const block = { settings, type: found.type, variables: file.variables };
  const tags = knowledgeTags(settings, recipe.globalSettings);
  if (!tags || file.knowledge.length === 0) return { expectation, ...block };
  const knowledge = await simulationKnowledge(file.knowledge);
  const words = (await knowledge.search.vocabulary?.(knowledge.tenantId, tags, vocabularySize)) ?? [];
  return { expectation: { ...expectation, words }, ...block, knowledge };
}

/** The block's knowledge service over the scenario file's library. */
function knowledgeOf(library: SimulationKnowledge): KnowledgeSearch {
  return {
    search: (_tenant, query, tags, limit) => library.search.search(library.tenantId, query, tags, limit),
    vocabulary: async (_tenant, tags, limit) => (await library.search.vocabulary?.(library.tenantId, tags, limit)) ?? [],
  };
}

/** 2026-12-01 (decisionDay) 12:00 in Asia/Kolkata, the fake call's timezone. */
const decisionNow = Date.UTC(2026, 11, 1, 6, 30);

/**
 * What the block does with this one hearing (the offline engine, every doubt check): run with the
 * turn, then a hang-up, and judged by what it did before the hang-up.
 */
async function blockVerdict(c: HearingCase, heard: Hearing, block: BlockUnderTest, answers: readonly Heard[] = []): Promise<{ verdict: Verdict; said: readonly string[] }> {
  const search = block.knowledge;
  const ctx = fakeContext({
    turns: [turnOf(heard), ...answers, 'hangup'],
    variables: { ...block.variables },
    now: decisionNow,
    // Search and vocabulary, as on a call: without its library's words the block hears no question
    // in a reading with no question word ("refunds", "snake plant").
    ...(search ? { services: { knowledge: knowledgeOf(search) } } : {}),
  });
  let exit: string | undefined;
  try {
    const outcome = await defaultBlocks[block.type as keyof typeof defaultBlocks].run(ctx, block.settings as never, ctx.signal);
    if ('exit' in outcome) exit = outcome.exit;
  } catch (error) {
    if (!(error instanceof CallEndedError)) throw error;
  }
  // What the agent said after its question, and the exit: shown beside a verdict that is not right.
  const said = [...ctx.said.slice(1).map((l) => l.text), ...(exit ? [`-> ${exit}`] : [])];
  return { verdict: judgeBlock(c, exit, ctx), said };
}

function judgeBlock(c: HearingCase, exit: string | undefined, ctx: ReturnType<typeof fakeContext>): Verdict {
  const accepted = c.expect.split('|').filter(Boolean);
  const acted = exit !== undefined && exit !== 'fallback';
  if (!acted) {
    if (ctx.notes.some((n) => n.kind === 'confirm')) return 'confirm';
    // Asked again, or answered from knowledge: nothing acted on.
    const answered = ctx.notes.some((n) => n.kind === 'answered');
    if (accepted.length === 0 || accepted.includes('unsure')) return 'right';
    if (accepted[0]!.startsWith('words:')) return answered ? 'right' : 'missed';
    return 'missed';
  }
  // Acted: on the meaning expected, with the values the caller stated?
  const meant = accepted.some((a) => a === `intent:${exit}` || ((a === 'date' || a === 'number' || a === 'digits') && exit === 'next'));
  const stored = [...ctx.vars.entries()];
  const dateOk = c.date === undefined || stored.some(([, v]) => v === c.date);
  const amountOk = c.amount === undefined || stored.some(([, v]) => v === c.amount);
  const digitsOk = c.digits === undefined || stored.some(([, v]) => v === c.digits);
  return meant && dateOk && amountOk && digitsOk ? 'right' : 'WRONG';
}

/** The day relative dates are read against (fixed: no wall clock). */
const decisionDay = '2026-12-01';

/** A block with one amount to capture, for the amount-in-pieces check. */
const amountBlock = smartAiSettingsSchema.parse({ prompt: 'amount', variables: [{ name: 'amount', type: 'number', description: 'amount' }] });

/** A caller's plain yes to "Just to check ...?" (three at most: a meaning, then its date or amount, may each be checked). */
const yesToEveryCheck: readonly Heard[] = Array.from({ length: 3 }, () => ({ kind: 'utterance', text: 'yes', confidence: 1, meaning: 'yes' }) as Heard);

/**
 * What a check leads to: the block run again with a yes to each check. The right exit and values
 * mean the check was of what the caller meant (a yes takes the call on); another exit or value
 * means it was not (a caller says no and is asked again: nothing is done).
 */
type CheckOutcome = 'the yes reaches the right exit' | 'of another meaning or value' | 'still asking';

/** A hearing as the block gets it. */
function turnOf(heard: Hearing): Heard {
  return { kind: 'utterance', text: heard.text, confidence: heard.confidence, meaning: heard.meaning, ...(heard.rivals.length > 0 ? { alternatives: heard.rivals } : {}) };
}

const pct = (sorted: readonly number[], p: number): string => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(0) : '-');

async function runSplit(split: string, stt: PocketsphinxStt): Promise<void> {
  const corpus = await loadCorpus(split);
  const renderings = corpus.renderings.filter((r) => !voices || voices.some((v) => r.name.includes(v)));
  const blocks = new Map<string, BlockUnderTest>();
  const tally = new Map<Verdict, number>();
  const heardTally = new Map<Verdict, number>();
  const byRendering = new Map<string, Map<Verdict, number>>();
  const count = (t: Map<Verdict, number>, v: Verdict): void => void t.set(v, (t.get(v) ?? 0) + 1);
  const times: number[] = [];
  /** Spoken digit strings (order numbers) alone: the issue's "captured" figure. */
  const digitTally = new Map<string, number>();
  const checks = new Map<CheckOutcome, number>();
  for (const c of corpus.cases) {
    if ((only && !c.say.includes(only)) || (onlyBlock && c.block !== onlyBlock)) continue;
    const key = `${c.recipe}/${c.block}`;
    if (!blocks.has(key)) blocks.set(key, await blockExpectation(c.recipe, c.block));
    const block = blocks.get(key)!;
    for (const rendering of renderings) {
      const verdict = await judge(stt, c, rendering, block, times);
      count(tally, verdict.block);
      count(heardTally, verdict.heard);
      if (c.digits !== undefined) digitTally.set(verdict.digits ?? verdict.block, (digitTally.get(verdict.digits ?? verdict.block) ?? 0) + 1);
      if (verdict.check) checks.set(verdict.check, (checks.get(verdict.check) ?? 0) + 1);
      const mine = byRendering.get(rendering.name) ?? new Map<Verdict, number>();
      count(mine, verdict.block);
      byRendering.set(rendering.name, mine);
    }
  }
  for (const block of blocks.values()) await block.knowledge?.close();
  const line = (t: Map<Verdict, number>): string => (['right', 'confirm', 'missed', 'WRONG'] as const).map((k) => `${k} ${t.get(k) ?? 0}`).join(', ');
  const total = [...tally.values()].reduce((a, b) => a + b, 0);
  process.stdout.write(`\n== ${split}: ${total} utterances (${renderings.length} renderings)\nblock: ${line(tally)}\nheard: ${line(heardTally)} (the reading alone)\n`);
  for (const [name, t] of byRendering) process.stdout.write(`  ${name.padEnd(26)} ${line(t)}\n`);
  const checkKinds: CheckOutcome[] = ['the yes reaches the right exit', 'of another meaning or value', 'still asking'];
  const onYes = checks.get('the yes reaches the right exit') ?? 0;
  process.stdout.write(`checks (confirm), the block run again with a yes to each: ${checkKinds.map((k) => `${k} ${checks.get(k) ?? 0}`).join(', ')}\n`);
  process.stdout.write(`right at once or after one yes: ${(tally.get('right') ?? 0) + onYes} of ${total} (${(((tally.get('right') ?? 0) + onYes) / Math.max(1, total) * 100).toFixed(0)}%)\n`);
  if (digitTally.size > 0) {
    const kinds = ['right', 'read back as said', 'read back otherwise', 'missed', 'WRONG'];
    process.stdout.write(`spoken digit strings (by the block): ${kinds.map((k) => `${k} ${digitTally.get(k) ?? 0}`).join(', ')}\n`);
  }
  const sorted = [...times].sort((a, b) => a - b);
  process.stdout.write(`recognition per turn (end of audio -> transcript): median ${pct(sorted, 0.5)} ms, p90 ${pct(sorted, 0.9)} ms\n`);
}

async function judge(stt: PocketsphinxStt, c: HearingCase, rendering: Rendering, block: BlockUnderTest, times: number[]): Promise<{ heard: Verdict; block: Verdict; digits?: string; check?: CheckOutcome }> {
  const { expectation, settings } = block;
  const said = stretch !== 1 && 'flite' in rendering.voice ? { ...rendering, stretch } : rendering;
  const key = [rendering.name, c.recipe, c.block, c.say, codec, stretch, lead].join('|');
  const heard = keptHearings[key] ?? (await hear(stt, expectation, codec === 'g722' ? await render16k(c.say, said) : await render(c.say, said)));
  keptHearings[key] = heard;
  times.push(heard.ms);
  const meaningVerdict = verdictOf(c.expect, heard.meaning, heard.confidence, heard.text);
  // The block reprompts on an amount heard in pieces; a right meaning with a wrong value is wrong.
  const amount = extractNumber(heard.text);
  const pieces = amountInPieces(turnOf(heard), amount !== undefined ? { amount } : {}, amountBlock);
  const valueWrong =
    (c.date !== undefined && extractDate(heard.text, decisionDay) !== c.date) || (c.amount !== undefined && amount !== c.amount) || (c.digits !== undefined && extractDigits(heard.text) !== c.digits);
  const heardVerdict: Verdict = meaningVerdict !== 'right' && meaningVerdict !== 'confirm' ? meaningVerdict : pieces ? 'missed' : valueWrong && meaningVerdict === 'right' ? 'WRONG' : meaningVerdict;
  // A block checks the meaning ("Just to check ...?") before acting on a hearing with a close rival reading.
  const doubted = (heardVerdict === 'right' || heardVerdict === 'WRONG') && settings.intents && rivalReading(turnOf(heard), settings, decisionDay) !== undefined;
  const verdict: Verdict = doubted ? 'confirm' : heardVerdict;
  const { verdict: acted, said: agent } = await blockVerdict(c, heard, block);
  if (!quiet) {
    process.stdout.write(
      `${acted.padEnd(7)} ${verdict === acted ? '         ' : `(${verdict})`.padEnd(9)} ${rendering.name.padEnd(16)} ${c.block.padEnd(9)} "${c.say}" -> ${heard.meaning || '-'} ${heard.confidence.toFixed(2)} "${heard.text}"${heard.rivals.map((r) => ` (rival: "${r.text}", ${r.scoreGap?.toFixed(1) ?? '?'} per 10 ms behind)`).join('')}\n${acted === 'right' ? '' : agent.map((l) => `          agent: ${l}\n`).join('')}`,
    );
  }
  // A spoken number is read back before it is stored: as said (the caller's yes stores it) or not.
  const readBack = c.digits !== undefined && acted === 'confirm' ? (agent.some((l) => l === `Just to check: ${c.digits}?`) ? 'read back as said' : 'read back otherwise') : undefined;
  let check: CheckOutcome | undefined;
  if (acted === 'confirm') {
    const onYes = (await blockVerdict(c, heard, block, yesToEveryCheck)).verdict;
    check = onYes === 'right' ? 'the yes reaches the right exit' : onYes === 'WRONG' ? 'of another meaning or value' : 'still asking';
  }
  return { heard: verdict, block: acted, ...(readBack ? { digits: readBack } : {}), ...(check ? { check } : {}) };
}

async function main(): Promise<void> {
  const stt = new PocketsphinxStt();
  for (const split of splits) await runSplit(split, stt);
  if (hearingsFile) writeFileSync(hearingsFile, JSON.stringify(keptHearings));
}

await main();
