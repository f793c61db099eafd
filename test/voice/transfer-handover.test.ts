import assert from 'node:assert/strict';
import { MediaService } from '../../media/media-service.js';
import type { MediaSession } from '../../media/media-session.js';
import type { SttProvider, TtsProvider } from '../../media/speech/speech-provider.js';
import { PhoneConversation } from '../../media/voice/phone-conversation.js';
import { mediaPair } from './voice-harness.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('timed out waiting for condition');
    await sleep(10);
  }
}

/**
 * A bridged transfer reads the caller's audio with its own reader of `MediaSession.input`; the
 * conversation's ear stops at the hand-over (no recogniser on a call the agent has left), and the
 * call's output, now the bridge's, is left alone.
 */
describe('transfer hand-over: the bridge has its own input queue', function () {
  this.timeout(20_000);
  let service: MediaService;
  beforeEach(() => {
    service = new MediaService({ bindAddress: '127.0.0.1', portMin: 45500, portMax: 45549 });
  });
  afterEach(async () => {
    await service.close();
  });

  it('the ear stops after a successful transfer; the bridge reader gets every caller frame; STT never opens', async () => {
    const { caller, agent } = await mediaPair(service);
    const session = agent as MediaSession;
    let sttOpened = 0;
    const stt: SttProvider = { name: 'counting', open: () => ((sttOpened += 1), Promise.reject(new Error('no STT here'))) };
    const tts: TtsProvider = { name: 'silent', async *synthesize() {} };
    const bridged: number[] = [];
    const ended = new AbortController();
    const conversation = new PhoneConversation({
      media: agent,
      stt,
      tts,
      speech: { voice: '', language: 'en-US', sttLanguage: 'en-US', keywords: [] },
      signal: ended.signal,
      transfer: async () => {
        // What gateway/transfer/bridge.ts does: read the caller's input, write the target's output.
        void (async () => {
          for await (const frame of agent.input) if (!frame.concealed) bridged.push(frame.samples[0] ?? 0);
        })();
        return { ok: true };
      },
    });
    await waitFor(() => session.inputReaders === 1);
    const result = await conversation.transfer('sip:desk@127.0.0.1', '', ended.signal);
    assert.deepEqual(result, { ok: true });
    await waitFor(() => session.inputReaders === 1, 2000);
    // The caller talks on the bridged call: a loud tone the ear would have taken for speech.
    const tone = Int16Array.from({ length: 8000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 200 * i) / 8000)));
    await caller.output.play([tone]);
    await waitFor(() => bridged.length >= 45);
    assert.equal(sttOpened, 0, 'no speech recognition after the hand-over');
    // The call's output belongs to the bridge now: the conversation ending its ear did not clear it.
    agent.output.write(new Int16Array(1600));
    assert.ok(agent.output.queuedMs > 0);
    ended.abort();
    await conversation.done;
  });
});
