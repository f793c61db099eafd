/**
 * Run by ipv6-linphone.test.ts inside a network namespace with only `lo` (`unshare --net`), so
 * linphone's default IPv6 media lands on ::1 (on the host it would pick the machine's own IPv6
 * address). The gateway listens on [::1] with IPv6 RTP on ::1 beside IPv4; Debian's linphonec
 * calls a number over SIP/UDP on IPv6 with its defaults (IPv6 on), plays a 440 Hz WAV and records
 * what it hears. Prints one `IPV6-CALL-RESULT <json>` line.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ActiveCall, CallHandler } from '../../core/ports/call-handler.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import type { Call } from '../../gateway/call/call.js';
import { MediaService } from '../../media/media-service.js';
import { decodeWav, writeWav } from '../../media/wav/wav.js';
import { numberDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import { tone, toneSeconds } from '../helpers/tones.js';
import { startGatewayFixture } from './gateway-harness.js';

const did = '+914440000061';
const linphonec = '/usr/bin/linphonec';

class ToneHandler implements CallHandler {
  readonly heard: Int16Array[] = [];
  call: ActiveCall | undefined;
  async handle(call: ActiveCall): Promise<void> {
    this.call = call;
    call.media.output.write(tone(1000, 4, 8000));
    for await (const frame of call.media.input) {
      if (call.signal.aborted) break;
      this.heard.push(frame.samples);
    }
  }
}

const dir = mkdtempSync(path.join(tmpdir(), 'ipv6-linphone-'));
const handler = new ToneHandler();
const portMin = 42_000;
const media = new MediaService({ bindAddress: '127.0.0.1', bindAddress6: '::1', portMin, portMax: portMin + 100 });
const fx = await startGatewayFixture({ transports: { host: '::1', port: 0, tcpPort: 0 }, publicAddress: '::1', media, callHandler: handler, ringMs: 0 }, undefined, 'pglite');
try {
  const defs = createResourceDefinitions({ secretBox: testBox() });
  await defs.sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc('v6-carrier', { inbound: { terminationAddresses: ['::1'], dids: [did] } }) as never);
  await defs.phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(did, 'Flow', { provider: { type: 'customSipTrunk', trunk: 'v6-carrier' } }) as never);
  const callerWav = path.join(dir, 'caller.wav');
  const heardWav = path.join(dir, 'heard.wav');
  await writeWav(callerWav, tone(440, 8, 8000));
  const home = path.join(dir, 'home');
  mkdirSync(home);
  // linphonec only listens for SIP after `ports sip`; files stand in for the sound card.
  const commands = [
    [1000, 'soundcard use files'],
    [500, 'ports sip 45091'],
    [1500, `call sip:${did}@[::1]:${fx.gateway.ports.UDP}`],
    [2500, `play ${callerWav}`],
    [0, `record ${heardWav}`],
    [4000, 'terminate'],
    [1000, 'quit'],
  ] as const;
  const child = spawn(linphonec, ['-d', '0'], { env: { ...process.env, HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (const [wait, command] of commands) {
    await new Promise((r) => setTimeout(r, wait));
    child.stdin.write(`${command}\n`);
  }
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(killer);
  const joined = new Int16Array(handler.heard.reduce((n, f) => n + f.length, 0));
  handler.heard.reduce((at, f) => (joined.set(f, at), at + f.length), 0);
  let recorded: Int16Array = new Int16Array(0);
  try {
    recorded = decodeWav(readFileSync(heardWav));
  } catch {
    // No recording: reported as empty.
  }
  const result = {
    answered: handler.call !== undefined,
    offerFamily: handler.call ? (handler.call as Call).info.remoteAddress : undefined,
    answerSdp: handler.call ? (handler.call as Call).sdp.localSdp : undefined,
    heardSeconds: joined.length / 8000,
    heard440: toneSeconds(joined, 440, 8000),
    recordedSeconds: recorded.length / 8000,
    recorded1000: toneSeconds(recorded, 1000, 8000),
    output: output.split('\n').filter((l) => /error|call|488|Call/i.test(l)).slice(-12),
  };
  process.stdout.write(`IPV6-CALL-RESULT ${JSON.stringify(result)}\n`);
} finally {
  await fx.close();
  await media.close();
  rmSync(dir, { recursive: true, force: true });
}
