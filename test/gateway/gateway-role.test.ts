import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeDeepgram } from '../fakes/fake-deepgram.js';
import { startFakeTtsServer } from '../fakes/fake-tts-servers.js';
import { runSipp } from '../helpers/sipp.js';
import { UdpPeer, sipRequest, statusLine } from './udp-peer.js';
import { seedEmbeddedDatabase } from '../helpers/pglite-template.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

interface GatewayProcess {
  readonly child: ReturnType<typeof spawn>;
  readonly lines: Array<Record<string, unknown>>;
  /** The `SIP gateway listening` log line. */
  readonly listening: Record<string, unknown>;
  stderr(): string;
}

/** Starts the platform with only the gateway role on random loopback ports and waits until it listens. */
async function startGatewayProcess(dataDir: string, extraEnv: Record<string, string> = {}): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/platform.ts'], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: '', CONFIG_FILE: '', ...extraEnv, LOG_LEVEL: 'info', DATA_DIR: dataDir, ROLES: 'gateway', SIP_HOST: '127.0.0.1', SIP_PORT: '0', SIP_TLS_PORT: '0', SIP_WS_PORT: '0', SIP_WSS_PORT: '0', PROVIDERS_HOST: '127.0.0.1', PROVIDERS_PORT: '0', SIP_PUBLIC_ADDRESS: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let buffer = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    buffer += d.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>);
      buffer = buffer.slice(nl + 1);
    }
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const listening = lines.find((l) => String(l['msg']).startsWith('SIP gateway listening'));
    if (listening) return { child, lines, listening, stderr: () => stderr };
    if (child.exitCode !== null || Date.now() > deadline) {
      if (child.exitCode === null) child.kill('SIGKILL');
      throw new Error(`gateway did not start (exit ${child.exitCode}): ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The gateway role in the real platform process: PGlite, generated TLS certificate, all transports. */
describe('platform process: gateway role', function () {
  this.timeout(90_000);

  it('starts UDP/TCP/TLS/WS on the configured ports, answers OPTIONS, and stops on SIGTERM', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-gw-'));
    await seedEmbeddedDatabase(dataDir);
    let gw: GatewayProcess | undefined;
    try {
      gw = await startGatewayProcess(dataDir);
      const { child, listening } = gw;
      const ports = listening['ports'] as Record<string, number>;
      assert.ok(ports['UDP'] && ports['TCP'] && ports['TLS'] && ports['WS']);
      assert.equal(ports['TCP'], ports['UDP'], 'UDP and TCP share the SIP port');
      assert.match(String(listening['msg']), /run their number's recipe through the voice pipeline/);
      assert.ok(existsSync(path.join(dataDir, 'sip-tls', 'sip-cert.pem')));
      const peer = await UdpPeer.open();
      try {
        peer.send(ports['UDP'], sipRequest(peer, 'OPTIONS'));
        await peer.wait(statusLine(200), 5000);
      } finally {
        peer.close();
      }
      child.kill('SIGTERM');
      const stopping = Date.now();
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 0, gw.stderr());
      // No SIP timer (Timer J alone is 32 s) may keep the process alive after the sockets close.
      assert.ok(Date.now() - stopping < 10_000, `exit took ${Date.now() - stopping} ms`);
    } finally {
      if (gw && gw.child.exitCode === null) gw.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('starts without TLS, with a warning, when no certificate is configured and openssl is missing', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-gw-'));
    await seedEmbeddedDatabase(dataDir);
    let gw: GatewayProcess | undefined;
    try {
      // No PATH: `openssl` cannot be found, as on a minimal machine.
      gw = await startGatewayProcess(dataDir, { PATH: '/nonexistent' });
      const { child, listening, lines } = gw;
      const ports = listening['ports'] as Record<string, number>;
      assert.ok(ports['UDP'] && ports['TCP'] && ports['WS']);
      assert.equal(ports['TLS'], undefined);
      const warning = lines.find((l) => l['level'] === 'warn' && String(l['msg']).startsWith('SIP over TLS disabled'));
      assert.ok(warning);
      // The reason is the one that applies (openssl missing), not a guess.
      assert.equal(warning['failure'], 'openssl-missing');
      assert.match(String(warning['msg']), /openssl is not installed .*; install openssl, or set sip\.tlsCertFile and sip\.tlsKeyFile/);
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 0, gw.stderr());
    } finally {
      if (gw && gw.child.exitCode === null) gw.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("runs a SIPp call with the tenant's cloud speech (settings.speech applied with the CLI): Deepgram hears the caller, ElevenLabs speaks the branch", async function () {
    this.timeout(180_000);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-gw-speech-'));
    await seedEmbeddedDatabase(dataDir);
    const deepgramKey = 'dg-role-key-0123456789abcdef';
    const ttsKey = 'xi-role-key-0123456789abcdef';
    const deepgram = await startFakeDeepgram({ apiKey: deepgramKey, transcriptFor: (bytes) => (bytes > 0 ? 'please cancel my visit' : '') });
    const tts = await startFakeTtsServer(ttsKey);
    let gw: GatewayProcess | undefined;
    try {
      const number = '+914440009001';
      const docs = [
        { apiVersion: 'vap/v1', kind: 'Tenant', spec: { clientId: 'speaky', name: 'Speaky', settings: { speech: { deepgram: { apiKey: deepgramKey, baseUrl: deepgram.url }, elevenlabs: { apiKey: ttsKey, baseUrl: tts.url } } } } },
        { apiVersion: 'vap/v1', kind: 'SipTrunk', tenant: 'speaky', spec: { name: 'carrier', inbound: { terminationAddresses: ['127.0.0.23'], dids: [number] }, outbound: { username: 'speaky-out', password: 'speaky-sip-password', transport: 'udp' } } },
        { apiVersion: 'vap/v1', kind: 'SpeechProfile', tenant: 'speaky', spec: { name: 'cloud-voice', language: 'hi-IN', gender: 'female', provider: 'elevenlabs', voiceName: 'eleven-voice-7' } },
        {
          apiVersion: 'vap/v1',
          kind: 'Recipe',
          tenant: 'speaky',
          spec: {
            name: 'visit',
            startBlockId: 'ask',
            blocks: [
              { id: 'ask', type: 'smartAi', settings: { prompt: 'Confirm the visit.\nOpening: Will you visit us tomorrow?', retryLimit: 1, intents: [{ name: 'cancel', description: 'caller says no and wants to cancel' }] } },
              { id: 'cancelled', type: 'close', settings: { closingScript: 'Okay, your visit is cancelled.', disposition: 'cancelled' } },
              { id: 'unclear', type: 'close', settings: { closingScript: 'Sorry, goodbye.', disposition: 'unclear' } },
            ],
            connections: [
              { from: 'ask', exit: 'cancel', to: 'cancelled' },
              { from: 'ask', exit: 'fallback', to: 'unclear' },
            ],
          },
        },
        { apiVersion: 'vap/v1', kind: 'PhoneNumber', tenant: 'speaky', spec: { number, recipe: 'visit', provider: { type: 'customSipTrunk', trunk: 'carrier' }, language: 'hi-IN', voice: 'cloud-voice' } },
      ];
      // One YAML document per resource (JSON is YAML), as `apply -f` reads them.
      const file = path.join(dataDir, 'speaky.yaml');
      writeFileSync(file, docs.map((d) => JSON.stringify(d)).join('\n---\n'));
      const apply = spawn(process.execPath, ['--import', 'tsx', 'bin/cli.ts', 'apply', '-f', file], { cwd: repoRoot, env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', CONFIG_FILE: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let applyOut = '';
      apply.stdout.on('data', (d: Buffer) => (applyOut += d.toString()));
      apply.stderr.on('data', (d: Buffer) => (applyOut += d.toString()));
      const [applied] = (await once(apply, 'exit')) as [number | null];
      assert.equal(applied, 0, applyOut);

      gw = await startGatewayProcess(dataDir);
      const ports = gw.listening['ports'] as Record<string, number>;
      // The stock caller streams caller.wav from the ACK on and wants the gateway's BYE within 15 s.
      const sipp = await runSipp({ scenario: 'uac-invite-expect-200-gateway-bye.xml', target: `127.0.0.1:${ports['UDP']}`, service: number, localIp: '127.0.0.23', timeoutMs: 40_000 });
      assert.equal(sipp.successful, 1, `SIPp: ${sipp.errors || sipp.stdout.slice(-2000)}\n${gw.stderr()}`);
      assert.ok(deepgram.connections.length >= 1, 'the gateway streamed the caller to Deepgram');
      assert.equal(deepgram.connections[0]!.get('language'), 'hi-IN');
      assert.ok((deepgram.audioBytes[0] ?? 0) > 8000, 'caller audio reached Deepgram');
      const spoken = tts.requests.filter((r) => r.voice === 'eleven-voice-7').map((r) => r.text);
      assert.ok(spoken.includes('Okay, your visit is cancelled.'), `the branch of the Deepgram transcript was spoken through ElevenLabs: ${JSON.stringify(spoken)}`);
      const log = JSON.stringify(gw.lines) + gw.stderr();
      assert.ok(!log.includes(deepgramKey) && !log.includes(ttsKey), 'no key in the platform log');
      gw.child.kill('SIGTERM');
      await once(gw.child, 'exit');
    } finally {
      if (gw && gw.child.exitCode === null) gw.child.kill('SIGKILL');
      await deepgram.close();
      await tts.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
