import assert from 'node:assert/strict';
import type { ActiveCall } from '../../core/ports/call-handler.js';
import { testBox } from '../helpers/resource-documents.js';
import type { SipOriginator } from '../../gateway/outbound/sip-originator.js';
import { fixtureOriginator, numbers, startGatewayFixture, type GatewayFixture } from '../gateway/gateway-harness.js';
import { speakExampleScenarios, type CallLeg, type Verdict } from './scripted-caller.js';

/** flite voice of the caller: not the agent's (espeak-ng). */
const voice = process.env.BRANCHES_VOICE ?? 'slt';

/**
 * Issue 13, hold-out style: every branch of the three example recipes (each offline scenario of
 * examples/recipes/*.scenarios.yaml) as a real SIP call. The gateway originates a call to its own
 * DID (INVITE, 200, ACK, G.711 RTP, BYE through the stack both ways): the answered inbound leg
 * runs the recipe on the production voice pipeline (pocketsphinx with the block's expectation,
 * espeak-ng, offline engine), the outbound leg is the caller, speaking its scripted turns with
 * flite and repairing misunderstandings as a person would (test/voice/scripted-caller.ts). Three
 * calls run at a time. A Transfer block takes the scenario's scripted outcome (the REFER itself is
 * covered by test/gateway/transfer-sipp.test.ts). No wrong branch: a miss must end in a reprompt
 * or a fallback, never in another branch. Issue 13 asks for 90% of branches right, and so does
 * the test (24 of 26): 25 of 26 on 2026-11-28; the miss is flite's "haan ji" (heard as "sunday",
 * checked and denied: docs/voice-pipeline.md). The same audio can be cut differently by the VAD
 * from run to run and a count can move by one, which the bar allows.
 */
describe('example recipe branches spoken over real SIP calls (flite caller, offline voice pipeline)', function () {
  this.timeout(900_000);
  let fx: GatewayFixture;
  let originator: SipOriginator;
  /** Inbound legs waiting for the scenario that placed them, by caller number. */
  const waitingAgents = new Map<string, (call: ActiveCall) => void>();
  /** Outbound legs, by the caller number that placed them. */
  const waitingCallers = new Map<string, (call: ActiveCall) => void>();
  const verdicts: Verdict[] = [];

  before(async function () {
    this.timeout(60_000);
    fx = await startGatewayFixture({
      callHandler: {
        handle: (call) => {
          waitingAgents.get(call.info.caller.replace(/^\+/, ''))?.(call);
          return call.ended.then(() => undefined);
        },
      },
    });
    originator = fixtureOriginator(fx, testBox(), {
      nativeRoute: { host: '127.0.0.1', port: fx.gateway.ports.UDP as number, transport: 'udp' },
      onAnswered: async (call, request) => {
        waitingCallers.get(request.from.e164.replace(/^\+/, ''))?.(call);
        await call.ended;
      },
    });
  });
  after(async () => {
    await fx?.close();
  });

  /** A SIP call from `from` to the fixture's DID; the legs once both sides have answered. */
  async function placeCall(from: string): Promise<CallLeg> {
    const key = from.replace(/^\+/, '');
    const agent = new Promise<ActiveCall>((resolve) => waitingAgents.set(key, resolve));
    const caller = new Promise<ActiveCall>((resolve) => waitingCallers.set(key, resolve));
    const result = await originator.originate({
      from: { e164: from, phoneNumberId: '00000000-0000-4000-8000-000000000000', sipTrunkId: null },
      to: numbers.trunkDid,
      ringTimeoutMs: 15_000,
      startLogic: { mode: 'immediately' },
      context: { tenantId: fx.ids.tenantId, campaignId: 'branches', messageId: from, attempt: 1, recipeId: 'examples', variables: {} },
      signal: new AbortController().signal,
    });
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    const [agentCall, callerCall] = await Promise.all([agent, caller]);
    const ended = new AbortController();
    for (const call of [agentCall, callerCall]) void call.ended.then(() => ended.abort());
    return {
      caller: callerCall.media,
      agent: agentCall.media,
      ended: ended.signal,
      callerHangup: () => callerCall.hangup('caller-done'),
      agentHangup: () => agentCall.hangup('agent-closed'),
      close: async () => {
        await Promise.all([agentCall.ended, callerCall.ended]);
      },
    };
  }

  it(`no wrong branch, and at least 90% right (flite ${voice}, repairing caller)`, async () => {
    let calls = 0;
    await speakExampleScenarios(() => placeCall(`+914440010${String(++calls).padStart(3, '0')}`), {
      voice,
      repairs: true,
      concurrency: 3,
      // BRANCHES_ONLY=<part of a scenario name>: run those scenarios alone (to see one miss).
      ...(process.env.BRANCHES_ONLY ? { only: process.env.BRANCHES_ONLY } : {}),
      onVerdict: (v) => verdicts.push(v),
    });
    const summary = verdicts.map((v) => `${v.verdict}${v.repaired ? '*' : ''} ${v.recipe} / ${v.scenario}: ${v.detail}`).join('\n');
    // The figure the issue asks for, in the test log whether or not it passes.
    const tally = ['right', 'missed', 'WRONG'].map((k) => `${verdicts.filter((v) => v.verdict === k).length} ${k}`).join(', ');
    console.log(`      example branches by voice (flite ${voice}): ${tally} of ${verdicts.length}`);
    for (const v of verdicts.filter((x) => x.verdict !== 'right')) console.log(`        ${v.verdict} ${v.recipe} / ${v.scenario}: ${v.detail}`);
    assert.ok(verdicts.length >= 20, `every example branch ran:\n${summary}`);
    assert.deepEqual(verdicts.filter((v) => v.verdict === 'WRONG'), [], summary);
    const right = verdicts.filter((v) => v.verdict === 'right').length;
    assert.ok(right >= 0.9 * verdicts.length, `${right} of ${verdicts.length} right:\n${summary}`);
  });
});
