import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Debian's baresip 1.0 (`baresip` package), by absolute path: npm's PATH must not shadow it. */
export const baresipBinary = '/usr/bin/baresip';

export interface BaresipCall {
  /** The account line (RFC 3261 AOR and baresip parameters: `;mediaenc=srtp-mand;audio_codecs=...`). */
  readonly account: string;
  /** What to dial (`sip:+91...@127.0.0.1:5061;transport=tls`); absent: baresip waits for a call (UAS). */
  readonly dial?: string;
  /** What baresip sends as its microphone: a mono 16-bit WAV (aufile). */
  readonly sourceWav: string;
  /** Quit after this many seconds (`-t`): the call lasts until then unless the far end hangs up. */
  readonly seconds: number;
  /** `sip_cafile`: the gateway's certificate (baresip checks the server's; 1.0 cannot switch it off per account). */
  readonly cafile?: string;
  /** Local SIP address, e.g. `127.0.0.1:0` or `[::1]:0` (UDP and TCP; TLS listens on the next port). */
  readonly listen?: string;
  /** `sip_certificate`: a PEM with certificate and key, for baresip's TLS listener. */
  readonly certificate?: string;
}

export interface BaresipRun {
  readonly exitCode: number | null;
  readonly output: string;
  /** sndfile's dumps: what baresip decoded from us (`-dec.wav`) and encoded for us (`-enc.wav`). */
  readonly decoded: string | undefined;
  readonly encoded: string | undefined;
  /** Removes the run's folder. */
  cleanup(): void;
}

/**
 * Runs baresip as a SIP caller with no sound card: aufile plays `sourceWav` as the microphone,
 * aubridge stands in for the loudspeaker, sndfile writes both directions' audio as WAV files.
 */
export async function runBaresip(call: BaresipCall): Promise<BaresipRun> {
  const dir = mkdtempSync(path.join(tmpdir(), 'baresip-'));
  const config = [
    'poll_method epoll',
    'call_local_timeout 120',
    `sip_listen ${call.listen ?? '127.0.0.1:0'}`,
    ...(call.cafile ? [`sip_cafile ${call.cafile}`] : []),
    ...(call.certificate ? [`sip_certificate ${call.certificate}`] : []),
    'sip_verify_server no',
    `audio_source aufile,${call.sourceWav}`,
    'audio_player aubridge,speaker',
    'audio_alert aubridge,alert',
    'rtcp_mux no',
    'jitter_buffer_delay 1-10',
    'module_path /usr/lib/baresip/modules',
    'module g711.so',
    'module g722.so',
    'module aufile.so',
    'module aubridge.so',
    'module sndfile.so',
    'module srtp.so',
    'module_tmp account.so',
    'module_app menu.so',
    `snd_path ${dir}`,
    '',
  ].join('\n');
  writeFileSync(path.join(dir, 'config'), config);
  writeFileSync(path.join(dir, 'accounts'), `${call.account}\n`);
  writeFileSync(path.join(dir, 'contacts'), '');
  const dial = call.dial ? ['-e', `/dial ${call.dial}`] : [];
  const child = spawn(baresipBinary, ['-f', dir, ...dial, '-t', String(call.seconds)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  // -t ends it; the bound only guards against a hang.
  const killer = setTimeout(() => child.kill('SIGKILL'), (call.seconds + 30) * 1000);
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  clearTimeout(killer);
  const dumps = readdirSync(dir).filter((f) => f.startsWith('dump-'));
  const find = (suffix: string): string | undefined => {
    const f = dumps.find((d) => d.endsWith(suffix));
    return f ? path.join(dir, f) : undefined;
  };
  return { exitCode, output, decoded: find('-dec.wav'), encoded: find('-enc.wav'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
