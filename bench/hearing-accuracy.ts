/**
 * Offline hearing accuracy at the example recipes' decision points, without a call: each answer
 * is spoken by every flite voice, passed through G.711 mu-law (as on a phone line) with silence
 * around it, and recognised by pocketsphinx with the block's expectation, exactly as a live turn
 * is. Fast enough (~0.5 s per decode) to compare recogniser changes; the call-level figure is
 * bench/voice-branches.ts.
 *
 * A hearing is right (the expected meaning, confident enough to act on), confirm (doubtful: the
 * agent asks "Just to check ...?", by its confidence or, as the block's hearing-doubt check decides,
 * a close rival reading), missed (no meaning, or too doubtful to use: a reprompt) or WRONG
 * (another meaning, or the right one with a wrong date or amount, confident enough to act on
 * without asking); an amount heard in pieces is missed (the block asks again). Each line shows the reading
 * without the winning meaning and how far (per 10 ms) it is behind.
 *
 *   node --import tsx bench/hearing-accuracy.ts [--voices slt,awb] [--only text] [--lead 0.2] [--stretch 1.3]
 */
import path from 'node:path';
import { amountInPieces, rivalReading } from '../control-api/recipes/blocks/hearing-doubt.js';
import { extractDate, extractNumber } from '../control-api/llm/extract.js';
import { expectationFor } from '../control-api/recipes/blocks/listen-expectation.js';
import type { Heard } from '../control-api/recipes/runtime/conversation.js';
import { knowledgeTags, vocabularySize } from '../control-api/recipes/blocks/knowledge-turn.js';
import { loadScenarioFile } from '../control-api/recipes/simulator/simulation.js';
import { simulationKnowledge } from '../control-api/recipes/simulator/simulation-services.js';
import type { ListenExpectation } from '../core/ports/conversation.js';
import { smartAiSettingsSchema, type SmartAiSettings } from '../control-api/recipes/recipe-schema.js';
import { pcmu } from '../media/codecs/g711.js';
import { PocketsphinxStt } from '../media/speech/pocketsphinx-stt.js';
import { fliteSpeech } from '../test/voice/voice-harness.js';

const args = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const voices = (arg('voices') ?? 'slt,awb,rms,kal').split(',');
const only = arg('only');
/** Seconds of line silence before the answer (a live turn starts ~0.1 s before the voice onset). */
const lead = Number(arg('lead') ?? 0.2);
/** flite's duration stretch: 1.3 is a caller saying it again, slower, after "Sorry, I did not catch that". */
const stretch = Number(arg('stretch') ?? 1);
const examples = path.resolve(import.meta.dirname, '../examples/recipes');

/** Thresholds of the example recipes (the smartAi defaults). */
const reject = 0.3;
const confirm = 0.6;

/** The value an answer states, checked when its meaning is right (a wrong date is a wrong answer). */
interface Stated {
  readonly date?: string;
  readonly amount?: number;
}

/** [recipe file, block id, what the caller says, the meaning it must be heard as ('' = none), the value it states]. */
const cases: readonly (readonly [string, string, string, string, Stated?])[] = [
  ['appointment-reminder', 'confirm', 'Yes, I will be there', 'intent:confirm|yes'],
  ['appointment-reminder', 'confirm', 'Yes', 'intent:confirm|yes'],
  ['appointment-reminder', 'confirm', 'Yeah sure', 'intent:confirm|yes'],
  ['appointment-reminder', 'confirm', 'haan ji', 'intent:confirm|yes'],
  ['appointment-reminder', 'confirm', 'Can I reschedule to next Monday?', 'intent:reschedule'],
  ['appointment-reminder', 'confirm', 'I need to postpone it', 'intent:reschedule'],
  ['appointment-reminder', 'confirm', 'No, please cancel it', 'intent:cancel|no'],
  ['appointment-reminder', 'confirm', 'what?', ''],
  ['appointment-reminder', 'confirm', 'I am driving right now', ''],
  ['appointment-reminder', 'confirm', 'Who is this?', ''],
  ['appointment-reminder', 'confirm', 'How many days until my refund is processed?', ''],
  ['appointment-reminder', 'ask_date', 'the 3rd of December', 'date', { date: '2026-12-03' }],
  ['appointment-reminder', 'ask_date', 'next Monday', 'date', { date: '2026-12-07' }],
  ['loan-collection', 'negotiate', 'I promise to pay 3000 on 5 December', 'intent:promise_to_pay', { amount: 3000, date: '2026-12-05' }],
  ['loan-collection', 'negotiate', 'Send me the payment link, I will pay today', 'intent:pay_now'],
  ['loan-collection', 'negotiate', 'This amount is wrong, I already paid', 'intent:dispute'],
  ['loan-collection', 'negotiate', "I don't know", 'unsure'],
  ['support-desk', 'assist', 'Can I talk to a human agent please', 'intent:human'],
  ['support-desk', 'assist', 'I want a representative', 'intent:human'],
  ['support-desk', 'assist', 'Thanks, bye', 'intent:goodbye'],
  ['support-desk', 'assist', 'bye', 'intent:goodbye'],
  ['support-desk', 'assist', 'How many days until my refund is processed?', 'words:refund'],
  ['support-desk', 'assist', 'How often should I water my snake plant?', 'words:water|snake'],
  ['support-desk', 'assist', 'Can you ship a plant to Alaska?', 'words:ship|alaska'],
  ['support-desk', 'assist', 'Do refund approvals need a manager?', 'words:refund'],
  ['support-desk', 'assist', 'nothing else, thanks', 'intent:goodbye'],
  ['support-desk', 'assist', 'What is the meaning of life?', ''],
  ['support-desk', 'assist', 'Tell me a joke', ''],
  ['support-desk', 'assist', 'Who won the cricket match?', ''],
];

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
  const ok = accepted.includes(meaning) || (meaning === '' && accepted.some((a) => a === 'date' || a === 'number'));
  if (ok) return confidence >= confirm ? 'right' : 'confirm';
  return confidence >= confirm && meaning !== '' ? 'WRONG' : 'missed';
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

async function hear(stt: PocketsphinxStt, expectation: ListenExpectation, pcm8k: Int16Array): Promise<Hearing> {
  let result: Hearing = { text: '', meaning: '', confidence: 0, rivals: [] };
  const stream = await stt.open({ language: 'en-US', keywords: [], expectation, signal: new AbortController().signal });
  stream.onTranscript((t) => {
    result = { text: t.text, meaning: t.meaning ?? '', confidence: t.confidence ?? 1, rivals: t.alternatives ?? [] };
  });
  // As on the line: a little lead-in and hangover silence, then mu-law both ways.
  const padded = new Int16Array(pcm8k.length + Math.round(8000 * (lead + 0.4)));
  padded.set(pcm8k, Math.round(8000 * lead));
  const bytes = new Uint8Array(padded.length);
  pcmu.encode(padded, bytes);
  const coded = pcmu.decode(bytes);
  for (let i = 0; i < coded.length; i += 160) stream.push(coded.subarray(i, i + 160));
  await stream.finish();
  return result;
}

/** What the block listens for on a call: its expectation, plus its knowledge vocabulary (AnswerFlow). */
async function blockExpectation(recipeName: string, blockId: string): Promise<{ expectation: ListenExpectation; settings: SmartAiSettings }> {
  const { file, recipe } = await loadScenarioFile(path.join(examples, `${recipeName}.scenarios.yaml`));
  const settings = recipe.blocks.find((b) => b.id === blockId)?.settings as SmartAiSettings | undefined;
  if (!settings) throw new Error(`${recipeName}: no block ${blockId}`);
  const expectation = expectationFor(settings);
  const tags = knowledgeTags(settings, recipe.globalSettings);
  if (!tags || file.knowledge.length === 0) return { expectation, settings };
  const knowledge = await simulationKnowledge(file.knowledge);
  try {
    const words = (await knowledge.search.vocabulary?.(knowledge.tenantId, tags, vocabularySize)) ?? [];
    return { expectation: { ...expectation, words }, settings };
  } finally {
    await knowledge.close();
  }
}

/** The day relative dates are read against (fixed: no wall clock). */
const decisionDay = '2026-12-01';

/** A block with one amount to capture, for the amount-in-pieces check. */
const amountBlock = smartAiSettingsSchema.parse({ prompt: 'amount', variables: [{ name: 'amount', type: 'number', description: 'amount' }] });

/** A hearing as the block gets it. */
function turnOf(heard: Hearing): Heard {
  return { kind: 'utterance', text: heard.text, confidence: heard.confidence, meaning: heard.meaning, ...(heard.rivals.length > 0 ? { alternatives: heard.rivals } : {}) };
}

async function main(): Promise<void> {
  const stt = new PocketsphinxStt();
  const blocks = new Map<string, { expectation: ListenExpectation; settings: SmartAiSettings }>();
  const tally = new Map<Verdict, number>();
  for (const [recipeName, blockId, say, expected, stated] of cases) {
    if (only && !say.includes(only)) continue;
    const key = `${recipeName}/${blockId}`;
    if (!blocks.has(key)) blocks.set(key, await blockExpectation(recipeName, blockId));
    const { expectation, settings } = blocks.get(key)!;
    for (const voice of voices) {
      const heard = await hear(stt, expectation, await fliteSpeech(say, voice, stretch));
      const meaningVerdict = verdictOf(expected, heard.meaning, heard.confidence, heard.text);
      // The block reprompts on an amount heard in pieces; a right meaning with a wrong value is wrong.
      const amount = extractNumber(heard.text);
      const pieces = amountInPieces(turnOf(heard), amount !== undefined ? { amount } : {}, amountBlock);
      const valueWrong = stated !== undefined && ((stated.date !== undefined && extractDate(heard.text, decisionDay) !== stated.date) || (stated.amount !== undefined && amount !== stated.amount));
      const heardVerdict: Verdict = meaningVerdict !== 'right' && meaningVerdict !== 'confirm' ? meaningVerdict : pieces ? 'missed' : valueWrong && meaningVerdict === 'right' ? 'WRONG' : meaningVerdict;
      // A block checks the meaning ("Just to check ...?") before acting on a hearing with a close rival reading.
      const doubted = (heardVerdict === 'right' || heardVerdict === 'WRONG') && settings.intents && rivalReading(turnOf(heard), settings, decisionDay) !== undefined;
      const verdict: Verdict = doubted ? 'confirm' : heardVerdict;
      tally.set(verdict, (tally.get(verdict) ?? 0) + 1);
      process.stdout.write(`${verdict.padEnd(7)} ${voice.padEnd(4)} ${blockId.padEnd(9)} "${say}" -> ${heard.meaning || '-'} ${heard.confidence.toFixed(2)} "${heard.text}"${heard.rivals.map((r) => ` (rival: "${r.text}", ${r.scoreGap?.toFixed(1) ?? '?'} per 10 ms behind)`).join('')}\n`);
    }
  }
  process.stdout.write(`\n${[...tally.entries()].map(([k, n]) => `${k} ${n}`).join(', ')}\n`);
}

await main();
