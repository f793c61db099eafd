import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pino } from 'pino';
import { RtpengineBridge } from '../../media/webrtc/rtpengine-bridge.js';
import { RtpengineProcess } from '../../media/webrtc/rtpengine-process.js';
import { captureLogs } from '../helpers/log-capture.js';

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

  it('every log line of a relayed call carries its call id: the SDP both ways and rtpengine\'s own lines', async () => {
    const logs = captureLogs('debug');
    const started = await RtpengineProcess.start({ binary: 'rtpengine', interface: '127.0.0.1', portMin: 34_300, portMax: 34_399, logger: logs.logger });
    const leg = { callId: 'call-under-test', sipCallId: `sip-${Date.now()}@test`, fromTag: 'browser-tag', toTag: 'platform-tag' };
    try {
      const offer = [
        'v=0', 'o=- 1 2 IN IP4 127.0.0.1', 's=-', 't=0 0', 'a=group:BUNDLE 0', 'm=audio 9 UDP/TLS/RTP/SAVPF 0 8', 'c=IN IP4 127.0.0.1',
        'a=candidate:1 1 udp 2122260223 127.0.0.1 40000 typ host generation 0', 'a=ice-ufrag:abcd', 'a=ice-pwd:0123456789abcdef01234567',
        `a=fingerprint:sha-256 ${Array.from({ length: 32 }, () => 'AB').join(':')}`, 'a=setup:actpass', 'a=mid:0', 'a=sendrecv', 'a=rtcp-mux',
        'a=rtpmap:0 PCMU/8000', 'a=rtpmap:8 PCMA/8000', '',
      ].join('\r\n');
      const plainOffer = await started.bridge.offer(leg, offer);
      assert.match(plainOffer, /RTP\/AVP/);
      await started.bridge.release(leg);
      const deadline = Date.now() + 5_000;
      while (!logs.lines.some((l) => l['part'] === 'rtpengine' && l.msg.includes(leg.sipCallId)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    } finally {
      started.bridge.close();
      await started.process.stop();
    }
    const ours = logs.lines.filter((l) => l.msg === 'SDP to rtpengine' || l.msg === 'rtpengine rewrote the SDP');
    assert.equal(ours.length, 2);
    for (const l of ours) assert.deepEqual([l['callId'], l['sipCallId']], [leg.callId, leg.sipCallId]);
    const theirs = logs.lines.filter((l) => l['part'] === 'rtpengine' && l.msg.includes(leg.sipCallId));
    assert.ok(theirs.length > 0, `rtpengine logged nothing about the session:\n${logs.lines.filter((l) => l['part'] === 'rtpengine').map((l) => l.msg).join('\n')}`);
    for (const l of theirs) assert.equal(l['callId'], leg.callId, l.msg);
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
