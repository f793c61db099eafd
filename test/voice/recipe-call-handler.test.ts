import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import type { CallTransfer } from '../../core/ports/call-transfer.js';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import type { CallStep, TranscriptLine } from '../../control-api/features/calls/call-types.js';
import { RecipeCallHandler } from '../../control-api/features/gateway-adapters/recipe-call-handler.js';
import { QuickJsCodeRunner } from '../../control-api/features/recipes/code-sandbox/quickjs-code-runner.js';
import { platformServices } from '../../control-api/features/recipes/platform-services.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { numberDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import { SipOriginator } from '../../gateway/outbound/sip-originator.js';
import { GatewayCallTransfer } from '../../gateway/transfer/gateway-call-transfer.js';
import { writeWav } from '../../media/wav/wav.js';
import { startSippUas } from '../gateway/outbound-sipp-uas.js';
import { fixtureOriginator, startGatewayFixture, type GatewayFixture } from '../gateway/gateway-harness.js';
import { runSipp, scenarioDir } from '../helpers/sipp.js';
import { beepEnd, calleeScenario, concat, machineAudio, silence, trimmedFlite, verdictCount, voicedRuns } from './callee-audio.js';
import { agentChannel, appointmentRecipe, callerChannel, appointmentVocabulary, fliteSpeech, transcribe } from './voice-harness.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

const run = promisify(execFile);
/** One key for the whole suite: trunk passwords sealed on create are opened when dialling. */
const box = testBox();
const defs = () => createResourceDefinitions({ secretBox: box });
const clinicNumber = '+914440000077';
const deskNumber = '+914440000078';
const brokenNumber = '+914440000079';

/**
 * The composition `npm start` runs: SIPp calls a number provisioned through the domain
 * repositories on PostgreSQL; the gateway hands the call to RecipeCallHandler, which runs the
 * number's recipe through the voice pipeline, records the audio, and stores the call record
 * (queueing its analysis) after hang-up.
 */
describe('RecipeCallHandler: an inbound SIP call runs the number\'s recipe and is recorded', function () {
  this.timeout(180_000);
  let fx: GatewayFixture;
  let dir: string;
  let code: QuickJsCodeRunner;
  /** Makes the tenant's runtime services fail, as a broken tenant LLM setting would. */
  let servicesFail = false;
  let handler: RecipeCallHandler;
  let originator: SipOriginator;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'vap-recipe-call-'));
    code = new QuickJsCodeRunner({ workers: 1 });
    const logger = pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' });
    // As in the gateway role: the transfer needs the started stack, so it is bound after start.
    const transferSlot: { impl?: CallTransfer } = {};
    fx = await startGatewayFixture({}, (store) => {
      const services = platformServices({ db: store.db, box, code, logger });
      handler = new RecipeCallHandler({
        db: store.db,
        recorder: new CallRecorder({ db: store.db, onConversationEnded: queueCallAnalysis() }),
        services: async (tenantId) => {
          if (servicesFail) throw new Error('tenant LLM settings are unusable');
          return services(tenantId);
        },
        logger,
        recordingsDir: path.join(dir, 'recordings'),
        turn: { endpointSilenceMs: 600 },
        transfer: { transfer: (id, target, signal) => (transferSlot.impl as CallTransfer).transfer(id, target, signal) },
      });
      return { callHandler: handler };
    });
    originator = fixtureOriginator(fx, box, {
      logger,
      onAnswered: (call, request) => handler.handle(call, request),
    });
    transferSlot.impl = new GatewayCallTransfer({ stack: fx.gateway.stack, registry: fx.gateway.registry, media: fx.media, originator, clock: systemClock, logger, ringTimeoutMs: 10_000 });
    await defs().recipe.repository.create(fx.store.db, fx.ids.tenantId, { ...appointmentRecipe, name: 'Clinic' } as never);
    await defs().sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc('clinic-carrier', {
      inbound: { terminationAddresses: ['127.0.0.5'], dids: [clinicNumber, deskNumber, brokenNumber] },
    }) as never);
    await defs().phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(clinicNumber, 'Clinic', {
      provider: { type: 'customSipTrunk', trunk: 'clinic-carrier' },
      language: 'en-US',
      boostedKeywords: ['yes', 'no', 'will', 'come', 'cancel'],
    }) as never);
  });
  async function ended(number: string): Promise<NonNullable<Awaited<ReturnType<typeof callRow>>>> {
    // The record is completed after the BYE; under CPU load that may take a moment.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const row = await callRow(number);
      if (row?.status === 'ended' || Date.now() > deadline) {
        assert.ok(row, `no call record for ${number}`);
        return row;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const callRow = (number: string) =>
    fx.store.db.selectFrom('calls').selectAll().where('tenant_id', '=', fx.ids.tenantId).where('phone_number', '=', number).executeTakeFirst();

  after(async () => {
    await fx?.close();
    await code?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * The caller: silence through the greeting and the question, then a flite-spoken answer, once.
   * The two lines take about 5 s, more with the suite's load on the speech engine. Twice in full
   * runs an answer at 6 s was heard "that will come" and asked again (the block then left through
   * its fallback); the likely cause, not proven, is an answer begun over the question's last
   * words and cut by the barge-in. So it waits 8 s.
   */
  async function callerScenario(answer: string): Promise<string> {
    const speech = await fliteSpeech(answer);
    const padded = new Int16Array(8000 * 8 + speech.length + 8000 * 8);
    padded.set(speech, 8000 * 8);
    await writeWav(path.join(dir, 'caller-pcm.wav'), padded);
    const wav = path.join(dir, 'caller.wav');
    await run('sox', [path.join(dir, 'caller-pcm.wav'), '-r', '8000', '-c', '1', '-e', 'u-law', wav]);
    const template = await readFile(path.join(scenarioDir, 'uac-invite-expect-200-gateway-bye.xml'), 'utf8');
    const scenario = template.replace('rtp_stream="caller.wav,1,0"', `rtp_stream="${wav},1,0"`).replace('<recv request="BYE" timeout="15000"/>', '<recv request="BYE" timeout="60000"/>');
    assert.notEqual(scenario, template);
    const file = path.join(dir, 'caller.xml');
    await writeFile(file, scenario);
    return path.relative(scenarioDir, file);
  }

  it('greets, asks, takes the branch the caller chose, hangs up, and stores the call with its transcript and recording', async () => {
    const sipp = await runSipp({ scenario: await callerScenario('yes I will come'), target: fx.target, service: clinicNumber, localIp: '127.0.0.5', timeoutMs: 90_000 });
    assert.equal(sipp.successful, 1, `SIPp: ${sipp.errors || sipp.stdout.slice(-2000)}`);

    const row = await ended(clinicNumber);
    assert.equal(row.status, 'ended');
    assert.equal(row.direction, 'inbound');
    assert.equal(row.remote_number, '+919800000001');
    assert.equal(row.amd_verdict, null, 'inbound calls are not screened for answering machines');
    assert.equal(row.end_reason, 'closed');
    const transcript = await fx.store.db.selectFrom('call_transcripts').select(['entries', 'steps']).where('call_id', '=', row.id).executeTakeFirstOrThrow();
    // Any exit but confirm (a fallback after misheard turns too) leads to the 'cancelled' close: the path and turns say which.
    assert.equal(row.disposition, 'confirmed', JSON.stringify(transcript.steps));
    assert.ok(['analyzing', 'completed', 'failed'].includes(row.analysis_status), row.analysis_status);
    assert.ok(row.recording_ref, 'no recording reference');

    const lines = transcript.entries as TranscriptLine[];
    const agent = lines.filter((l) => l.speaker === 'agent').map((l) => l.text);
    assert.equal(agent[0], 'Hello, this is the clinic calling.');
    assert.ok(agent.includes('Wonderful, we will see you tomorrow. Goodbye.'), JSON.stringify(lines));
    assert.ok(lines.some((l) => l.speaker === 'caller'), JSON.stringify(lines));
    // The path taken is stored with the call: greet -> question (the caller's intent) -> decide -> bye_yes.
    const steps = (await fx.store.db.selectFrom('call_transcripts').select('steps').where('call_id', '=', row.id).executeTakeFirstOrThrow()).steps as CallStep[];
    assert.deepEqual(steps.map((s) => [s.blockId, s.type, s.exit ?? `end:${s.end}`]), [
      ['greet', 'message', 'next'],
      ['question', 'smartAi', 'confirm'],
      ['decide', 'condition', 'attending'],
      ['bye_yes', 'close', 'end:closed'],
    ], JSON.stringify(steps));

    const heard = await transcribe(await agentChannel(path.join(dir, 'recordings', row.recording_ref)), appointmentVocabulary);
    assert.match(heard, /clinic/, `agent audio transcribed as: ${heard}`);
    assert.match(heard, /wonderful|see you/, `agent audio transcribed as: ${heard}`);
  });

  it('a Transfer block bridges the caller to the target (B2BUA) and the call is recorded as transferred', async () => {
    const target = await startSippUas('uas-answer-expect-bye.xml', { timeoutMs: 60_000 });
    await defs().recipe.repository.create(fx.store.db, fx.ids.tenantId, {
      name: 'Front-desk',
      startBlockId: 'handoff',
      blocks: [
        { id: 'handoff', type: 'transfer', settings: { target: `sip:desk@127.0.0.1:${target.port}` } },
        { id: 'sorry', type: 'close', settings: { closingScript: 'Sorry, nobody is free.', disposition: 'missed' } },
      ],
      connections: [{ from: 'handoff', exit: 'failed', to: 'sorry' }],
    } as never);
    await defs().phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(deskNumber, 'Front-desk', {
      provider: { type: 'customSipTrunk', trunk: 'clinic-carrier' },
      language: 'en-US',
    }) as never);
    // The caller stays 8 s (bridged to the target), then hangs up: both legs must end.
    const template = await readFile(path.join(scenarioDir, 'uac-invite-expect-200-caller-bye.xml'), 'utf8');
    const scenario = template.replace('<pause milliseconds="2500"/>', '<pause milliseconds="8000"/>');
    assert.notEqual(scenario, template);
    await writeFile(path.join(dir, 'desk-caller.xml'), scenario);
    const sipp = await runSipp({ scenario: path.relative(scenarioDir, path.join(dir, 'desk-caller.xml')), target: fx.target, service: deskNumber, localIp: '127.0.0.5', timeoutMs: 60_000 });
    assert.equal(sipp.successful, 1, `SIPp: ${sipp.errors || sipp.stdout.slice(-2000)}`);
    const t = await target.done;
    assert.equal(t.exitCode, 0, `the target was bridged and got the BYE after the caller hung up:\n${t.errors}\n${t.messages.slice(-2000)}`);
    const row = await ended(deskNumber);
    assert.equal(row.end_reason, 'transferred');
    assert.equal(row.disposition, null);
  });

  it('a call whose run cannot start is ended by the gateway (BYE) and recorded with end reason error', async () => {
    await defs().phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(brokenNumber, 'Clinic', {
      provider: { type: 'customSipTrunk', trunk: 'clinic-carrier' },
    }) as never);
    servicesFail = true;
    try {
      const sipp = await runSipp({ scenario: 'uac-invite-expect-200-gateway-bye.xml', target: fx.target, service: brokenNumber, localIp: '127.0.0.5', timeoutMs: 30_000 });
      assert.equal(sipp.successful, 1, `SIPp: ${sipp.errors || sipp.stdout.slice(-2000)}`);
    } finally {
      servicesFail = false;
    }
    const row = await ended(brokenNumber);
    assert.equal(row.end_reason, 'error');
    assert.equal(row.analysis_status, 'analyzing');
    assert.equal(fx.gateway.registry.size, 0, 'no call left behind');
  });

  it('an answered campaign call (SipOriginator) runs its recipe with the campaign variables and is recorded as outbound', async () => {
    const reminderNumber = '+914440000080';
    await defs().recipe.repository.create(fx.store.db, fx.ids.tenantId, {
      name: 'Reminder',
      startBlockId: 'say',
      blocks: [
        { id: 'say', type: 'message', settings: { text: 'Hello {{name}}, your order ships today.' } },
        { id: 'bye', type: 'close', settings: { closingScript: 'Goodbye.', disposition: 'reminded' } },
      ],
      connections: [{ from: 'say', exit: 'next', to: 'bye' }],
    } as never);
    const uas = await startSippUas('uas-answer-expect-bye.xml', { timeoutMs: 60_000 });
    const trunk = await defs().sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc('outbound-carrier', {
      inbound: { terminationAddresses: ['127.0.0.31'], dids: [reminderNumber] },
      outbound: { address: '127.0.0.1', port: uas.port, transport: 'udp', username: 'acme-out', password: 'trunk-secret-1' },
    }) as never);
    const number = await defs().phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(reminderNumber, 'Reminder', {
      provider: { type: 'customSipTrunk', trunk: 'outbound-carrier' },
      language: 'en-US',
    }) as never);
    const recipe = await fx.store.db.selectFrom('recipes').select('id').where('tenant_id', '=', fx.ids.tenantId).where('name', '=', 'Reminder').executeTakeFirstOrThrow();
    const campaignId = randomUUID();
    const messageId = randomUUID();
    const result = await originator.originate({
      from: { e164: reminderNumber, phoneNumberId: number.id, sipTrunkId: trunk.id },
      to: '+919812345678',
      ringTimeoutMs: 15_000,
      startLogic: { mode: 'immediately' },
      context: { tenantId: fx.ids.tenantId, campaignId, messageId, attempt: 2, recipeId: recipe.id, variables: { name: 'Asha' } },
      signal: new AbortController().signal,
    });
    assert.equal(result.outcome, 'answered');
    const t = await uas.done;
    assert.equal(t.exitCode, 0, `the callee got our BYE:\n${t.errors}\n${t.messages.slice(-2000)}`);
    const row = await ended(reminderNumber);
    assert.equal(row.direction, 'outbound');
    assert.equal(row.remote_number, '+919812345678');
    assert.equal(row.campaign_id, campaignId);
    assert.deepEqual([row.message_id, row.attempt], [messageId, 2], 'the record names the SendMessage and the attempt (a retry here)');
    assert.equal(row.disposition, 'reminded');
    // This callee sends no audio at all: nothing heard is no evidence either way.
    assert.equal(row.amd_verdict, 'unknown');
    const transcript = await fx.store.db.selectFrom('call_transcripts').select('entries').where('call_id', '=', row.id).executeTakeFirstOrThrow();
    const agent = (transcript.entries as TranscriptLine[]).filter((l) => l.speaker === 'agent').map((l) => l.text);
    assert.deepEqual(agent, ['Hello Asha, your order ships today.', 'Goodbye.']);
  });

  async function dialCallee(e164: string, voicemail: Record<string, unknown>, scenario: string): Promise<NonNullable<Awaited<ReturnType<typeof callRow>>>> {
    const name = `Campaign ${e164.slice(1)}`;
    await defs().recipe.repository.create(fx.store.db, fx.ids.tenantId, {
      name,
      startBlockId: 'say',
      globalSettings: { voicemail },
      blocks: [
        { id: 'say', type: 'message', settings: { text: 'Hello, this is a reminder from the clinic about your appointment tomorrow morning at ten.' } },
        { id: 'bye', type: 'close', settings: { closingScript: 'Goodbye.', disposition: 'reminded' } },
      ],
      connections: [{ from: 'say', exit: 'next', to: 'bye' }],
    } as never);
    const uas = await startSippUas(scenario, { timeoutMs: 60_000 });
    const trunkName = `callee-${e164.slice(-2)}`;
    const trunk = await defs().sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc(trunkName, {
      inbound: { terminationAddresses: ['127.0.0.32'], dids: [e164] },
      outbound: { address: '127.0.0.1', port: uas.port, transport: 'udp', username: 'acme-out', password: 'trunk-secret-1' },
    }) as never);
    const number = await defs().phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(e164, name, {
      provider: { type: 'customSipTrunk', trunk: trunkName },
      language: 'en-US',
    }) as never);
    const recipe = await fx.store.db.selectFrom('recipes').select('id').where('tenant_id', '=', fx.ids.tenantId).where('name', '=', name).executeTakeFirstOrThrow();
    const result = await originator.originate({
      from: { e164, phoneNumberId: number.id, sipTrunkId: trunk.id },
      to: '+919812340000',
      ringTimeoutMs: 15_000,
      startLogic: { mode: 'immediately' },
      context: { tenantId: fx.ids.tenantId, campaignId: randomUUID(), messageId: randomUUID(), attempt: 1, recipeId: recipe.id, variables: {} },
      signal: new AbortController().signal,
    });
    assert.equal(result.outcome, 'answered');
    const t = await uas.done;
    assert.equal(t.exitCode, 0, `the callee got our BYE:\n${t.errors}\n${t.messages.slice(-2000)}`);
    return ended(e164);
  }

  it('an answering machine ("Hello, [pause] you have reached ...", beep) on a campaign call: verdict machine, the agent says nothing before the beep, the message follows it', async () => {
    const message = 'Please call the clinic back about your appointment.';
    const machinesBefore = await verdictCount('machine');
    const row = await dialCallee('+914440000081', { action: 'leaveMessage', messages: { hi: 'कृपया क्लिनिक को वापस कॉल करें', en: message } }, await calleeScenario(dir, 'machine-pause', await machineAudio()));
    assert.equal(row.amd_verdict, 'machine');
    assert.equal(await verdictCount('machine'), machinesBefore + 1, 'counted in vap_amd_verdicts_total');
    assert.equal(row.end_reason, 'voicemail');
    assert.equal(row.disposition, 'voicemail_message_left');
    const transcript = await fx.store.db.selectFrom('call_transcripts').select('entries').where('call_id', '=', row.id).executeTakeFirstOrThrow();
    const agent = (transcript.entries as TranscriptLine[]).filter((l) => l.speaker === 'agent').map((l) => l.text);
    assert.ok(!agent.some((line) => /reminder|Goodbye/.test(line)), `the recipe spoke: ${agent.join(' | ')}`);
    // The recording starts at answer. The agent's first words waited for the verdict, and the
    // verdict was machine: the agent channel is silent through the greeting and the beep, and the
    // message follows the beep.
    assert.ok(row.recording_ref, 'recorded');
    const file = path.join(dir, 'recordings', row.recording_ref);
    const agentPcm = await agentChannel(file);
    // The beep as recorded on the caller channel: the recording's own timeline, which keeps the
    // two sides in step on the media tick (it may drop caller frames that arrive in bursts, so
    // the sent audio's times are not the recording's).
    const beepEndsAtMs = beepEnd(await callerChannel(file));
    assert.ok(beepEndsAtMs > 0, 'the beep is on the caller channel of the recording');
    assert.ok(row.amd_ms !== null && row.amd_ms < beepEndsAtMs, `verdict after ${row.amd_ms} ms, the beep ended at ${beepEndsAtMs} ms`);
    const runs = voicedRuns(agentPcm);
    const beforeBeep = runs.filter(([from]) => from < beepEndsAtMs - 100);
    assert.deepEqual(beforeBeep, [], `agent audio before the beep ended (${beepEndsAtMs} ms; verdict at ${row.amd_ms} ms): ${JSON.stringify(runs)}`);
    const messageRun = runs.find(([from]) => from >= beepEndsAtMs - 100);
    assert.ok(messageRun && messageRun[0] <= beepEndsAtMs + 1500, `message starts at ${messageRun?.[0]} ms, beep ends at ${beepEndsAtMs} ms: ${JSON.stringify(runs)}`);
    const heard = await transcribe(agentPcm.subarray(Math.round(beepEndsAtMs * 8)), ['please call the clinic back about your appointment', 'hello this is a reminder from the clinic', 'goodbye']);
    assert.match(heard, /clinic|appointment|call/);
    assert.doesNotMatch(heard, /goodbye/);
  });

  it('an answering machine on a campaign call with voicemail handling "disconnect": we hang up before its beep, having said nothing', async () => {
    const greeting = await machineAudio();
    const row = await dialCallee('+914440000082', { action: 'disconnect' }, await calleeScenario(dir, 'machine-disconnect', greeting));
    assert.equal(row.amd_verdict, 'machine');
    assert.equal(row.end_reason, 'voicemail');
    assert.equal(row.disposition, 'voicemail_disconnected');
    assert.ok(row.duration_ms !== null, 'duration recorded');
    assert.ok(row.duration_ms < beepEnd(greeting), `hung up ${row.duration_ms} ms after answer, the beep ends at ${beepEnd(greeting)} ms`);
    const transcript = await fx.store.db.selectFrom('call_transcripts').select('entries').where('call_id', '=', row.id).executeTakeFirstOrThrow();
    assert.deepEqual((transcript.entries as TranscriptLine[]).filter((l) => l.speaker === 'agent'), [], 'the agent said nothing to the machine');
    assert.ok(row.recording_ref, 'recorded');
    assert.deepEqual(voicedRuns(await agentChannel(path.join(dir, 'recordings', row.recording_ref))), [], 'no agent audio on the recording');
  });

  it('a person answering "Hello?" on a campaign call: verdict human, the agent speaks only after it, the recipe runs to its end', async () => {
    const hello = await trimmedFlite('Hello?');
    const row = await dialCallee('+914440000083', { action: 'leaveMessage', messages: { en: 'Please call the clinic back.' } }, await calleeScenario(dir, 'person-hello', concat(silence(400), hello, silence(15_000))));
    assert.equal(row.amd_verdict, 'human');
    // Generous: the bench measures time to verdict; this only says it came while they waited.
    assert.ok(row.amd_ms !== null && row.amd_ms <= 5000, `verdict after ${row.amd_ms} ms`);
    assert.equal(row.end_reason, 'closed');
    assert.equal(row.disposition, 'reminded');
    const transcript = await fx.store.db.selectFrom('call_transcripts').select('entries').where('call_id', '=', row.id).executeTakeFirstOrThrow();
    const agent = (transcript.entries as TranscriptLine[]).filter((l) => l.speaker === 'agent').map((l) => l.text);
    assert.deepEqual(agent, ['Hello, this is a reminder from the clinic about your appointment tomorrow morning at ten.', 'Goodbye.']);
    assert.ok(row.recording_ref, 'recorded');
    const file = path.join(dir, 'recordings', row.recording_ref);
    const firstAgentAudio = voicedRuns(await agentChannel(file))[0];
    const helloEnds = voicedRuns(await callerChannel(file)).at(-1)?.[1] ?? 0;
    assert.ok(firstAgentAudio && firstAgentAudio[0] >= helloEnds, `the agent started at ${firstAgentAudio?.[0]} ms, over the callee's hello (ended ${helloEnds} ms)`);
    // The recording's timeline and the detector's audio time may differ by a few frames.
    assert.ok(firstAgentAudio[0] >= row.amd_ms - 100, `the agent started at ${firstAgentAudio[0]} ms, before the verdict at ${row.amd_ms} ms`);
  });

  it('a person whose live answer ends in a question ("Hi, this is Priya ... How can I help you?") on a campaign call: verdict human, not hung up on, the agent waits until she has asked', async () => {
    const answer = await trimmedFlite('Hi, this is Priya from the accounts team. How can I help you?');
    const row = await dialCallee('+914440000084', { action: 'disconnect' }, await calleeScenario(dir, 'person-priya', concat(silence(300), answer, silence(15_000))));
    assert.equal(row.amd_verdict, 'human');
    assert.equal(row.end_reason, 'closed');
    assert.equal(row.disposition, 'reminded');
    assert.ok(row.recording_ref, 'recorded');
    const file = path.join(dir, 'recordings', row.recording_ref);
    const firstAgentAudio = voicedRuns(await agentChannel(file))[0];
    const questionEnds = voicedRuns(await callerChannel(file)).at(-1)?.[1] ?? 0;
    assert.ok(questionEnds >= 300 + answer.length / 8 - 300, `her answer on the recording ends at ${questionEnds} ms`);
    assert.ok(firstAgentAudio && firstAgentAudio[0] >= questionEnds, `the agent started at ${firstAgentAudio?.[0]} ms, before her question ended at ${questionEnds} ms`);
  });
});
