import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeWav } from '../../media/wav/wav.js';
import { launchChromium } from '../helpers/chromium.js';
import { spawnPlatform, waitForLine } from '../helpers/platform-process.js';
import { concat, silence, trimmedFlite } from '../voice/callee-audio.js';
import { seedEmbeddedDatabase } from '../helpers/pglite-template.js';

/**
 * A web call from Chromium, end to end, run by test/web/web-call.test.ts inside a network namespace
 * with only `lo` (unshare -n): Chromium gathers ICE candidates on every interface it has, and the
 * only network target a test may have is loopback. In there: the platform process (control,
 * gateway with its rtpengine, worker), the dashboard, and Chromium whose microphone is a WAV of
 * flite saying the answer. Prints one JSON line: what the call record says.
 */
const run = promisify(execFile);
/** What the caller says, again every few seconds: the answer, and the yes to "Just to check: you said yes?". */
export const answer = 'Yes.';
export const disposition = 'slot_checked';

const freeTcpPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

export interface WebCallResult {
  readonly pageState: string;
  /** From the click on "Call this agent" to the page showing "In call" (token, WSS, INVITE, ICE/DTLS answer). */
  readonly setupMs: number;
  /** Peak level (0..1) of the agent's audio as the page received it, while the greeting plays. */
  readonly agentAudioPeak: number;
  readonly call: Record<string, unknown> | undefined;
  /** Where the page's "Open the call record" link pointed after the call. */
  readonly recordHref: string;
  readonly screenshots: readonly string[];
  readonly rtpengineStarted: boolean;
  readonly log: string;
}

async function scenario(screenshots: string): Promise<WebCallResult> {
  const work = mkdtempSync(path.join(tmpdir(), 'vap-web-call-'));
  // The caller: silence while the agent greets, then "Yes." every 4 s; Chromium loops the file.
  const yes = await trimmedFlite(answer);
  const pcm = concat(silence(6000), yes, silence(4000), yes, silence(4000), yes, silence(4000));
  await writeWav(path.join(work, 'caller-8k.wav'), pcm);
  const wav = path.join(work, 'caller.wav');
  await run('sox', [path.join(work, 'caller-8k.wav'), '-r', '48000', '-b', '16', wav]);
  await seedEmbeddedDatabase(path.join(work, 'data'));
  const wssPort = await freeTcpPort();
  const platform = spawnPlatform({
    DATABASE_URL: '',
    CONFIG_FILE: '',
    DATA_DIR: path.join(work, 'data'),
    ROLES: 'gateway,control,worker',
    LOG_LEVEL: 'debug',
    CONTROL_HOST: '127.0.0.1',
    CONTROL_PORT: '0',
    SIP_HOST: '127.0.0.1',
    SIP_PORT: '0',
    SIP_TLS_PORT: '0',
    SIP_WS_PORT: '0',
    SIP_WSS_PORT: String(wssPort),
    SIP_PUBLIC_ADDRESS: '127.0.0.1',
    RTP_BIND_ADDRESS: '127.0.0.1',
    PROVIDERS_HOST: '127.0.0.1',
    PROVIDERS_PORT: '0',
  });
  const shots: string[] = [];
  const chromium = await launchChromium({ fakeAudioWav: wav, webrtcOnLoopback: true });
  try {
    const control = await waitForLine(platform, 'control API listening', 90_000);
    await waitForLine(platform, 'platform started', 90_000);
    const base = String(control['url']);
    const operator = readFileSync(path.join(work, 'data', 'operator-token'), 'utf8').trim();
    const api = async (method: string, url: string, body?: unknown): Promise<Record<string, unknown>> => {
      const r = await fetch(`${base}${url}`, { method, headers: { Authorization: `Bearer ${operator}`, 'Content-Type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
      const text = await r.text();
      if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${text}`);
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    };
    await api('POST', '/v1/tenants', { clientId: 'acme', name: 'Acme Couriers', timezone: 'Asia/Kolkata' });
    const token = String((await api('POST', '/v1/tenants/acme/tokens', { name: 'dashboard', scopes: ['management'] }))['token']);
    await api('POST', '/v1/tenants/acme/recipes', {
      name: 'delivery-slot',
      startBlockId: 'hello',
      blocks: [
        { id: 'hello', type: 'message', settings: { text: 'Hello, this is Acme Couriers calling about your parcel.' } },
        { id: 'home', type: 'ask', settings: { prompt: 'Will you be at home tomorrow between 10 and 12? Please say yes or no.', variables: [{ name: 'at_home', type: 'boolean', description: 'whether the caller is at home tomorrow' }] } },
        { id: 'bye', type: 'close', settings: { closingScript: 'Thank you, our courier will come tomorrow. Goodbye.', disposition } },
        { id: 'later', type: 'close', settings: { closingScript: 'Sorry, we will call you again later. Goodbye.', disposition: 'no_answer' } },
      ],
      connections: [
        { from: 'hello', exit: 'next', to: 'home' },
        { from: 'home', exit: 'next', to: 'bye' },
        { from: 'home', exit: 'fallback', to: 'later' },
      ],
      globalSettings: { insights: [{ name: 'at_home', description: 'Will the caller be at home tomorrow between 10 and 12?', type: 'boolean' }] },
    });
    const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${base}/`);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Web call' }).click();
    await page.getByLabel('Agent to call').selectOption({ label: 'Recipe delivery-slot' });
    const clicked = Date.now();
    await page.getByRole('button', { name: 'Call this agent' }).click();
    const state = page.getByTestId('web-call-state');
    await state.filter({ hasText: 'In call' }).waitFor({ timeout: 30_000 });
    const setupMs = Date.now() - clicked;
    // The speaker side: the agent's greeting reaches the page's <audio> (decrypted SRTP, decoded
    // G.711); its peak level over 3 s, read with Web Audio from the element's stream.
    const agentAudioPeak = Number(await page.evaluate(`(async () => {
      const stream = document.querySelector('audio[aria-label="Agent audio"]').srcObject;
      const ctx = new AudioContext();
      await ctx.resume();
      const analyser = ctx.createAnalyser();
      ctx.createMediaStreamSource(stream).connect(analyser);
      const buf = new Float32Array(analyser.fftSize);
      let peak = 0;
      for (const end = Date.now() + 3000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
        analyser.getFloatTimeDomainData(buf);
        for (const v of buf) peak = Math.max(peak, Math.abs(v));
      }
      await ctx.close();
      return peak;
    })()`));
    shots.push(path.join(screenshots, '10-web-call-in-call.png'));
    await page.screenshot({ path: shots.at(-1)!, fullPage: true });
    await state.filter({ hasText: /Call ended|Call failed/ }).waitFor({ timeout: 120_000 });
    const pageState = (await state.textContent()) ?? '';
    // The page finds the call's record by its Call-ID once it is written, and links to it.
    const recordLink = page.getByRole('link', { name: 'Open the call record' });
    await recordLink.waitFor({ timeout: 30_000 });
    const recordHref = (await recordLink.getAttribute('href')) ?? '';
    // The record is written after the BYE and analysed by the worker: wait for both.
    let call: Record<string, unknown> | undefined;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const list = await api('GET', '/v1/tenants/acme/calls?direction=web');
      const first = (list['items'] as Array<Record<string, unknown>>)[0];
      if (first) {
        call = await api('GET', `/v1/tenants/acme/calls/${String(first['id'])}`);
        const analysis = call['analysis'] as { status: string };
        if (call['status'] === 'ended' && (analysis.status === 'completed' || analysis.status === 'failed')) break;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    if (call) {
      await page.goto(`${base}/t/acme/calls/${String(call['id'])}`);
      await page.getByTestId('call-status').waitFor();
      await page.getByTestId('recording').waitFor();
      shots.push(path.join(screenshots, '11-web-call-record.png'));
      await page.screenshot({ path: shots.at(-1)!, fullPage: true });
    }
    const log = platform.lines.filter((l) => /web call|rtpengine|media relay/i.test(String(l['msg']))).map((l) => JSON.stringify(l)).join('\n');
    return { pageState, setupMs, agentAudioPeak, call, recordHref, screenshots: shots, rtpengineStarted: platform.lines.some((l) => l['msg'] === 'web calls: rtpengine started for WebRTC media'), log };
  } finally {
    if (process.env['WEB_CALL_DEBUG_LOG']) writeFileSync(process.env['WEB_CALL_DEBUG_LOG'], platform.lines.map((l) => JSON.stringify(l)).join('\n'));
    await chromium.close();
    platform.child.kill('SIGTERM');
    await new Promise((r) => {
      if (platform.child.exitCode !== null) return r(undefined);
      platform.child.once('exit', r);
      setTimeout(() => platform.child.kill('SIGKILL'), 15_000).unref();
    });
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  scenario(process.argv[2] ?? tmpdir()).then(
    (result) => process.stdout.write(`WEB-CALL-RESULT ${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stdout.write(`WEB-CALL-ERROR ${JSON.stringify(String((error as Error).stack ?? error))}\n`);
      process.exitCode = 1;
    },
  );
}
