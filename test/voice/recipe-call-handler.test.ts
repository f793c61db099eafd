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
import { StoreTrunkRoutes } from '../../control-api/gateway-adapters/store-trunk-routes.js';
import { CallRecorder } from '../../control-api/calls/call-recorder.js';
import type { TranscriptLine } from '../../control-api/calls/call-types.js';
import { RecipeCallHandler } from '../../control-api/gateway-adapters/recipe-call-handler.js';
import { StoreCallDirectory } from '../../control-api/gateway-adapters/store-call-directory.js';
import { QuickJsCodeRunner } from '../../control-api/recipes/code-sandbox/quickjs-code-runner.js';
import { platformServices } from '../../control-api/recipes/platform-services.js';
import { createResourceDefinitions } from '../../control-api/resources/registry.js';
import { numberDoc, testBox, trunkDoc } from '../../control-api/resources/definitions/test-fixtures.js';
import { SipOriginator } from '../../gateway/outbound/sip-originator.js';
import { GatewayCallTransfer } from '../../gateway/transfer/gateway-call-transfer.js';
import { writeWav } from '../../media/wav/wav.js';
import { startSippUas } from '../gateway/outbound-sipp-uas.js';
import { startGatewayFixture, type GatewayFixture } from '../gateway/gateway-harness.js';
import { runSipp, scenarioDir } from '../helpers/sipp.js';
import { agentChannel, appointmentRecipe, appointmentVocabulary, fliteSpeech, transcribe } from './voice-harness.js';

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
        recorder: new CallRecorder({ db: store.db }),
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
    originator = new SipOriginator({
      stack: fx.gateway.stack,
      media: fx.media,
      trunks: new StoreTrunkRoutes({ db: fx.store.db, secretBox: box }),
      directory: new StoreCallDirectory({ db: fx.store.db }),
      registry: fx.gateway.registry,
      clock: systemClock,
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

  /** The caller: silence through the greeting and the question, then a flite-spoken answer. */
  async function callerScenario(answer: string): Promise<string> {
    const speech = await fliteSpeech(answer);
    const padded = new Int16Array(8000 * 6 + speech.length + 8000 * 8);
    padded.set(speech, 8000 * 6);
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
    assert.equal(row.end_reason, 'closed');
    assert.equal(row.disposition, 'confirmed');
    assert.ok(['analyzing', 'completed', 'failed'].includes(row.analysis_status), row.analysis_status);
    assert.ok(row.recording_ref, 'no recording reference');

    const transcript = await fx.store.db.selectFrom('call_transcripts').select('entries').where('call_id', '=', row.id).executeTakeFirstOrThrow();
    const lines = transcript.entries as TranscriptLine[];
    const agent = lines.filter((l) => l.speaker === 'agent').map((l) => l.text);
    assert.equal(agent[0], 'Hello, this is the clinic calling.');
    assert.ok(agent.includes('Wonderful, we will see you tomorrow. Goodbye.'), JSON.stringify(lines));
    assert.ok(lines.some((l) => l.speaker === 'caller'), JSON.stringify(lines));

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
    const result = await originator.originate({
      from: { e164: reminderNumber, phoneNumberId: number.id, sipTrunkId: trunk.id },
      to: '+919812345678',
      ringTimeoutMs: 15_000,
      startLogic: { mode: 'immediately' },
      context: { tenantId: fx.ids.tenantId, campaignId, messageId: randomUUID(), attempt: 1, recipeId: recipe.id, variables: { name: 'Asha' } },
      signal: new AbortController().signal,
    });
    assert.equal(result.outcome, 'answered');
    const t = await uas.done;
    assert.equal(t.exitCode, 0, `the callee got our BYE:\n${t.errors}\n${t.messages.slice(-2000)}`);
    const row = await ended(reminderNumber);
    assert.equal(row.direction, 'outbound');
    assert.equal(row.remote_number, '+919812345678');
    assert.equal(row.campaign_id, campaignId);
    assert.equal(row.disposition, 'reminded');
    const transcript = await fx.store.db.selectFrom('call_transcripts').select('entries').where('call_id', '=', row.id).executeTakeFirstOrThrow();
    const agent = (transcript.entries as TranscriptLine[]).filter((l) => l.speaker === 'agent').map((l) => l.text);
    assert.deepEqual(agent, ['Hello Asha, your order ships today.', 'Goodbye.']);
  });

  /** A callee whose answering machine picks up: a long greeting, a beep, then it records. */
  async function machineScenario(): Promise<{ scenario: string; beepEndsAtMs: number }> {
    const greeting = await fliteSpeech('Hi, you have reached the Sharma family. We cannot take your call right now. Please leave your name and number after the tone.');
    const beep = Int16Array.from({ length: 8 * 600 }, (_, i) => Math.round(9000 * Math.sin((2 * Math.PI * 1000 * i) / 8000)));
    const pcm = new Int16Array(greeting.length + 8 * 300 + beep.length + 8000 * 12);
    pcm.set(greeting, 0);
    pcm.set(beep, greeting.length + 8 * 300);
    await writeWav(path.join(dir, 'machine-pcm.wav'), pcm);
    const wav = path.join(dir, 'machine.wav');
    await run('sox', [path.join(dir, 'machine-pcm.wav'), '-r', '8000', '-c', '1', '-e', 'u-law', wav]);
    const template = await readFile(path.join(scenarioDir, 'uas-answer-expect-bye.xml'), 'utf8');
    const scenario = template.replace('<recv request="ACK" rtd="true" crlf="true"/>', `<recv request="ACK" rtd="true" crlf="true"/>\n  <nop><action><exec rtp_stream="${wav},1,0"/></action></nop>`);
    assert.notEqual(scenario, template);
    const file = path.join(dir, 'machine.xml');
    await writeFile(file, scenario);
    return { scenario: path.relative(scenarioDir, file), beepEndsAtMs: (greeting.length + 8 * 300 + beep.length) / 8 };
  }

  async function dialMachine(e164: string, voicemail: Record<string, unknown>): Promise<{ row: NonNullable<Awaited<ReturnType<typeof callRow>>>; beepEndsAtMs: number }> {
    const name = `Machine ${e164.slice(1)}`;
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
    const { scenario, beepEndsAtMs } = await machineScenario();
    const uas = await startSippUas(scenario, { timeoutMs: 60_000 });
    const trunkName = `machine-${e164.slice(-2)}`;
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
    assert.equal(t.exitCode, 0, `the machine got our BYE:\n${t.errors}\n${t.messages.slice(-2000)}`);
    return { row: await ended(e164), beepEndsAtMs };
  }

  it('an answering machine on a campaign call: the recipe stops, the message is left after the beep, recorded as voicemail', async () => {
    const message = 'Please call the clinic back about your appointment.';
    const { row, beepEndsAtMs } = await dialMachine('+914440000081', { action: 'leaveMessage', messages: { hi: 'कृपया क्लिनिक को वापस कॉल करें', en: message } });
    assert.equal(row.end_reason, 'voicemail');
    assert.equal(row.disposition, 'voicemail_message_left');
    const transcript = await fx.store.db.selectFrom('call_transcripts').select('entries').where('call_id', '=', row.id).executeTakeFirstOrThrow();
    const agent = (transcript.entries as TranscriptLine[]).filter((l) => l.speaker === 'agent').map((l) => l.text);
    assert.ok(!agent.includes('Goodbye.'), `the recipe went on: ${agent.join(' | ')}`);
    // The recording starts at answer: after the beep, the agent channel carries the message.
    assert.ok(row.recording_ref, 'recorded');
    const agentPcm = await agentChannel(path.join(dir, 'recordings', row.recording_ref));
    const afterBeep = agentPcm.subarray(Math.round(beepEndsAtMs * 8));
    const heard = await transcribe(afterBeep, ['please call the clinic back about your appointment', 'hello this is a reminder from the clinic', 'goodbye']);
    assert.match(heard, /clinic|appointment|call/);
    assert.doesNotMatch(heard, /goodbye/);
  });

  it('an answering machine on a campaign call with voicemail handling "disconnect": we hang up without speaking on', async () => {
    const { row } = await dialMachine('+914440000082', { action: 'disconnect' });
    assert.equal(row.end_reason, 'voicemail');
    assert.equal(row.disposition, 'voicemail_disconnected');
    assert.ok(row.duration_ms !== null, 'duration recorded');
    // Machine detected after ~2.4 s of continuous greeting: we hang up long before the beep (~8 s).
    assert.ok(row.duration_ms < 7_000, `hung up ${row.duration_ms} ms after answer`);
  });
});
