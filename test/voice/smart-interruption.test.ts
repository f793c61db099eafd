import assert from 'node:assert/strict';
import { MediaService } from '../../media/media-service.js';
import type { TurnSettings } from '../../media/voice/phone-conversation.js';
import { FarEnd, fliteSpeech, mediaPair, offlineConversation } from './voice-harness.js';

/** Smart Interruption and "Caution on noisy lines" over real RTP (recipe Advanced settings). */
describe('smart interruption and noisy-line caution', function () {
  this.timeout(60_000);
  let service: MediaService;
  beforeEach(() => {
    service = new MediaService({ bindAddress: '127.0.0.1', portMin: 45200, portMax: 45299 });
  });
  afterEach(async () => {
    await service.close();
  });

  const line =
    'Your loan has an outstanding balance. The next instalment is due on the fifth. You can pay online, at a branch, or by transfer. ' +
    'If you have already paid, please ignore this reminder. Thank you for banking with us.';

  async function speakOver(turn: TurnSettings, callerSays: string): Promise<{ interrupted: boolean; ignored: string[]; heardLater: string }> {
    const { caller, agent } = await mediaPair(service);
    const far = new FarEnd(caller);
    const ended = new AbortController();
    const ignored: string[] = [];
    const conversation = offlineConversation(agent, ended, {
      keywords: ['uh', 'huh', 'wait', 'stop', 'i', 'have', 'a', 'question'],
      turn,
      onIgnoredUtterance: (text) => ignored.push(text),
    });
    const saying = conversation.say(line, { bargeIn: true, signal: ended.signal });
    await far.agentSpeaking();
    await new Promise((r) => setTimeout(r, 1500));
    await far.speak(await fliteSpeech(callerSays));
    const result = await Promise.race([saying, new Promise<'still speaking'>((r) => setTimeout(() => r('still speaking'), 1500))]);
    const interrupted = result !== 'still speaking' && result.interrupted;
    if (!interrupted) await saying;
    const heard = await conversation.listen({ signal: ended.signal, timeoutMs: 1500 });
    ended.abort();
    far.stop();
    return { interrupted, ignored, heardLater: heard.kind === 'utterance' ? heard.text : heard.kind };
  }

  it('Smart Interruption: a short backchannel does not stop the agent', async () => {
    const r = await speakOver({ smartInterruption: true }, 'uh huh');
    assert.equal(r.interrupted, false);
    assert.equal(r.heardLater, 'silence', 'the backchannel is not a caller turn');
  });

  it('Smart Interruption: sustained speech does stop the agent and becomes the caller turn', async () => {
    const r = await speakOver({ smartInterruption: true }, 'wait, stop, I have a question about this');
    assert.equal(r.interrupted, true);
    assert.match(r.heardLater, /question|stop|wait/);
  });

  it('without Smart Interruption the same backchannel interrupts at once', async () => {
    const r = await speakOver({}, 'uh huh');
    assert.equal(r.interrupted, true);
  });

  it('Caution on noisy lines: noise and a short sound do not interrupt', async () => {
    const { caller, agent } = await mediaPair(service);
    const far = new FarEnd(caller);
    const ended = new AbortController();
    const conversation = offlineConversation(agent, ended, {
      turn: { cautionOnNoisyLines: true },
    });
    const saying = conversation.say(line, { bargeIn: true, signal: ended.signal });
    await far.agentSpeaking();
    // Line noise (crackle bursts) and a cough-length sound.
    const noise = Int16Array.from({ length: 8000 * 2 }, (_, i) => (Math.floor(i / 800) % 2 === 0 ? Math.round((Math.random() * 2 - 1) * 2500) : 0));
    await far.speak(noise);
    await far.speak(await fliteSpeech('hm'));
    const said = await saying;
    assert.equal(said.interrupted, false);
    ended.abort();
    far.stop();
  });
});
