import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import type { Logger } from '../../core/logger.js';
import { RtpengineBridge } from './rtpengine-bridge.js';

export interface RtpengineProcessOptions {
  readonly binary: string;
  /** `--interface`: the address browsers send media to (`local!advertised` behind NAT). */
  readonly interface: string;
  readonly portMin: number;
  readonly portMax: number;
  readonly logger: Logger;
  /** How long start() waits for the first `pong`. */
  readonly startTimeoutMs?: number;
}

/** A free UDP port on loopback for the ng socket (bound, read, released). */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/**
 * Runs rtpengine under a small shell that ends it when this process is gone: a gateway killed
 * with SIGKILL (or the OOM killer) gets no chance to stop its child, and an orphaned rtpengine
 * would keep its ports. The shell forwards SIGTERM and exits with rtpengine's status.
 */
const watchdog = [
  '"$0" "$@" & child=$!',
  'trap \'kill -TERM $child 2>/dev/null; wait $child; exit $?\' TERM INT',
  'while kill -0 "$VAP_PARENT_PID" 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 1 & wait $!; done',
  'kill -TERM $child 2>/dev/null; wait $child',
].join('\n');

/**
 * rtpengine (Debian `rtpengine-daemon`) run by the gateway for web calls, in userspace mode (no
 * kernel module: `--table=-1`), with its ng control socket on a loopback port of its own. Its
 * stderr goes to our log at debug level (the last lines are kept for the error when it fails to
 * start); if it dies while the gateway runs, it is started again after a second.
 */
export class RtpengineProcess {
  private child: ChildProcess | undefined;
  private stopping = false;
  private spawnFailed = false;
  private readonly tail: string[] = [];
  /** Names the call of a line of rtpengine's (it writes the SIP Call-ID of the session it speaks of). */
  private callOf: (line: string) => { callId: string; sipCallId?: string } | undefined = () => undefined;

  private constructor(
    private readonly o: RtpengineProcessOptions,
    readonly ng: { readonly host: string; readonly port: number },
  ) {}

  /** Starts rtpengine and resolves once it answers ng pings; rejects with its last words if it cannot. */
  static async start(o: RtpengineProcessOptions): Promise<{ process: RtpengineProcess; bridge: RtpengineBridge }> {
    const ng = { host: '127.0.0.1', port: await freeUdpPort() };
    const started = new RtpengineProcess(o, ng);
    const bridge = new RtpengineBridge({ ng, logger: o.logger });
    started.callOf = (line) => bridge.callIn(line);
    started.spawn();
    const deadline = Date.now() + (o.startTimeoutMs ?? 10_000);
    while (!(await bridge.ping())) {
      if (started.spawnFailed || started.child?.exitCode !== null || Date.now() > deadline) {
        await started.stop();
        bridge.close();
        throw new Error(`rtpengine did not start: ${started.tail.slice(-5).join(' | ') || 'no output'}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return { process: started, bridge };
  }

  private spawn(): void {
    const args = [
      '--config-file=none',
      '--foreground',
      '--log-stderr',
      `--log-level=${process.env['RTPENGINE_LOG_LEVEL'] ?? '5'}`,
      '--table=-1',
      `--interface=${this.o.interface}`,
      `--listen-ng=${this.ng.host}:${this.ng.port}`,
      `--port-min=${this.o.portMin}`,
      `--port-max=${this.o.portMax}`,
      '--delete-delay=0',
    ];
    const child = spawn('sh', ['-c', watchdog, this.o.binary, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, VAP_PARENT_PID: String(process.pid) } });
    this.child = child;
    child.on('error', (error) => {
      this.spawnFailed = true;
      this.note(`cannot run ${this.o.binary}: ${error.message}`);
    });
    let partial = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      partial += chunk.toString('utf8');
      let nl: number;
      while ((nl = partial.indexOf('\n')) >= 0) {
        this.note(partial.slice(0, nl));
        partial = partial.slice(nl + 1);
      }
    });
    child.once('exit', (code, signal) => {
      if (this.stopping || this.spawnFailed) return;
      this.o.logger.error({ code, signal, last: this.tail.slice(-3) }, 'rtpengine exited: web calls fail until it is back');
      setTimeout(() => {
        if (!this.stopping) this.spawn();
      }, 1000).unref();
    });
  }

  private note(line: string): void {
    this.tail.push(line);
    if (this.tail.length > 20) this.tail.shift();
    this.o.logger.debug({ part: 'rtpengine', ...this.callOf(line) }, line);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(killer);
  }
}
