import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { FakeClock } from '../../core/clock.js';
import { CampaignScheduler } from '../../control-api/features/campaigns/campaign-scheduler.js';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import type { TranscriptLine } from '../../control-api/features/calls/call-types.js';
import type { CampaignSpec } from '../../control-api/model/domain/campaign.js';
import { RecipeCallHandler } from '../../control-api/features/gateway-adapters/recipe-call-handler.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import { QuickJsCodeRunner } from '../../control-api/features/recipes/code-sandbox/quickjs-code-runner.js';
import { platformServices } from '../../control-api/features/recipes/platform-services.js';
import { campaignDoc, numberDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { issueToken } from '../../control-api/model/tenants/api-tokens.js';
import { startControl, twirpRequest } from '../campaigns/twirp-client.js';
import { fixtureOriginator, startGatewayFixture, type GatewayFixture } from '../gateway/gateway-harness.js';
import { startSippUas } from '../gateway/outbound-sipp-uas.js';
import { calleeScenario, concat, silence, trimmedFlite } from './callee-audio.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

/**
 * Issue 18, as the user placed it: a campaign call (SendMessage over HTTP, the scheduler, the SIP
 * Originator) on PostgreSQL to a SIPp callee who streams, looped, a flite voice saying "Yes, I
 * will be at home tomorrow." after some silence. The recipe is Message ('Hello {{name}}, ...')
 * -> Ask (boolean `at_home`) -> Close. The stored call record must show the message, the Ask's
 * question, the callee's answer and the close, in that order, with at_home = true; words the
 * callee said while the Message played are transcribed as ignored and are never the answer.
 */
const box = testBox();
const defs = () => createResourceDefinitions({ secretBox: box });
const message = 'Hello {{name}}, this is Acme Couriers calling about your parcel.';
const question = 'Will you be at home tomorrow between 10 and 12? Please say yes or no.';
const closing = 'Thank you, our courier will come tomorrow. Goodbye.';
const answer = 'Yes, I will be at home tomorrow.';
/** 10:00 in Asia/Kolkata, inside any calling window: the campaign clock, not the wall clock. */
const campaignNow = Date.parse('2026-03-02T04:30:00Z');

describe('Ask on an outbound campaign call: the question is spoken before an answer is taken (issue 18)', function () {
  this.timeout(240_000);
  let fx: GatewayFixture;
  let dir: string;
  let code: QuickJsCodeRunner;
  let control: RunningServer;
  let scheduler: CampaignScheduler;
  let token: string;
  let seq = 0;
  const clock = new FakeClock(campaignNow);
  const warnings: string[] = [];
  /** The debug lines (caller turns recognised, AMD verdicts, ...) of the calls, for failure messages. */
  const turnsHeard: string[] = [];
  /** How long the call's setup takes before the conversation listens (the third case slows it). */
  let setupDelayMs = 0;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'vap-ask-campaign-'));
    code = new QuickJsCodeRunner({ workers: 1 });
    // Warnings are kept for failure messages: a caller turn lost to a failing STT shows up here.
    const logger = pino({ level: 'debug' }, { write: (line: string) => void (line.includes('"level":20') ? turnsHeard : /"level":[4-6]0/.test(line) ? warnings : []).push(line.trim()) });
    let handler: RecipeCallHandler | undefined;
    fx = await startGatewayFixture({}, (store) => {
      const services = platformServices({ db: store.db, box, code, logger });
      handler = new RecipeCallHandler({
        db: store.db,
        recorder: new CallRecorder({ db: store.db, onConversationEnded: queueCallAnalysis() }),
        // A node under load: the tenant's services can take seconds while the callee already talks.
        services: async (tenantId) => {
          await new Promise((r) => setTimeout(r, setupDelayMs));
          return services(tenantId);
        },
        logger,
        recordingsDir: path.join(dir, 'recordings'),
        turn: { endpointSilenceMs: 600 },
      });
      return { callHandler: handler };
    });
    const originator = fixtureOriginator(fx, box, {
      logger,
      onAnswered: (call, request) => (handler as RecipeCallHandler).handle(call, request),
    });
    scheduler = new CampaignScheduler({ db: fx.store.db, originator, clock, logger, workerId: 'ask-campaign' });
    control = await startControl(fx.store, { clock });
    token = (await issueToken(fx.store.db, { tenantId: fx.ids.tenantId, name: 'campaign', scopes: ['campaign'] })).token;
    await defs().recipe.repository.create(fx.store.db, fx.ids.tenantId, {
      name: 'Delivery slot',
      startBlockId: 'hello',
      blocks: [
        { id: 'hello', type: 'message', settings: { text: message } },
        { id: 'home', type: 'ask', settings: { prompt: question, variables: [{ name: 'at_home', type: 'boolean', description: 'whether the callee is at home tomorrow between 10 and 12' }] } },
        { id: 'bye', type: 'close', settings: { closingScript: closing, disposition: 'slot_checked' } },
        { id: 'later', type: 'close', settings: { closingScript: 'Sorry, we will call you again later. Goodbye.', disposition: 'no_answer' } },
      ],
      connections: [
        { from: 'hello', exit: 'next', to: 'home' },
        { from: 'home', exit: 'next', to: 'bye' },
        { from: 'home', exit: 'fallback', to: 'later' },
      ],
    } as never);
  });

  after(async () => {
    await control?.close(0);
    await fx?.close();
    await code?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * Places one campaign call to a SIPp callee streaming `callee` (looped) and returns its stored
   * record and transcript once the call has ended.
   */
  async function campaignCall(callee: Int16Array): Promise<{ row: CallRow; lines: TranscriptLine[] }> {
    seq += 1;
    const uas = await startSippUas(await calleeScenario(dir, `callee-${seq}`, callee, { loop: true }), { timeoutMs: 90_000 });
    const trunk = `courier-${seq}`;
    const from = `+91445552${String(seq).padStart(4, '0')}`;
    await defs().sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc(trunk, {
      inbound: { terminationAddresses: [`127.0.0.${110 + seq}`], dids: [] },
      outbound: { address: '127.0.0.1', port: uas.port, transport: 'udp', username: 'acme-out', password: 'trunk-secret-1' },
    }) as never);
    await defs().phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(from, 'Delivery slot', { provider: { type: 'customSipTrunk', trunk }, language: 'en-US' }) as never);
    const campaign = await defs().campaign.repository.create(fx.store.db, fx.ids.tenantId, campaignDoc(`Delivery ${seq}`, from, 'Delivery slot', { published: true }) as CampaignSpec);
    const sent = await twirpRequest(control.port, {
      token,
      body: { CampaignID: campaign.id, To: { PhoneNumber: '919812345678' }, Variables: { name: 'Asha' }, ScheduledAt: { Time: new Date(clock.now()).toISOString() } },
    });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const messageId = String(sent.body.message_id);
    assert.equal(await scheduler.runMessage(messageId), 'dialing');
    await scheduler.settled();
    const sipp = await uas.done;
    assert.equal(sipp.exitCode, 0, `the callee got our BYE:\n${sipp.errors}\n${sipp.messages.slice(-2000)}`);
    const row = await ended(messageId);
    const transcript = await fx.store.db.selectFrom('call_transcripts').select('entries').where('call_id', '=', row.id).executeTakeFirstOrThrow();
    return { row, lines: transcript.entries as TranscriptLine[] };
  }

  type CallRow = NonNullable<Awaited<ReturnType<typeof callRow>>>;
  const callRow = (messageId: string) => fx.store.db.selectFrom('calls').selectAll().where('tenant_id', '=', fx.ids.tenantId).where('message_id', '=', messageId).executeTakeFirst();
  async function ended(messageId: string): Promise<CallRow> {
    // The record is completed after the BYE; under CPU load that may take a moment.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const row = await callRow(messageId);
      if (row?.status === 'ended' || Date.now() > deadline) {
        assert.ok(row, `no call record for message ${messageId}`);
        return row;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The record's lines as `speaker: text`, ignored caller words tagged, for failure messages and the report. */
  const shown = (lines: readonly TranscriptLine[]): string => lines.map((l) => `${l.speaker}${l.ignored ? `(ignored: ${l.ignored})` : ''}${l.interrupted ? '(interrupted)' : ''}: ${l.text}`).join('\n');

  /** Message, question, the callee's yes, close: the order and content every case must show. */
  function assertMessageQuestionAnswerClose(row: CallRow, transcript: readonly TranscriptLine[]): void {
    let lines = transcript;
    const all = shown(lines);
    // A hearing below confirmBelowConfidence is confirmed before it is acted on (the offline
    // recogniser hears "at home tomorrow" as fillers, so this answer sits near that threshold):
    // a "Just to check: you said yes?" answered yes is part of taking the answer, never a second question.
    const check = 'Just to check: you said yes?';
    // The looped callee may say its answer again over the closing line, which the run then takes
    // as the Ask's answer once more (words over a closing line go back to the block that asked):
    // the same answer, so the agent says the rest of the closing line (recipe-run.ts closeAgain),
    // after checking it when it was heard with doubt. That exchange is set aside here, once it is
    // shown to hold nothing but the check.
    const first = lines.findIndex((l) => l.speaker === 'agent' && l.text === closing);
    const rest = first < 0 ? -1 : lines.findIndex((l, i) => i > first && l.speaker === 'agent' && l.text !== '' && closing.endsWith(l.text));
    const saidOver = rest > 0 && lines.slice(first + 1, rest).some((l) => l.speaker === 'caller' && /\b(yes|yeah|yep)\b/.test(l.text));
    if (saidOver) {
      const between = lines.slice(first + 1, rest).filter((l) => l.speaker === 'agent' && l.text !== '');
      assert.ok(between.every((l) => l.text === check), `only a check may come between the closing line and its rest:\n${all}`);
      lines = lines.slice(0, first + 1);
    }
    const agent = lines.filter((l) => l.speaker === 'agent');
    const said = agent.map((l) => l.text);
    // Each check answered with a doubtful yes is asked again (never acted on a doubt): the
    // recogniser's reading of the looped answer varies with load, so one or two checks may come.
    const checks = said.slice(2, -1);
    assert.ok(checks.length <= 2 && checks.every((text) => text === check), `only checks may come between the question and the close:\n${all}`);
    assert.deepEqual(said, ['Hello Asha, this is Acme Couriers calling about your parcel.', question, ...checks, closing], all);
    const [greeting, asked] = agent.map((l) => lines.indexOf(l)) as [number, number];
    const bye = lines.indexOf(agent.at(-1)!);
    assert.ok(greeting < asked && asked < bye, all);
    assert.equal(lines[asked]?.blockId, 'home', all);
    // The answer: the caller lines the Ask acted on, after its question and before the close.
    const answers = lines.filter((l, i) => l.speaker === 'caller' && !l.ignored && i > asked && i < bye);
    assert.equal(answers.length, checks.length + 1, all);
    for (const line of answers) {
      assert.equal(line.blockId, 'home', all);
      assert.match(line.text, /\b(yes|yeah|yep)\b/, all);
    }
    // Answer, check, answer, ...: every check follows an answer and is answered.
    checks.forEach((_, k) => assert.ok(lines.indexOf(answers[k]!) < lines.indexOf(agent[2 + k]!) && lines.indexOf(agent[2 + k]!) < lines.indexOf(answers[k + 1]!), all));
    // Nothing the callee said before the question reached the flow.
    for (const line of lines.slice(0, asked)) if (line.speaker === 'caller') assert.ok(line.ignored, `caller words before the question were not marked ignored:\n${all}`);
    assert.equal(row.end_reason, 'closed');
    assert.equal(row.disposition, 'slot_checked');
    assert.equal(row.direction, 'outbound');
    assert.equal((row.variables as Record<string, unknown>).at_home, true, `${JSON.stringify(row.variables)}\n${all}`);
    assert.equal((row.variables as Record<string, unknown>).name, 'Asha');
  }

  it('the callee is silent 7 s, then says "Yes, I will be at home tomorrow." (looped): message, question, answer, close; at_home is true', async () => {
    const { row, lines } = await campaignCall(concat(silence(7_000), await trimmedFlite(answer), silence(1_000)));
    console.log(`      transcript (7 s silence):\n${shown(lines).replace(/^/gm, '        ')}`);
    assertMessageQuestionAnswerClose(row, lines);
  });

  it('the callee speaks over the Message: those words are transcribed as ignored, the question is still asked, and the later answer is taken', async () => {
    // Onset 0.5 s into the call (the Message plays for ~4 s), next loop ~11 s in, after the question.
    const { row, lines } = await campaignCall(concat(silence(500), await trimmedFlite(answer), silence(9_000)));
    console.log(`      transcript (speech over the Message):\n${shown(lines).replace(/^/gm, '        ')}`);
    const overMessage = lines.filter((l) => l.speaker === 'caller' && l.blockId === 'hello');
    assert.ok(overMessage.length >= 1, `the words over the Message were not transcribed:\n${shown(lines)}\nwarnings:\n${warnings.slice(-20).join('\n')}\ndebug:\n${turnsHeard.slice(-30).join('\n')}`);
    for (const line of overMessage) assert.ok(line.ignored, `words over the Message were not marked ignored:\n${shown(lines)}`);
    assertMessageQuestionAnswerClose(row, lines);
  });

  it('the callee talks while the call is still being set up (3 s): the words are heard from answer, kept as ignored under the first block, and the answering-machine detector hears them', async () => {
    setupDelayMs = 3_000;
    try {
      const { row, lines } = await campaignCall(concat(silence(500), await trimmedFlite(answer), silence(9_000)));
      console.log(`      transcript (set-up takes 3 s):\n${shown(lines).replace(/^/gm, '        ')}`);
      const early = lines.filter((l) => l.speaker === 'caller' && l.blockId === 'hello');
      assert.ok(early.length >= 1, `the words said during set-up were lost:\n${shown(lines)}\nwarnings:\n${warnings.slice(-20).join('\n')}`);
      for (const line of early) assert.ok(line.ignored, `words said before the question were not marked ignored:\n${shown(lines)}`);
      // A person who speaks at once is a person: the detector heard the words said before the ear existed.
      assert.equal(row.amd_verdict, 'human', `${row.amd_verdict} after ${row.amd_ms} ms`);
      assertMessageQuestionAnswerClose(row, lines);
    } finally {
      setupDelayMs = 0;
    }
  });
});
