import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ActiveCall, CallHandler } from '../../core/ports/call-handler.js';
import type { RunResult } from '../../control-api/features/recipes/runtime/recipe-run.js';
import { EspeakTts } from '../../media/speech/espeak-tts.js';
import { PocketsphinxStt } from '../../media/speech/pocketsphinx-stt.js';
import { PhoneConversation } from '../../media/voice/phone-conversation.js';
import { writeWav } from '../../media/wav/wav.js';
import { numbers, startGatewayFixture, type GatewayFixture } from '../gateway/gateway-harness.js';
import { runSipp, scenarioDir } from '../helpers/sipp.js';
import { agentChannel, appointmentRecipe, appointmentVocabulary, fliteSpeech, recipeRun, transcribe } from './voice-harness.js';

const run = promisify(execFile);

/** Runs the appointment recipe on every answered call, recording both directions. */
class RecipeCallHandler implements CallHandler {
  readonly results: Promise<{ result: RunResult; recording: string }>[] = [];
  constructor(private readonly dir: string) {}

  handle(call: ActiveCall): Promise<void> {
    const recording = path.join(this.dir, `call-${this.results.length}.wav`);
    const done = (async () => {
      await call.media.startRecording(recording);
      const conversation = new PhoneConversation({
        media: call.media,
        stt: new PocketsphinxStt(),
        tts: new EspeakTts(),
        speech: { voice: '', language: 'en-US', sttLanguage: 'en-US', keywords: ['yes', 'no', 'will', 'come', 'cancel'] },
        turn: { endpointSilenceMs: 600 },
        signal: call.signal,
        hangup: () => call.hangup('agent-closed'),
        onCallerSpeech: () => call.noteCallerSpeech(),
      });
      const result = await recipeRun(appointmentRecipe, conversation).run(call.signal);
      await new Promise((r) => setTimeout(r, 300));
      await call.media.stopRecording();
      await conversation.hangup();
      return { result, recording };
    })();
    this.results.push(done);
    return done.then(() => undefined);
  }
}

/**
 * End to end over real SIP: SIPp calls the gateway and streams a flite-spoken answer as PCMU RTP
 * (after enough silence for the greeting and the question); the gateway answers, the voice
 * pipeline runs the recipe, and the agent's recorded audio is transcribed offline per branch.
 */
describe('a real SIP call into a recipe (SIPp -> gateway -> voice pipeline)', function () {
  this.timeout(120_000);
  let fixture: GatewayFixture;
  let dir: string;
  let handler: RecipeCallHandler;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'vap-voice-sip-'));
    handler = new RecipeCallHandler(dir);
    fixture = await startGatewayFixture({ callHandler: handler });
  });
  after(async () => {
    await fixture?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function callerScenario(name: string, answer: string): Promise<string> {
    const speech = await fliteSpeech(answer);
    const padded = new Int16Array(8000 * 6 + speech.length + 8000 * 6);
    padded.set(speech, 8000 * 6);
    await writeWav(path.join(dir, `${name}-pcm.wav`), padded);
    const wav = path.join(dir, `${name}.wav`);
    await run('sox', [path.join(dir, `${name}-pcm.wav`), '-r', '8000', '-c', '1', '-e', 'u-law', wav]);
    const template = await readFile(path.join(scenarioDir, 'uac-invite-expect-200-gateway-bye.xml'), 'utf8');
    const scenario = template.replace('rtp_stream="caller.wav,1,0"', `rtp_stream="${wav},1,0"`).replace('<recv request="BYE" timeout="15000"/>', '<recv request="BYE" timeout="40000"/>');
    assert.notEqual(scenario, template);
    const file = path.join(dir, `${name}.xml`);
    await writeFile(file, scenario);
    return path.relative(scenarioDir, file);
  }

  for (const [branch, answer, path_, expected, never] of [
    ['yes', 'yes I will come', ['greet', 'question', 'decide', 'bye_yes'], /wonderful|see you/, /cancelled/],
    ['no', 'no I want to cancel', ['greet', 'question', 'decide', 'bye_no'], /cancelled/, /wonderful/],
  ] as const) {
    it(`caller answers "${answer}": the ${branch} branch is taken and heard`, async () => {
      const before = handler.results.length;
      const sipp = await runSipp({ scenario: await callerScenario(branch, answer), target: fixture.target, service: numbers.trunkDid, timeoutMs: 60_000 });
      assert.equal(sipp.successful, 1, `SIPp: ${sipp.errors || sipp.stdout.slice(-2000)}`);
      assert.equal(handler.results.length, before + 1);
      const { result, recording } = await handler.results[before]!;
      assert.deepEqual(result.path, path_, JSON.stringify(result.transcript));
      const heard = await transcribe(await agentChannel(recording), appointmentVocabulary);
      assert.match(heard, /clinic/, `agent audio transcribed as: ${heard}`);
      assert.match(heard, expected, `agent audio transcribed as: ${heard}`);
      assert.doesNotMatch(heard, never, `agent audio transcribed as: ${heard}`);
    });
  }
});
