import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { disposition, type WebCallResult } from './web-call-scenario.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/**
 * "Call this agent" from Chromium: the dashboard asks the management API for a call token, sip.js
 * calls the gateway over SIP/WSS, Chromium's WebRTC (ICE, DTLS-SRTP) meets rtpengine, which hands
 * the platform plain RTP; the caller is a flite WAV played as the microphone. The scenario runs in
 * a network namespace with only `lo` (test/web/web-call-scenario.ts says why), so it needs root,
 * as the suite has (CI runs as root).
 */
describe('web call from Chromium through sip.js, WSS and rtpengine', function () {
  this.timeout(300_000);
  let result: WebCallResult;

  before(async () => {
    assert.equal(process.getuid?.(), 0, 'the web call test runs Chromium in its own network namespace (unshare -n): run the suite as root');
    const screenshots = process.env['DASHBOARD_SCREENSHOTS'] ?? path.join(tmpdir(), `vap-dashboard-screenshots-${process.pid}`);
    mkdirSync(screenshots, { recursive: true });
    const command = 'ip link set lo up && exec "$0" --import tsx test/web/web-call-scenario.ts "$1"';
    const child = spawn('unshare', ['--net', 'sh', '-c', command, process.execPath, screenshots], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = out.split('\n').find((l) => l.startsWith('WEB-CALL-RESULT '));
    assert.ok(line, `the scenario failed (exit ${code}):\n${out.slice(-4000)}\n${err.slice(-4000)}`);
    result = JSON.parse(line.slice('WEB-CALL-RESULT '.length)) as WebCallResult;
    process.stdout.write(`      web call set up in ${result.setupMs} ms (click to "In call"), agent audio peak ${result.agentAudioPeak.toFixed(3)}; screenshots: ${result.screenshots.join(', ')}\n`);
  });

  it('the gateway started its rtpengine, and the page saw the call connect and end', () => {
    assert.ok(result.rtpengineStarted, result.log);
    assert.equal(result.pageState, 'Call ended');
  });

  it('plays the agent\'s voice to the page\'s speaker (media both ways through DTLS-SRTP)', () => {
    assert.ok(result.agentAudioPeak > 0.02, `agent audio peak ${result.agentAudioPeak}`);
  });

  it('is recorded as a web call that ran the recipe to its Close, with the caller\'s words in the transcript', () => {
    const call = result.call;
    assert.ok(call, 'no web call record');
    assert.equal(call['direction'], 'web');
    assert.equal(call['status'], 'ended');
    assert.equal(call['endReason'], 'closed');
    assert.equal(call['disposition'], disposition);
    const transcript = call['transcript'] as Array<{ speaker: string; text: string }>;
    assert.ok(transcript.some((l) => l.speaker === 'agent' && l.text.startsWith('Hello, this is Acme Couriers')));
    const heard = transcript.filter((l) => l.speaker === 'caller').map((l) => l.text);
    assert.ok(heard.some((t) => /\b(yes|yep|yeah)\b/.test(t)), `the caller's yes was not heard: ${JSON.stringify(heard)}`);
    assert.ok(call['recording'], 'the call was recorded');
  });

  it('keeps the SIP facts of the call, and the page links to its record after the call', () => {
    const call = result.call;
    assert.ok(call, 'no web call record');
    assert.match(String(call['sipCallId']), /\S+/);
    const sip = call['sip'] as { transport: string | null; remoteAddress: string | null; codec: string | null };
    assert.match(String(sip.transport), /^wss?$/);
    assert.equal(sip.remoteAddress, '127.0.0.1');
    assert.match(String(sip.codec), /^(PCMU|PCMA)/);
    assert.equal(result.recordHref, `/t/acme/calls/${String(call['id'])}`);
  });

  it('gets its post-call insights like a phone call', () => {
    const analysis = result.call?.['analysis'] as { status: string; insights: Record<string, unknown> };
    assert.equal(analysis.status, 'completed');
    assert.equal(analysis.insights['at_home'], true);
  });
});
