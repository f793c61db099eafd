import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pino } from 'pino';
import { RtpengineBridge } from '../../media/webrtc/rtpengine-bridge.js';
import { RtpengineProcess } from '../../media/webrtc/rtpengine-process.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const logger = pino({ level: 'silent' });

/** The rtpengine the gateway role starts for web calls (Debian's rtpengine-daemon, userspace). */
describe('rtpengine run by the gateway for web calls', function () {
  this.timeout(60_000);

  it('starts, answers ng pings, and stops with the gateway', async () => {
    const started = await RtpengineProcess.start({ binary: 'rtpengine', interface: '127.0.0.1', portMin: 34_000, portMax: 34_099, logger });
    try {
      assert.ok(await started.bridge.ping());
    } finally {
      started.bridge.close();
      await started.process.stop();
    }
    const probe = new RtpengineBridge({ ng: started.process.ng, logger, timeoutMs: 500 });
    try {
      assert.equal(await probe.ping(), false);
    } finally {
      probe.close();
    }
  });

  it('names what went wrong when it cannot start (a missing binary)', async () => {
    await assert.rejects(
      RtpengineProcess.start({ binary: '/nonexistent/rtpengine', interface: '127.0.0.1', portMin: 34_100, portMax: 34_199, logger, startTimeoutMs: 5000 }),
      /rtpengine did not start: .*(not found|No such file)/,
    );
  });

  it('does not outlive a gateway killed with SIGKILL', async () => {
    const script = [
      "import { pino } from 'pino';",
      "import { RtpengineProcess } from './media/webrtc/rtpengine-process.ts';",
      "const s = await RtpengineProcess.start({ binary: 'rtpengine', interface: '127.0.0.1', portMin: 34200, portMax: 34299, logger: pino({ level: 'silent' }) });",
      'process.stdout.write(JSON.stringify(s.process.ng) + "\\n");',
      'setInterval(() => undefined, 1000);',
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    const ng = await new Promise<{ host: string; port: number }>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0] as string) as { host: string; port: number });
      });
      child.once('exit', (code) => reject(new Error(`exited ${code} before starting rtpengine`)));
    });
    const probe = new RtpengineBridge({ ng, logger, timeoutMs: 500 });
    try {
      assert.ok(await probe.ping());
      child.kill('SIGKILL');
      const deadline = Date.now() + 10_000;
      let alive = true;
      while (alive && Date.now() < deadline) alive = await probe.ping();
      assert.equal(alive, false, 'rtpengine still answers after its gateway was killed');
    } finally {
      probe.close();
      child.kill('SIGKILL');
    }
  });
});
