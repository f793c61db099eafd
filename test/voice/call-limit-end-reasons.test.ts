import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import sinon from 'sinon';
import { FakeClock } from '../../core/clock.js';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import { RecipeCallHandler } from '../../control-api/features/gateway-adapters/recipe-call-handler.js';
import { QuickJsCodeRunner } from '../../control-api/features/recipes/code-sandbox/quickjs-code-runner.js';
import { platformServices } from '../../control-api/features/recipes/platform-services.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { numberDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import type { Call } from '../../gateway/call/call.js';
import { writeWav } from '../../media/wav/wav.js';
import { startGatewayFixture, type GatewayFixture } from '../gateway/gateway-harness.js';
import { runSipp, scenarioDir, type SippResult } from '../helpers/sipp.js';
import { fliteSpeech } from './voice-harness.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

const run = promisify(execFile);
const box = testBox();
const defs = () => createResourceDefinitions({ secretBox: box });
const quietNumber = '+914440000091';
const chattyNumber = '+914440000092';

/**
 * The phone number's End Call on Silence and Max call duration limits end a call with their own
 * end reason on the call record (and so in the calls API and the Master Report), not as if the
 * caller had hung up. SIPp is the caller; the gateway runs on a FakeClock, so minutes pass at once
 * while the voice pipeline hears the caller's real RTP.
 */
describe('call limits: the record says which limit ended the call', function () {
  this.timeout(180_000);
  const clock = new FakeClock(Date.parse('2026-11-24T10:00:00Z'));
  let fx: GatewayFixture;
  let dir: string;
  let code: QuickJsCodeRunner;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'vap-call-limits-'));
    code = new QuickJsCodeRunner({ workers: 1 });
    const logger = pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' });
    fx = await startGatewayFixture({ clock, ringMs: 0 }, (store) => {
      const services = platformServices({ db: store.db, box, code, logger });
      const handler = new RecipeCallHandler({
        db: store.db,
        recorder: new CallRecorder({ db: store.db, onConversationEnded: queueCallAnalysis() }),
        services: async (tenantId) => services(tenantId),
        logger,
        recordingsDir: path.join(dir, 'recordings'),
        turn: { endpointSilenceMs: 600 },
      });
      return { callHandler: handler };
    });
    // The agent asks and then waits for the caller without nudging: only a limit ends the call.
    await defs().recipe.repository.create(fx.store.db, fx.ids.tenantId, {
      name: 'Waiting line',
      startBlockId: 'ask',
      blocks: [
        { id: 'ask', type: 'smartAi', settings: { prompt: 'Ask what the caller needs.\nOpening: How can I help?', retryLimit: 3, nudge: false } },
        { id: 'sorry', type: 'close', settings: { closingScript: 'Sorry, goodbye.', disposition: 'unresolved' } },
      ],
      connections: [{ from: 'ask', exit: 'fallback', to: 'sorry' }],
    } as never);
    await defs().sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc('limits-carrier', {
      inbound: { terminationAddresses: ['127.0.0.5'], dids: [quietNumber, chattyNumber] },
    }) as never);
    const number = (e164: string, silence: number, max: number) =>
      defs().phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(e164, 'Waiting line', {
        provider: { type: 'customSipTrunk', trunk: 'limits-carrier' },
        language: 'en-US',
        endCallOnSilenceMinutes: silence,
        maxCallDurationMinutes: max,
      }) as never);
    await number(quietNumber, 1, 5);
    await number(chattyNumber, 5, 5);
  });

  after(async () => {
    await fx?.close();
    await code?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A SIPp caller streaming `audio` (8 kHz PCM) that waits up to 60 s for the gateway's BYE. */
  async function caller(name: string, audio: Int16Array): Promise<string> {
    await writeWav(path.join(dir, `${name}-pcm.wav`), audio);
    const wav = path.join(dir, `${name}.wav`);
    await run('sox', [path.join(dir, `${name}-pcm.wav`), '-r', '8000', '-c', '1', '-e', 'u-law', wav]);
    const template = await readFile(path.join(scenarioDir, 'uac-invite-expect-200-gateway-bye.xml'), 'utf8');
    const scenario = template.replace('rtp_stream="caller.wav,1,0"', `rtp_stream="${wav},1,0"`).replace('<recv request="BYE" timeout="15000"/>', '<recv request="BYE" timeout="60000"/>');
    assert.notEqual(scenario, template);
    await writeFile(path.join(dir, `${name}.xml`), scenario);
    return path.relative(scenarioDir, path.join(dir, `${name}.xml`));
  }

  async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The answered call once its ACK is in: before that, moving the clock would time the 200 out. */
  const confirmedCall = (number: string): Promise<Call> =>
    until(`the call to ${number}`, () => [...fx.gateway.registry.all()].find((c) => c.info.dialled === number && c.leg.state === 'confirmed'));

  const endedRecord = (number: string) =>
    until(`the record of ${number}`, async () => {
      const row = await fx.store.db.selectFrom('calls').selectAll().where('tenant_id', '=', fx.ids.tenantId).where('phone_number', '=', number).executeTakeFirst();
      return row?.status === 'ended' ? row : undefined;
    });

  function sipp(scenario: string, number: string): Promise<SippResult> {
    return runSipp({ scenario, target: fx.target, service: number, localIp: '127.0.0.5', timeoutMs: 90_000 });
  }

  it('a caller who stays silent past End Call on Silence (1 min): BYE, end reason silenceTimeout', async () => {
    const done = sipp(await caller('quiet', new Int16Array(8000 * 40)), quietNumber);
    const call = await confirmedCall(quietNumber);
    clock.advance(59_000);
    assert.equal(call.state, 'active', 'not before the limit');
    clock.advance(1_000);
    const result = await done;
    assert.equal(result.successful, 1, `SIPp: ${result.errors || result.stdout.slice(-2000)}`);
    assert.equal((await call.ended).reason, 'caller-silence');
    const row = await endedRecord(quietNumber);
    assert.equal(row.end_reason, 'silenceTimeout');
  });

  it('a caller who spoke, so silence is not the limit, cut at Max call duration (5 min): end reason maxDuration', async () => {
    // Speech 6 s into the call restarts the 5-minute silence timer, so only the duration limit is due at 5:00.
    const speech = await fliteSpeech('hello, are you there');
    const audio = new Int16Array(8000 * 6 + speech.length + 8000 * 30);
    audio.set(speech, 8000 * 6);
    const done = sipp(await caller('chatty', audio), chattyNumber);
    const call = await confirmedCall(chattyNumber);
    const heard = sinon.spy(call, 'noteCallerSpeech');
    clock.advance(240_000);
    await until('the caller speech to reach the gateway', () => (heard.called ? true : undefined));
    clock.advance(59_000);
    assert.equal(call.state, 'active', 'not before the limit');
    clock.advance(1_000);
    const result = await done;
    assert.equal(result.successful, 1, `SIPp: ${result.errors || result.stdout.slice(-2000)}`);
    assert.equal((await call.ended).reason, 'max-duration');
    const row = await endedRecord(chattyNumber);
    assert.equal(row.end_reason, 'maxDuration');
  });
});
