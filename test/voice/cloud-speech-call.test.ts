import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { createLogger } from '../../core/logger.js';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import type { TranscriptLine } from '../../control-api/features/calls/call-types.js';
import { defaultUnsupportedLanguageMessages } from '../../control-api/features/gateway-adapters/call-speech.js';
import { RecipeCallHandler } from '../../control-api/features/gateway-adapters/recipe-call-handler.js';
import { QuickJsCodeRunner } from '../../control-api/features/recipes/code-sandbox/quickjs-code-runner.js';
import { platformServices } from '../../control-api/features/recipes/platform-services.js';
import { numberDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { tenantCallSpeech } from '../../control-api/model/tenants/tenant-speech.js';
import { createTenantsRepository } from '../../control-api/model/tenants/tenants-repository.js';
import { frameLevelDb } from '../../media/voice/vad.js';
import { writeWav } from '../../media/wav/wav.js';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/fake-deepgram.js';
import { startFakeTtsServer, type FakeTtsServer } from '../fakes/fake-tts-servers.js';
import { startGatewayFixture, type GatewayFixture } from '../gateway/gateway-harness.js';
import { runSipp, scenarioDir } from '../helpers/sipp.js';
import { agentChannel, appointmentRecipe, fliteSpeech } from './voice-harness.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

const run = promisify(execFile);
const box = testBox();
const defs = () => createResourceDefinitions({ secretBox: box });
const deepgramKey = 'dg-live-key-0123456789abcdef';
const ttsKey = 'xi-live-key-0123456789abcdef';

/**
 * Phone calls use the tenant's cloud speech (settings.speech, sealed in the store and opened per
 * call): SIPp calls the gateway, RecipeCallHandler runs the number's recipe with Deepgram (live STT
 * over WebSocket) and ElevenLabs (streaming TTS), both loopback fakes speaking the wire protocols.
 * Providers failing mid-call fall back to pocketsphinx/espeak-ng; a language nothing recognises
 * is told so and ends with a precise end reason.
 */
describe("cloud speech on phone calls: the tenant's settings pick the providers", function () {
  this.timeout(240_000);
  let fx: GatewayFixture;
  let dir: string;
  let code: QuickJsCodeRunner;
  let deepgram: FakeDeepgram;
  let tts: FakeTtsServer;
  /** What the fake Deepgram "hears" in any audio. */
  let heardByCloud = '';
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  const logs = () => logLines.map((l) => JSON.parse(l) as Record<string, unknown>);

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'vap-cloud-speech-'));
    code = new QuickJsCodeRunner({ workers: 1 });
    deepgram = await startFakeDeepgram({ apiKey: deepgramKey, transcriptFor: (bytes) => (bytes > 0 ? heardByCloud : '') });
    tts = await startFakeTtsServer(ttsKey);
    const logger = createLogger({ level: 'debug' }, sink);
    fx = await startGatewayFixture({}, (store) => ({
      callHandler: new RecipeCallHandler({
        db: store.db,
        recorder: new CallRecorder({ db: store.db, onConversationEnded: queueCallAnalysis() }),
        services: platformServices({ db: store.db, box, code, logger }),
        logger,
        recordingsDir: path.join(dir, 'recordings'),
        turn: { endpointSilenceMs: 600 },
        speech: tenantCallSpeech(store.db, createTenantsRepository(box)),
      }),
    }));
    const db = fx.store.db;
    // acme: Deepgram for every language (pocketsphinx behind it for English) and ElevenLabs voices.
    await createTenantsRepository(box).update(db, fx.ids.tenantId, {
      name: 'Acme',
      timezone: 'UTC',
      settings: {
        ssrfAllowlist: [],
        speech: {
          deepgram: { apiKey: deepgramKey, baseUrl: deepgram.url },
          elevenlabs: { apiKey: ttsKey, baseUrl: tts.url },
          stt: [],
          unsupportedLanguageMessages: {},
        },
      },
    });
    await defs().recipe.repository.create(db, fx.ids.tenantId, { ...appointmentRecipe, name: 'Clinic' } as never);
    for (const [name, language] of [['cloud-hindi', 'hi-IN'], ['cloud-english', 'en-US']] as const) {
      await defs().speechProfile.repository.create(db, fx.ids.tenantId, { name, language, gender: 'female', provider: 'elevenlabs', voiceName: `eleven-${name}` } as never);
    }
    await defs().sipTrunk.repository.create(db, fx.ids.tenantId, trunkDoc('cloud-carrier', {
      inbound: { terminationAddresses: ['127.0.0.7'], dids: ['+914440000091', '+914440000092', '+914440000094'] },
    }) as never);
    const number = (e164: string, language: string, voice: string) =>
      defs().phoneNumber.repository.create(db, fx.ids.tenantId, numberDoc(e164, 'Clinic', {
        provider: { type: 'customSipTrunk', trunk: 'cloud-carrier' },
        language,
        voice,
        boostedKeywords: ['yes', 'no', 'will', 'come', 'cancel'],
      }) as never);
    await number('+914440000091', 'hi-IN', 'cloud-hindi');
    await number('+914440000092', 'en-US', 'cloud-english');
    await number('+914440000094', 'hi-IN', 'cloud-hindi');
    // other: no settings.speech at all, a Hindi number whose recipe listens.
    await defs().recipe.repository.create(db, fx.ids.otherTenantId, { ...appointmentRecipe, name: 'Clinic' } as never);
    await defs().sipTrunk.repository.create(db, fx.ids.otherTenantId, trunkDoc('other-carrier', {
      inbound: { terminationAddresses: ['127.0.0.8'], dids: ['+914440000093'] },
    }) as never);
    await defs().phoneNumber.repository.create(db, fx.ids.otherTenantId, numberDoc('+914440000093', 'Clinic', {
      provider: { type: 'customSipTrunk', trunk: 'other-carrier' },
      language: 'hi-IN',
    }) as never);
  });

  after(async () => {
    await fx?.close();
    await code?.close();
    await deepgram?.close();
    await tts?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const callRow = (number: string) => fx.store.db.selectFrom('calls').selectAll().where('phone_number', '=', number).executeTakeFirst();
  async function ended(number: string): Promise<NonNullable<Awaited<ReturnType<typeof callRow>>>> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const row = await callRow(number);
      if (row?.status === 'ended' || Date.now() > deadline) {
        assert.ok(row, `no call record for ${number}`);
        assert.equal(row.status, 'ended');
        return row;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const transcriptOf = async (callId: string): Promise<TranscriptLine[]> =>
    (await fx.store.db.selectFrom('call_transcripts').select('entries').where('call_id', '=', callId).executeTakeFirstOrThrow()).entries as TranscriptLine[];

  /** The caller: `leadMs` of silence through the greeting and the question, then a flite answer. */
  async function callerScenario(name: string, answer: string, leadMs: number): Promise<string> {
    const speech = await fliteSpeech(answer);
    const padded = new Int16Array((8 * leadMs) + speech.length + 8000 * 8);
    padded.set(speech, 8 * leadMs);
    await writeWav(path.join(dir, `${name}-pcm.wav`), padded);
    const wav = path.join(dir, `${name}.wav`);
    await run('sox', [path.join(dir, `${name}-pcm.wav`), '-r', '8000', '-c', '1', '-e', 'u-law', wav]);
    const template = await readFile(path.join(scenarioDir, 'uac-invite-expect-200-gateway-bye.xml'), 'utf8');
    const scenario = template.replace('rtp_stream="caller.wav,1,0"', `rtp_stream="${wav},1,0"`).replace('<recv request="BYE" timeout="45000"/>', '<recv request="BYE" timeout="60000"/>');
    assert.notEqual(scenario, template);
    const file = path.join(dir, `${name}.xml`);
    await writeFile(file, scenario);
    return path.relative(scenarioDir, file);
  }

  const assertNoKeyLogged = (): void => {
    const all = logLines.join('');
    assert.ok(!all.includes(deepgramKey) && !all.includes(ttsKey), 'no provider key in any log line');
  };

  it("Deepgram + ElevenLabs: Deepgram gets the caller's audio, ElevenLabs the agent's lines, and the recipe takes the branch of Deepgram's transcript", async () => {
    // The caller says "yes" (pocketsphinx would hear it); the cloud transcript says otherwise,
    // so the branch taken proves whose transcript drove the recipe.
    heardByCloud = 'nahin, please cancel it';
    const before = deepgram.connections.length;
    const sipp = await runSipp({ scenario: await callerScenario('cloud', 'yes I will come', 9000), target: fx.target, service: '+914440000091', localIp: '127.0.0.7', timeoutMs: 90_000 });
    assert.equal(sipp.successful, 1, `SIPp: ${sipp.errors || sipp.stdout.slice(-2000)}`);
    const row = await ended('+914440000091');
    assert.equal(row.end_reason, 'closed');
    assert.equal(row.disposition, 'cancelled');
    const opened = deepgram.connections.slice(before);
    assert.ok(opened.length >= 1, 'Deepgram was streamed to');
    assert.equal(opened[0]!.get('language'), 'hi-IN', "the number's language");
    assert.ok(opened[0]!.getAll('keyterm').includes('cancel'), 'boosted keywords travel as keyterms');
    assert.ok(deepgram.audioBytes.slice(before).reduce((a, b) => a + b, 0) > 8000, 'the caller audio reached Deepgram');
    const spoken = tts.requests.filter((r) => r.voice === 'eleven-cloud-hindi').map((r) => r.text);
    assert.ok(spoken.includes('Hello, this is the clinic calling.'), JSON.stringify(spoken));
    assert.ok(spoken.some((t) => /cancelled/.test(t)), `the branch's closing line went to ElevenLabs: ${JSON.stringify(spoken)}`);
    const lines = await transcriptOf(row.id);
    assert.deepEqual(lines.filter((l) => l.speaker === 'caller').map((l) => l.text), ['nahin, please cancel it']);
    assertNoKeyLogged();
  });

  it('providers failing mid-call: Deepgram (1008, dropped) falls back to pocketsphinx, ElevenLabs cut mid-sentence to espeak-ng; the call goes on', async () => {
    heardByCloud = 'never used';
    deepgram.failMidStream = { afterBytes: 3200, code: 1008, reason: 'DATA-0000' };
    tts.cutAfterBytes = 4000;
    const ttsBefore = tts.requests.length;
    const logBefore = logLines.length;
    try {
      const sipp = await runSipp({ scenario: await callerScenario('failing', 'yes I will come', 11_000), target: fx.target, service: '+914440000092', localIp: '127.0.0.7', timeoutMs: 90_000 });
      assert.equal(sipp.successful, 1, `SIPp: ${sipp.errors || sipp.stdout.slice(-2000)}`);
    } finally {
      deepgram.failMidStream = undefined;
      tts.cutAfterBytes = undefined;
    }
    const row = await ended('+914440000092');
    // pocketsphinx heard the flite "yes": the recipe went on to its yes branch and closed.
    const lines = await transcriptOf(row.id);
    assert.equal(row.end_reason, 'closed', JSON.stringify(lines));
    assert.equal(row.disposition, 'confirmed', JSON.stringify(lines));
    assert.ok(lines.some((l) => l.speaker === 'agent' && l.text === 'Wonderful, we will see you tomorrow. Goodbye.'), JSON.stringify(lines));
    const mine = logLines.slice(logBefore).map((l) => JSON.parse(l) as Record<string, unknown>);
    const stt = mine.find((l) => l['kind'] === 'stt' && l['from'] === 'deepgram');
    assert.ok(stt, 'the STT fallback was logged');
    assert.equal(stt['msg'], 'speech-to-text provider failed: falling back to pocketsphinx');
    assert.equal(stt['reason'], 'deepgram: closed 1008 DATA-0000');
    assert.equal(stt['forRestOfCall'], true);
    const ttsFallbacks = mine.filter((l) => l['kind'] === 'tts' && l['from'] === 'elevenlabs');
    assert.ok(ttsFallbacks.length >= 1, 'the TTS fallback was logged');
    assert.equal(ttsFallbacks[0]!['msg'], 'text-to-speech provider failed: falling back to espeak-ng');
    assert.equal(ttsFallbacks[0]!['midStream'], true);
    assert.match(String(ttsFallbacks[0]!['reason']), /^elevenlabs: stream broke/);
    // Four sentences, each cut: after three transient failures in a row ElevenLabs is dropped.
    assert.equal(tts.requests.length - ttsBefore, 3, JSON.stringify(tts.requests.slice(ttsBefore)));
    assert.equal(ttsFallbacks.at(-1)!['forRestOfCall'], true);
    assertNoKeyLogged();
  });

  it('a hi-IN number with no cloud STT: the caller hears at once, in Hindi, that the line cannot understand them, and the call ends unsupported_language', async () => {
    const sipp = await runSipp({ scenario: 'uac-invite-expect-200-gateway-bye.xml', target: fx.target, service: '+914440000093', localIp: '127.0.0.8', timeoutMs: 30_000 });
    // The stock scenario wants the gateway's BYE within 15 s of the ACK (before: 21 s of silence).
    assert.equal(sipp.successful, 1, `SIPp: ${sipp.errors || sipp.stdout.slice(-2000)}`);
    const row = await ended('+914440000093');
    assert.equal(row.end_reason, 'unsupported_language');
    assert.equal(row.disposition, null, 'no success disposition for a call nobody could understand');
    const lines = await transcriptOf(row.id);
    assert.deepEqual(lines.map((l) => [l.speaker, l.text]), [['agent', defaultUnsupportedLanguageMessages['hi']]]);
    assert.ok(row.recording_ref, 'recorded');
    const agent = await agentChannel(path.join(dir, 'recordings', row.recording_ref));
    let firstVoiced = -1;
    let voicedFrames = 0;
    for (let i = 0; i + 160 <= agent.length; i += 160) {
      if (frameLevelDb(agent.subarray(i, i + 160)) > -45) {
        voicedFrames++;
        if (firstVoiced < 0) firstVoiced = i / 8;
      }
    }
    assert.ok(firstVoiced >= 0 && firstVoiced < 1500, `the message starts at once, not after dead air (first voice at ${firstVoiced} ms)`);
    assert.ok(voicedFrames * 20 > 2000, `the message was spoken (${voicedFrames * 20} ms voiced)`);
    const warn = logs().find((l) => l['msg'] === 'unsupported language: telling the caller and ending the call');
    assert.match(String(warn?.['reason']), /no speech-to-text for hi-IN/);
  });

  it('a hi-IN number whose only STT (Deepgram) refuses the key mid-call: the recipe stops, the caller is told, end reason speech_unavailable', async () => {
    deepgram.refuseWith = 401;
    try {
      const sipp = await runSipp({ scenario: 'uac-invite-expect-200-gateway-bye.xml', target: fx.target, service: '+914440000094', localIp: '127.0.0.7', timeoutMs: 30_000 });
      assert.equal(sipp.successful, 1, `SIPp: ${sipp.errors || sipp.stdout.slice(-2000)}`);
    } finally {
      deepgram.refuseWith = undefined;
    }
    const row = await ended('+914440000094');
    assert.equal(row.end_reason, 'speech_unavailable');
    assert.equal(row.disposition, null);
    const lines = await transcriptOf(row.id);
    assert.equal(lines.at(-1)?.text, defaultUnsupportedLanguageMessages['hi']);
    assert.ok(!lines.some((l) => /Goodbye/.test(l.text)), 'the recipe did not go on to a closing line');
    const lost = logs().find((l) => l['kind'] === 'stt' && l['to'] === 'none' && l['forRestOfCall'] === true);
    assert.match(String(lost?.['reason']), /^deepgram: handshake refused with HTTP 401( \(.+\))?$/);
    assertNoKeyLogged();
  });
});
