import assert from 'node:assert/strict';
import { DeepgramRefusal, DeepgramStt } from '../../media/speech/deepgram-stt.js';
import { SpeechProviderError } from '../../media/speech/speech-provider.js';
import { startFakeDeepgram } from '../fakes/fake-deepgram.js';
import { captureLogs } from '../helpers/log-capture.js';

const tone = (n: number): Int16Array => Int16Array.from({ length: n }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000)));
const KEY = 'dg-secret-key-7f3a';

/** The Deepgram adapter keeps the cause of what goes wrong and reports it once, without the key. */
describe('Deepgram live STT adapter: errors keep their cause (loopback fake)', () => {
  it('a refused handshake carries Deepgram\'s own reason as the cause, and the logged error shows it', async () => {
    const fake = await startFakeDeepgram({ apiKey: KEY, transcriptFor: () => 'yes' });
    const logs = captureLogs();
    try {
      const error = await new DeepgramStt({ apiKey: 'not-the-key', baseUrl: fake.url, logger: logs.logger })
        .open({ language: 'en', keywords: [], signal: new AbortController().signal })
        .then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof SpeechProviderError, String(error));
      assert.equal(error.retryable, false);
      assert.ok(error.cause instanceof DeepgramRefusal, `cause: ${String(error.cause)}`);
      assert.equal(error.cause.status, 401);
      assert.equal(error.cause.detail, 'Unauthorized');
      // What the voice pipeline logs for it (PhoneConversation: warn with err) includes the cause.
      logs.logger.warn({ err: error }, 'speech-to-text could not start');
      const line = logs.find('speech-to-text could not start')[0];
      assert.match(String((line?.err as { message?: string } | undefined)?.message), /deepgram: handshake refused with HTTP 401 \(Unauthorized\): Unauthorized/);
      assert.doesNotMatch(logs.text(), /not-the-key/);
    } finally {
      await fake.close();
    }
  });

  it('a message that is not JSON is logged once as a warning with the parse error, and the transcript still arrives', async () => {
    const fake = await startFakeDeepgram({ apiKey: KEY, transcriptFor: () => 'yes I will come', malformedFrames: 3 });
    const logs = captureLogs();
    try {
      const stream = await new DeepgramStt({ apiKey: KEY, baseUrl: fake.url, logger: logs.logger }).open({ language: 'en', keywords: [], signal: new AbortController().signal });
      for (let i = 0; i < 20; i++) stream.push(tone(160));
      assert.equal(await stream.finish(), 'yes I will come');
      const warned = logs.find('speech-to-text message is not JSON');
      assert.equal(warned.length, 1, JSON.stringify(logs.lines));
      assert.equal(warned[0]?.level, 'warn');
      assert.equal(warned[0]?.provider, 'deepgram');
      assert.match(String((warned[0]?.err as { message?: string } | undefined)?.message), /JSON/);
      assert.doesNotMatch(logs.text(), new RegExp(KEY));
    } finally {
      await fake.close();
    }
  });
});
