import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '../..');

interface Ipv6CallResult {
  readonly answered: boolean;
  readonly offerFamily: string | undefined;
  readonly answerSdp: string | undefined;
  readonly heardSeconds: number;
  readonly heard440: number;
  readonly recordedSeconds: number;
  readonly recorded1000: number;
  readonly output: readonly string[];
}

/**
 * IPv6 media on a dual-stack gateway (docs/media.md, IPv6) with Debian's linphonec and its default
 * IPv6 media: the scenario runs in a network namespace with only `lo` (`unshare --net`, as root),
 * so the only IPv6 address linphone can offer is ::1.
 */
describe('IPv6 media with linphone (c=IN IP6 ::1)', function () {
  this.timeout(120_000);
  let result: Ipv6CallResult;

  before(async () => {
    assert.equal(process.getuid?.(), 0, 'the IPv6 interop test runs in its own network namespace (unshare --net): run it as root');
    const command = 'ip link set lo up && exec "$0" --import tsx test/gateway/ipv6-linphone-scenario.ts';
    const child = spawn('/usr/bin/unshare', ['--net', '/bin/sh', '-c', command, process.execPath], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = out.split('\n').find((l) => l.startsWith('IPV6-CALL-RESULT '));
    assert.ok(line, `the scenario failed (exit ${code}):\n${out.slice(-4000)}\n${err.slice(-4000)}`);
    result = JSON.parse(line.slice('IPV6-CALL-RESULT '.length)) as Ipv6CallResult;
  });

  it('answers linphone\'s IPv6 offer with c=IN IP6 ::1 from an IPv6 RTP socket', () => {
    assert.ok(result.answered, result.output.join('\n'));
    assert.equal(result.offerFamily, '::1');
    assert.match(result.answerSdp ?? '', /^c=IN IP6 ::1\r$/m);
    assert.match(result.answerSdp ?? '', /^o=- \d+ \d+ IN IP6 ::1\r$/m);
  });

  it('carries audio both ways: the platform hears linphone\'s 440 Hz, linphone records our 1 kHz', () => {
    // linphone plays 440 Hz for ~4 s before it hangs up; it records from the same moment, while our 4 s of 1 kHz still run.
    assert.ok(result.heard440 >= 2, `heard ${result.heardSeconds} s, 440 Hz for ${result.heard440} s`);
    assert.ok(result.recordedSeconds > 2 && result.recorded1000 >= 0.6, `recorded ${result.recordedSeconds} s, 1 kHz for ${result.recorded1000} s`);
  });
});
