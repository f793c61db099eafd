import assert from 'node:assert/strict';
import { FakeProviderA } from '../fakes/fake-provider-a.js';
import { endedCall, shown, startProviderPlatform, until, type ProviderPlatform } from './provider-harness.js';

/**
 * Issue 17, transfers on provider A: the Transfer block replaces the call's instructions with a
 * `<Dial>` through the REST API. The target answering ends our part of the call (`transferred`);
 * a busy target sends the caller back to the agent on a new stream and the block takes `failed`.
 */
const accountSid = `AC${'4'.repeat(32)}`;
const authToken = 'provider-a-auth-token-0004';
const desk = '+14155550190';
const busyDesk = '+14155550191';

describe('provider A transfers through <Dial>', function () {
  this.timeout(120_000);
  let fake: FakeProviderA;
  let platform: ProviderPlatform;

  before(async () => {
    fake = await new FakeProviderA({ accountSid, authToken }).start();
    platform = await startProviderPlatform({ providerA: fake.apiBaseUrl });
    fake.o.voiceUrl = `${platform.telephony.publicBaseUrl}/providers/a/voice`;
    fake.targets.set(busyDesk, { kind: 'busy' });
    for (const [name, target, number] of [['To desk', desk, '+14155550185'], ['To busy desk', busyDesk, '+14155550186']] as const) {
      await platform.addRecipe({
        name,
        startBlockId: 'move',
        blocks: [
          { id: 'move', type: 'transfer', settings: { target, bridgeMessage: 'Please hold.' } },
          { id: 'sorry', type: 'close', settings: { closingScript: 'The line is busy. Goodbye.', disposition: 'transfer_failed' } },
        ],
        connections: [{ from: 'move', exit: 'failed', to: 'sorry' }],
      } as never);
      await platform.addNumber(number, name, { type: 'providerA', accountSid, authToken });
    }
  });
  after(async () => {
    await platform?.close();
    await fake?.stop();
  });

  it('the target answers: the provider bridges the caller, our stream leaves, the call is recorded transferred', async () => {
    const call = await fake.placeInbound('+14155552001', '+14155550185');
    await until(() => call.dialled.length === 1, 'the transfer to be dialled');
    assert.deepEqual(call.dialled, [{ target: desk, result: 'answered' }]);
    const redirect = fake.requests.find((r) => r.form.has('Twiml'));
    assert.match(redirect?.form.get('Twiml') ?? '', /<Dial action="[^"]+\/transfer-ended" method="POST" timeout="30" callerId="\+14155550185"><Number statusCallbackEvent="answered" statusCallback="[^"]+\/transfer-answered" statusCallbackMethod="POST">\+14155550190<\/Number><\/Dial>/);
    assert.equal(await call.ended, 'completed');
    const row = await endedCall(platform.store, '+14155552001');
    assert.equal(row.end_reason, 'transferred', shown(row.lines));
    assert.equal(row.lines[0]?.text, 'Please hold.');
    assert.equal(call.streams.length, 1);
  });

  it('the target is busy: the caller comes back to the agent on a new stream and the block takes failed', async () => {
    const call = await fake.placeInbound('+14155552002', '+14155550186');
    assert.equal(await call.ended, 'completed');
    assert.deepEqual(call.dialled, [{ target: busyDesk, result: 'busy' }]);
    assert.equal(call.streams.length, 2, 'a second stream after the failed dial');
    const row = await endedCall(platform.store, '+14155552002');
    assert.equal(row.disposition, 'transfer_failed', shown(row.lines));
    assert.equal(row.end_reason, 'closed');
    assert.deepEqual(row.lines.filter((l) => l.speaker === 'agent').map((l) => l.text), ['Please hold.', 'The line is busy. Goodbye.']);
  });
});
