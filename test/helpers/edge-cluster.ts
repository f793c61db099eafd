import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The scale-out deployment of docs/edge.md on one machine, each part on its own loopback address:
 * Kamailio with edge-conf/kamailio.cfg (the SIP edge), rtpengine (two interfaces: `external` for
 * carriers, `internal` for the nodes), and platform nodes as real processes sharing one
 * PostgreSQL. Used by test/system/edge-multi-node.test.ts and bench/edge-load.ts.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Who listens where (all on lo: Linux routes 127.0.0.0/8 there). */
export const edgeAddresses = {
  /** Kamailio's external socket: what carriers send to. */
  kamailio: '127.0.0.10',
  /** Kamailio's internal socket: what the nodes see and send to (sip.edge.addresses). */
  kamailioInternal: '127.0.0.9',
  nodes: ['127.0.0.11', '127.0.0.12'],
  /** rtpengine's `external` interface (what carriers see) and its ng control socket. */
  rtpExternal: '127.0.0.13',
  /** rtpengine's `internal` interface (what the nodes see). */
  rtpInternal: '127.0.0.14',
  /** The carrier: SIPp placing inbound calls. */
  carrier: '127.0.0.20',
  /** The carrier's callee side for outbound calls (a trunk's outbound address). */
  callee: '127.0.0.21',
} as const;

/** A free TCP port on `address` (also free for UDP in practice: both are checked). */
export async function freePort(address: string): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, address, () => {
        const p = (server.address() as { port: number }).port;
        server.close(() => resolve(p));
      });
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const s = createSocket('udp4');
      s.once('error', () => resolve(false));
      s.bind(port, address, () => s.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
  throw new Error(`no free port on ${address}`);
}

/** A child process with its output kept (the tail), for failure messages. */
export interface Daemon {
  readonly child: ChildProcess;
  output(): string;
  /** Output lines with the time each arrived (Date.now()): the log has no clock of its own. */
  readonly lines: Array<{ readonly at: number; readonly text: string }>;
  stop(): Promise<void>;
}

export function daemon(cmd: string, args: readonly string[], options: { detached?: boolean } = {}): Daemon {
  // Own process group: Kamailio forks its workers, and its CPU is measured over the group.
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
  let out = '';
  let partial = '';
  const lines: Array<{ at: number; text: string }> = [];
  const keep = (d: Buffer): void => {
    out = (out + d.toString()).slice(-50_000);
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop() ?? '';
    const at = Date.now();
    for (const text of parts) if (lines.length < 100_000) lines.push({ at, text });
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => out,
    lines,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const done = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
      if (!done) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** One UDP request/answer exchange; undefined when nothing came back in `ms`. */
export function udpAsk(address: string, port: number, message: Buffer, from: string, ms: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    const timer = setTimeout(() => {
      s.close();
      resolve(undefined);
    }, ms);
    s.once('message', (m) => {
      clearTimeout(timer);
      s.close();
      resolve(m);
    });
    s.bind(0, from, () => s.send(message, port, address));
  });
}

export async function until(what: string, ready: () => Promise<boolean>, d: Daemon, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (d.child.exitCode !== null) throw new Error(`${what} exited (${d.child.exitCode}):\n${d.output()}`);
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${ms} ms:\n${d.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface RtpengineOptions {
  readonly ngPort: number;
  readonly portMin: number;
  readonly portMax: number;
}

/**
 * rtpengine in userspace (`--table=-1`) with the interfaces the edge config names; ready once it
 * answers an ng `ping` (bencoded, after a cookie: rtpengine's ng protocol).
 */
export async function startRtpengine(o: RtpengineOptions): Promise<Daemon> {
  const d = daemon('rtpengine', [
    '--config-file=none', '--foreground', '--log-stderr', '--table=-1', '--log-level=5',
    `--interface=external/${edgeAddresses.rtpExternal}`, `--interface=internal/${edgeAddresses.rtpInternal}`,
    `--listen-ng=${edgeAddresses.rtpExternal}:${o.ngPort}`, `--port-min=${o.portMin}`, `--port-max=${o.portMax}`,
  ]);
  const ping = Buffer.from('edgetest d7:command4:pinge');
  await until('rtpengine', async () => (await udpAsk(edgeAddresses.rtpExternal, o.ngPort, ping, '127.0.0.1', 300))?.toString().includes('pong') === true, d, 20_000);
  return d;
}

export interface KamailioOptions {
  /** The external socket's port (carriers). */
  readonly port: number;
  /** The internal socket's port (nodes). */
  readonly internalPort: number;
  readonly nodes: ReadonlyArray<{ readonly address: string; readonly sipPort: number }>;
  readonly rtpengineNgPort: number;
  readonly workDir: string;
  readonly probeIntervalSeconds: number;
  readonly nodeTimeoutMs: number;
  readonly children?: number;
}

/**
 * Kamailio with edge-conf/kamailio.cfg as shipped, in its two-socket shape (external for carriers,
 * internal for the nodes), the settings given as -A defines; ready once it answers OPTIONS.
 */
export async function startKamailio(o: KamailioOptions): Promise<Daemon> {
  mkdirSync(o.workDir, { recursive: true });
  const list = path.join(o.workDir, 'dispatcher.list');
  writeFileSync(list, o.nodes.map((n) => `1 sip:${n.address}:${n.sipPort} 0 0\n`).join(''));
  const d = daemon('kamailio', [
    '-DD', '-E', '-f', path.join(root, 'edge-conf/kamailio.cfg'), '-Y', o.workDir, '-m', '64', '-M', '8',
    '-l', `udp:${edgeAddresses.kamailio}:${o.port}`,
    '-l', `udp:${edgeAddresses.kamailioInternal}:${o.internalPort}`,
    '-A', `EXTERNAL_SOCKET="udp:${edgeAddresses.kamailio}:${o.port}"`,
    '-A', `INTERNAL_SOCKET="udp:${edgeAddresses.kamailioInternal}:${o.internalPort}"`,
    '-A', `DISPATCHER_LIST="${list}"`,
    '-A', `RTPENGINE_SOCK="udp:${edgeAddresses.rtpExternal}:${o.rtpengineNgPort}"`,
    '-A', `PROBE_INTERVAL=${o.probeIntervalSeconds}`,
    '-A', `NODE_TIMEOUT_MS=${o.nodeTimeoutMs}`,
    '-A', `CHILDREN=${o.children ?? 4}`,
  ], { detached: true });
  const options = (n: number): Buffer =>
    Buffer.from(
      `OPTIONS sip:${edgeAddresses.kamailio}:${o.port} SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bK-ready-${n};rport\r\nMax-Forwards: 70\r\n` +
        `From: <sip:ready@127.0.0.1>;tag=r${n}\r\nTo: <sip:${edgeAddresses.kamailio}>\r\nCall-ID: ready-${n}@127.0.0.1\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n`,
    );
  let n = 0;
  await until('kamailio', async () => (await udpAsk(edgeAddresses.kamailio, o.port, options(++n), '127.0.0.1', 300))?.toString().startsWith('SIP/2.0 200') === true, d, 20_000);
  return d;
}

/**
 * CPU seconds of every live process in the group `pgid` (Kamailio and its workers), from /proc:
 * each thread's time on a CPU (`schedstat`, nanoseconds) where the kernel keeps it, else user +
 * system ticks of `stat` (10 ms each, too coarse for a few hundred calls).
 */
export function processGroupCpuSeconds(pgid: number): number {
  let seconds = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command name (which may contain spaces): state is field 3.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue; // field 5: pgrp
      const ticks = (Number(fields[11]) + Number(fields[12])) / 100; // fields 14, 15: utime, stime (USER_HZ 100)
      let ns = 0;
      for (const task of readdirSync(`/proc/${entry}/task`)) ns += Number(readFileSync(`/proc/${entry}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
      seconds += ns > 0 ? ns / 1e9 : ticks;
    } catch {
      continue; // exited meanwhile
    }
  }
  return seconds;
}

export interface NodeSettings {
  readonly name: string;
  readonly address: string;
  readonly sipPort: number;
  readonly controlPort: number;
  readonly rtpPortMin: number;
  readonly dataDir: string;
}

export interface ClusterSecrets {
  readonly secretKey: Buffer;
  readonly operatorToken: string;
}

export const clusterSecrets = (): ClusterSecrets => ({ secretKey: randomBytes(32), operatorToken: `edge-operator-${randomBytes(16).toString('hex')}` });

/**
 * A node's environment: everything bound to its own address, the shared database, secrets and
 * recordings store, the edge as the only source of calls and the outbound proxy.
 */
export interface EdgePorts {
  /** Kamailio's external and internal sockets. */
  readonly kamailio: number;
  readonly kamailioInternal: number;
  /** rtpengine's port range (both interfaces). */
  readonly rtpMin: number;
  readonly rtpMax: number;
}

export function nodeEnv(n: NodeSettings, shared: { databaseUrl: string; secrets: ClusterSecrets; edge: EdgePorts; roles?: string; extra?: Record<string, string> }): Record<string, string> {
  mkdirSync(n.dataDir, { recursive: true });
  return {
    ROLES: shared.roles ?? 'gateway,control,worker',
    CONFIG_FILE: '',
    DATA_DIR: n.dataDir,
    DATABASE_URL: shared.databaseUrl,
    SECRET_KEY: shared.secrets.secretKey.toString('hex'),
    OPERATOR_TOKEN: shared.secrets.operatorToken,
    CONTROL_HOST: n.address,
    CONTROL_PORT: String(n.controlPort),
    SIP_HOST: n.address,
    SIP_PORT: String(n.sipPort),
    SIP_TLS_PORT: '0',
    SIP_WS_PORT: '0',
    SIP_PUBLIC_ADDRESS: n.address,
    PROVIDERS_HOST: n.address,
    PROVIDERS_PORT: '0',
    RTP_BIND_ADDRESS: n.address,
    RTP_PORT_MIN: String(n.rtpPortMin),
    RTP_PORT_MAX: String(n.rtpPortMin + 3998),
    SIP_EDGE_ADDRESSES: edgeAddresses.kamailioInternal,
    SIP_OUTBOUND_PROXY: `sip:${edgeAddresses.kamailioInternal}:${shared.edge.kamailioInternal};lr`,
    SIP_EDGE_PUBLIC_ADDRESS: edgeAddresses.kamailio,
    SIP_EDGE_PUBLIC_PORT: String(shared.edge.kamailio),
    SIP_EDGE_RTP_PORT_MIN: String(shared.edge.rtpMin),
    SIP_EDGE_RTP_PORT_MAX: String(shared.edge.rtpMax),
    RECORDINGS_STORE: 'database',
    ...shared.extra,
  };
}
