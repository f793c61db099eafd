import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AudioFrame, MediaDtmfEvent } from '../../core/ports/media.js';
import { MediaService } from '../media-service.js';
import type { MediaSession } from '../media-session.js';
import { parseSdp } from '../sdp/sdp.js';
import { writeWav } from '../wav/wav.js';
import { RtpengineClient, RtpengineError } from './rtpengine.js';

const NG_PORT = 22000 + (process.pid % 900);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs the real daemon, userspace forwarding only (ARCHITECTURE.md command line). */
async function startRtpengine(): Promise<ChildProcess> {
  const child = spawn('rtpengine', [
    '--config-file=none', '--foreground', '--log-stderr', '--table=-1', '--interface=127.0.0.1',
    `--listen-ng=127.0.0.1:${NG_PORT}`, '--port-min=46000', '--port-max=46200',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const until = Date.now() + 10_000;
  while (!log.includes('Startup complete')) {
    if (child.exitCode !== null || Date.now() > until) throw new Error(`rtpengine did not start: ${log}`);
    await sleep(50);
  }
  return child;
}

describe('rtpengine ng protocol against the real daemon', function () {
  this.timeout(30_000);
  let daemon: ChildProcess;
  let client: RtpengineClient;
  let service: MediaService;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vap-rtpengine-'));
    daemon = await startRtpengine();
    client = await RtpengineClient.connect({ host: '127.0.0.1', port: NG_PORT });
    service = new MediaService({ bindAddress: '127.0.0.1', portMin: 47600, portMax: 47699 });
  });
  after(async () => {
    await service.close();
    client.close();
    daemon.kill('SIGTERM');
    if (daemon.exitCode === null) await once(daemon, 'exit');
    await rm(dir, { recursive: true, force: true });
  });

  it('answers ping', async () => {
    await client.ping();
  });

  it('anchors a call between two media sessions: audio and DTMF pass through rtpengine', async () => {
    const callId = `media-test-${Date.now()}`;
    const caller = await service.offer();
    const offerToAgent = await client.offer({ callId, fromTag: 'caller', sdp: caller.localSdp, replace: ['origin', 'session-connection'] });
    const relayed = parseSdp(offerToAgent).media[0];
    assert.ok(relayed);
    assert.ok(relayed.port >= 46000 && relayed.port <= 46200, `rtpengine port ${relayed.port}`);
    assert.notEqual(relayed.port, caller.port);

    const answer = await service.answer(offerToAgent);
    assert.ok(answer.ok);
    const agent = answer.session as MediaSession;
    const answerToCaller = await client.answer({ callId, fromTag: 'caller', toTag: 'agent', sdp: answer.sdp, replace: ['origin', 'session-connection'] });
    assert.ok(caller.applyAnswer(answerToCaller).ok);
    assert.notEqual(caller.negotiated?.remotePort, agent.port);

    const frames: AudioFrame[] = [];
    void (async () => {
      for await (const f of agent.input) frames.push(f);
    })();
    const digits: MediaDtmfEvent[] = [];
    caller.on('dtmf', (e) => digits.push(e));
    const tone = Int16Array.from({ length: 4000 }, (_, i) => Math.round(9000 * Math.sin((2 * Math.PI * 500 * i) / 8000)));
    await caller.output.play([tone]);
    await agent.sendDtmf('4*');
    await sleep(300);
    const loud = frames.filter((f) => f.samples.some((s) => Math.abs(s) > 4000));
    assert.ok(loud.length >= 20, `only ${loud.length} tone frames arrived through rtpengine`);
    assert.deepEqual(digits.map((d) => d.digit), ['4', '*']);

    const streams = await client.query(callId);
    assert.deepEqual(streams.map((s) => s.tag).sort(), ['agent', 'caller']);
    assert.ok(streams.every((s) => s.packets > 0), JSON.stringify(streams));
    await client.delete(callId, { delayS: 0 });
    await assert.rejects(client.query(callId), (e: unknown) => e instanceof RtpengineError && !e.retryable);
  });

  it('delivers rtpengine-generated DTMF and a played file to our sessions', async () => {
    const callId = `media-inject-${Date.now()}`;
    const flags = ['inject DTMF'];
    const caller = await service.offer();
    const offerToAgent = await client.offer({ callId, fromTag: 'caller', sdp: caller.localSdp, flags });
    const answer = await service.answer(offerToAgent);
    assert.ok(answer.ok);
    const agent = answer.session as MediaSession;
    assert.ok(caller.applyAnswer(await client.answer({ callId, fromTag: 'caller', toTag: 'agent', sdp: answer.sdp, flags })).ok);
    await sleep(200); // both sides' first packets teach rtpengine where to send (it latches too)

    const digits: string[] = [];
    agent.on('dtmf', (e) => digits.push(e.digit));
    for (const digit of ['7', '#']) {
      await client.playDtmf(callId, 'caller', digit, 100);
      await sleep(400);
    }
    assert.deepEqual(digits, ['7', '#'], 'digits generated by rtpengine as the caller reach the agent');

    const wav = join(dir, 'rtpengine-prompt.wav');
    await writeWav(wav, Int16Array.from({ length: 8000 }, (_, i) => Math.round(12000 * Math.sin((2 * Math.PI * 600 * i) / 8000))));
    const heard: AudioFrame[] = [];
    void (async () => {
      for await (const f of caller.input) heard.push(f);
    })();
    // rtpengine sends the file as a new SSRC while still forwarding the agent's stream: the
    // session's source selection must switch to the announcement.
    const durationMs = await client.playMedia(callId, 'caller', wav);
    assert.ok(durationMs >= 900 && durationMs <= 1100, `duration ${durationMs}`);
    await sleep(1300);
    const loud = heard.filter((f) => !f.concealed && f.samples.some((s) => Math.abs(s) > 8000));
    assert.ok(loud.length >= 40, `only ${loud.length} loud frames of the 50 rtpengine played`);
    await client.delete(callId, { delayS: 0 });
  });

  it('reports an unknown call as a non-retryable error', async () => {
    await assert.rejects(
      client.answer({ callId: 'no-such-call', fromTag: 'a', toTag: 'b', sdp: 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n' }),
      (e: unknown) => e instanceof RtpengineError && e.code === 'failed_precondition' && /unknown call/i.test(e.message),
    );
  });

  it('gives up with a retryable error when nothing answers', async () => {
    const silent = await RtpengineClient.connect({ host: '127.0.0.1', port: NG_PORT + 1, timeoutMs: 150, retries: 1 });
    try {
      await assert.rejects(silent.ping(), (e: unknown) => e instanceof RtpengineError && e.retryable && e.code === 'unavailable');
    } finally {
      silent.close();
    }
  });
});
