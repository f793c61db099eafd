import assert from 'node:assert/strict';
import { extractDate, extractDigits } from '../../control-api/platform/llm/extract.js';
import type { RecipeInput } from '../../control-api/model/recipes/recipe-schema.js';
import { localTime } from '../../control-api/features/recipes/runtime/call-context.js';
import { MediaService } from '../../media/media-service.js';
import { FarEnd, fliteSpeech, mediaPair, offlineConversation, recipeRun, transcribeLines } from './voice-harness.js';

/**
 * Speaking like a person and never acting on a doubt, over real RTP with the offline providers:
 * a flite caller says an order number digit by digit and hears it read back digit by digit, and
 * a date said over the closing line is heard and acted on.
 */
describe('decisions and speech over RTP (offline providers)', function () {
  this.timeout(120_000);
  let service: MediaService;
  beforeEach(() => {
    service = new MediaService({ bindAddress: '127.0.0.1', portMin: 45200, portMax: 45299 });
  });
  afterEach(async () => {
    await service.close();
  });

  /** A check's values against the turn: the date it said, the digits it said. */
  function isWhatWasSaid(turn: string, check: string): boolean {
    const today = localTime(Date.now(), 'Asia/Kolkata').date;
    const date = extractDate(check, today);
    if (date !== undefined) return date === extractDate(turn, today);
    return (check.match(/\d+/g) ?? []).every((digits) => digits === extractDigits(turn));
  }

  /**
   * Runs `recipe` with a caller that answers each "Just to check" as a person would and otherwise says
   * its turns in order: a turn `overNext` as soon as the agent's next line has begun (over it),
   * the others once the agent has finished; asked again after a turn (or after its no to a
   * check), it keys in `keys` (as the agent offered). Checks are known from the run's `confirm`
   * notes, made before they are said.
   */
  async function call(recipe: RecipeInput, turns: readonly { readonly say: string; readonly overNext?: boolean; readonly keys?: string }[]) {
    const { caller, agent } = await mediaPair(service);
    const far = new FarEnd(caller);
    const ended = new AbortController();
    const run = recipeRun(recipe, offlineConversation(agent, ended, { turn: { endpointSilenceMs: 600 } }));
    const agentLines: string[] = [];
    const stored: unknown[] = [];
    let checks = 0;
    run.on('utterance', (u) => void (u.speaker === 'agent' && agentLines.push(u.text)));
    run.on('variableSet', (v) => void stored.push(v.value));
    run.on('turn', (t) => void (t.kind === 'confirm' && checks++));
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    /** Waits until the agent's voice is heard after `since`; false when the call ended first. */
    const agentStarts = async (since: number): Promise<boolean> => {
      while (!ended.signal.aborted && far.lastVoicedAt() <= since) await sleep(50);
      return !ended.signal.aborted;
    };
    const running = run.run(ended.signal);
    const drive = async (): Promise<void> => {
      await far.agentFinished(900);
      for (const turn of turns) {
        await far.speak(await fliteSpeech(turn.say));
        let spokeAt = performance.now();
        for (;;) {
          const checked = checks;
          if (!(await agentStarts(spokeAt))) return;
          await sleep(300);
          if (checks > checked) {
            // "Just to check ...?": yes when it is what the caller said, as a person would judge it.
            await far.agentFinished(900);
            const meant = isWhatWasSaid(turn.say, agentLines.at(-1) ?? '');
            await far.speak(await fliteSpeech(meant ? 'yes' : 'no'));
            spokeAt = performance.now();
            if (meant) continue;
            // After the no, the agent's answer to it (asked again, for the value alone) before the
            // caller goes on: under load the no is still being recognised when the last line has
            // long been quiet, and a turn begun before the block listens again is no answer to it.
            if (!(await agentStarts(spokeAt))) return;
            await far.agentFinished(900).catch(() => undefined);
            if (turn.keys && !ended.signal.aborted) await caller.sendDtmf(`${turn.keys}#`);
            break;
          }
          const next = turns[turns.indexOf(turn) + 1];
          if (next?.overNext) {
            await sleep(500);
            break;
          }
          await far.agentFinished(900).catch(() => undefined);
          if (turn.keys && agentLines.at(-1)?.startsWith('Sorry') && !ended.signal.aborted) await caller.sendDtmf(`${turn.keys}#`);
          break;
        }
      }
    };
    const [result] = await Promise.all([running, drive()]);
    far.stop();
    return { result, far, stored };
  }

  it('an order number said digit by digit is captured as digits and read back digit by digit, never as an amount', async () => {
    const recipe: RecipeInput = {
      name: 'order',
      startBlockId: 'ask_order',
      blocks: [
        { id: 'ask_order', type: 'ask', settings: { prompt: 'Ask for the order number.', variables: [{ name: 'order_number', type: 'digits', description: 'The order number, digits only' }] } },
        { id: 'tell', type: 'message', settings: { text: 'Your order {{order_number}} is on its way.' } },
        { id: 'bye', type: 'close', settings: { closingScript: 'Goodbye.', disposition: 'told' } },
      ],
      connections: [
        { from: 'ask_order', exit: 'next', to: 'tell' },
        { from: 'tell', exit: 'next', to: 'bye' },
      ],
    };
    const { result, far, stored } = await call(recipe, [{ say: 'one two three four five six', keys: '123456' }]);
    // Heard, or (when the recogniser hears it in pieces, "want three four five to five", or beside
    // a word that sounds like a digit, "want three four five five") asked again or read back,
    // denied, and keyed in; never another number stored.
    assert.equal(result.variables.order_number, '123456', JSON.stringify(result.transcript));
    assert.deepEqual(stored, ['123456']);
    const asked = result.transcript.find((t) => t.speaker === 'agent');
    assert.equal(asked?.text, 'Could you tell me the order number? You can also key it in, then press hash.');
    // What the caller heard: the digits one by one (the recogniser chooses between the two readings).
    const heard = (await transcribeLines(far.audioSince(0), [
      'could you tell me the order number you can also key it in then press hash',
      'just to check one two three four five six',
      'sorry i did not catch that could you tell me the order number you can also key it in then press hash',
      'sorry about that could you tell me the order number again you can also key it in then press hash',
      'your order one two three four five six is on its way',
      'your order one hundred twenty three thousand four hundred fifty six is on its way',
      'goodbye',
    ])).join(' | ');
    assert.match(heard, /your order one two three four five six is on its way/, heard);
  });

  it('a date said over the closing line is heard and acted on: the run goes back to the block that asked for it', async () => {
    const recipe: RecipeInput = {
      name: 'date',
      startBlockId: 'ask_date',
      blocks: [
        { id: 'ask_date', type: 'ask', settings: { prompt: 'Opening: Which day would suit you?', variables: [{ name: 'new_date', type: 'date', description: 'the new date' }] } },
        { id: 'done', type: 'close', settings: { closingScript: 'Done, I have noted {{new_date}}. The clinic will send you a confirmation by message. Goodbye!', disposition: 'rescheduled' } },
      ],
      connections: [{ from: 'ask_date', exit: 'next', to: 'done' }],
    };
    const { result } = await call(recipe, [{ say: 'the third of december' }, { say: 'no, the fifth of december', overNext: true }]);
    const today = localTime(Date.now(), 'Asia/Kolkata').date;
    const said = JSON.stringify({ path: result.path, transcript: result.transcript, steps: result.steps });
    assert.deepEqual(result.path, ['ask_date', 'done', 'ask_date', 'done'], said);
    assert.equal(result.variables.new_date, extractDate('the fifth of december', today), said);
    assert.equal(result.disposition, 'rescheduled');
    assert.ok(result.transcript.some((t) => t.speaker === 'agent' && t.blockId === 'done' && t.interrupted), said);
  });
});
