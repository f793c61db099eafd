import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UdpPeer, sipRequest, statusLine } from './udp-peer.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The gateway role in the real platform process: PGlite, generated TLS certificate, all transports. */
describe('platform process: gateway role', function () {
  this.timeout(90_000);

  it('starts UDP/TCP/TLS/WS on the configured ports, answers OPTIONS, and stops on SIGTERM', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-gw-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/platform.ts'], {
      cwd: repoRoot,
      env: { ...process.env, LOG_LEVEL: 'info', DATA_DIR: dataDir, ROLES: 'gateway', SIP_HOST: '127.0.0.1', SIP_PORT: '0', SIP_TLS_PORT: '0', SIP_WS_PORT: '0', SIP_PUBLIC_ADDRESS: '127.0.0.1' },
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
    try {
      const deadline = Date.now() + 60_000;
      let listening: Record<string, unknown> | undefined;
      while (!listening) {
        listening = lines.find((l) => String(l['msg']).startsWith('SIP gateway listening'));
        if (child.exitCode !== null) throw new Error(`platform exited ${child.exitCode}: ${stderr}`);
        if (Date.now() > deadline) throw new Error(`gateway did not start: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
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
      assert.equal(code, 0, stderr);
      // No SIP timer (Timer J alone is 32 s) may keep the process alive after the sockets close.
      assert.ok(Date.now() - stopping < 10_000, `exit took ${Date.now() - stopping} ms`);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('starts without TLS, with a warning, when no certificate is configured and openssl is missing', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-gw-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/platform.ts'], {
      cwd: repoRoot,
      // No PATH: `openssl` cannot be found, as on a minimal machine.
      env: { ...process.env, PATH: '/nonexistent', LOG_LEVEL: 'info', DATA_DIR: dataDir, ROLES: 'gateway', SIP_HOST: '127.0.0.1', SIP_PORT: '0', SIP_TLS_PORT: '0', SIP_WS_PORT: '0', SIP_PUBLIC_ADDRESS: '127.0.0.1' },
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
    try {
      const deadline = Date.now() + 60_000;
      let listening: Record<string, unknown> | undefined;
      while (!listening) {
        listening = lines.find((l) => String(l['msg']).startsWith('SIP gateway listening'));
        if (child.exitCode !== null) throw new Error(`platform exited ${child.exitCode}: ${stderr}`);
        if (Date.now() > deadline) throw new Error(`gateway did not start: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const ports = listening['ports'] as Record<string, number>;
      assert.ok(ports['UDP'] && ports['TCP'] && ports['WS']);
      assert.equal(ports['TLS'], undefined);
      assert.ok(lines.some((l) => l['level'] === 'warn' && String(l['msg']).startsWith('SIP over TLS disabled')));
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 0, stderr);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
