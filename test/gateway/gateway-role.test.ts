import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UdpPeer, sipRequest, statusLine } from './udp-peer.js';

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
    env: { ...process.env, ...extraEnv, LOG_LEVEL: 'info', DATA_DIR: dataDir, ROLES: 'gateway', SIP_HOST: '127.0.0.1', SIP_PORT: '0', SIP_TLS_PORT: '0', SIP_WS_PORT: '0', SIP_PUBLIC_ADDRESS: '127.0.0.1' },
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
    let gw: GatewayProcess | undefined;
    try {
      // No PATH: `openssl` cannot be found, as on a minimal machine.
      gw = await startGatewayProcess(dataDir, { PATH: '/nonexistent' });
      const { child, listening, lines } = gw;
      const ports = listening['ports'] as Record<string, number>;
      assert.ok(ports['UDP'] && ports['TCP'] && ports['WS']);
      assert.equal(ports['TLS'], undefined);
      assert.ok(lines.some((l) => l['level'] === 'warn' && String(l['msg']).startsWith('SIP over TLS disabled')));
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 0, gw.stderr());
    } finally {
      if (gw && gw.child.exitCode === null) gw.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
