import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import { setImmediate as tick } from 'node:timers/promises';
import { SipRequest } from '../../gateway/sip/message/message.js';
import { parseDatagram } from '../../gateway/sip/message/parser.js';
import { createResponse } from '../../gateway/sip/message/response.js';
import { serialize } from '../../gateway/sip/message/serializer.js';
import { casePrng, makeCase, type CaseOrigin } from './sip-fuzz-cases.js';

/**
 * Sends seeded fuzz cases (sip-fuzz-cases.ts) to a running gateway over UDP and TCP, from many
 * loopback sources, with liveness probes from another source, and tallies what comes back.
 * The case set is a pure function of the seed; timing is not (it is a real network exchange).
 */

export interface FuzzRunOptions {
  readonly seed: number;
  readonly cases: number;
  /** Replay only these case indexes (e.g. a 5xx reported by an earlier run). */
  readonly only?: readonly number[];
  readonly udpPort: number;
  readonly tcpPort: number;
  /** Case sources (127.0.3.x): spread so the per-source rate stays under the abuse guard's limit. */
  readonly sources: readonly string[];
  /** Source of the liveness probes. */
  readonly probeSource: string;
  readonly did: string;
  readonly tcpShare?: number;
  /** Cases per second (wall clock): a pace, not a measurement. */
  readonly rate?: number;
  readonly probeEvery?: number;
  readonly probeTimeoutMs?: number;
  /** Called every `progressEvery` cases and at the end. */
  readonly onProgress?: (stats: FuzzStats) => void;
  readonly progressEvery?: number;
}

export interface FiveXxSample {
  readonly status: number;
  readonly reason: string;
  readonly caseIndex: number | undefined;
}

export interface FuzzStats {
  sent: number;
  sentUdp: number;
  sentTcp: number;
  /** Cases a datagram could not carry (over 64 KiB). */
  tooBigForUdp: number;
  /** TCP writes that packed several cases into one segment. */
  coalescedWrites: number;
  /** Connections the gateway closed (lost framing, as RFC 3261 sec. 18.3 requires). */
  tcpClosedByGateway: number;
  responses: number;
  byStatus: Map<number, number>;
  fiveXx: FiveXxSample[];
  requestsFromGateway: number;
  probesSent: number;
  probesAnswered: number;
  probesUnanswered: number;
  uncaughtExceptions: number;
  unhandledRejections: number;
}

const RTP_HOST = '127.0.3.250';

/** One message's worth of a stream from the gateway; undefined until complete. */
function nextMessage(buf: Buffer): { message: Buffer; rest: Buffer } | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = buf.toString('latin1', 0, end);
  const length = Number(/\r\nContent-Length: *(\d+)/i.exec(head)?.[1] ?? 0);
  if (buf.length < end + 4 + length) return undefined;
  return { message: buf.subarray(0, end + 4 + length), rest: buf.subarray(end + 4 + length) };
}

/**
 * Whether `octets` are exactly one message framed by one Content-Length (RFC 3261 sec. 18.3). A
 * case that is not (truncated, a longer Content-Length, none) leaves the stream in a state the
 * next case would inherit, so it gets a connection of its own.
 */
function cleanlyFramed(octets: Buffer): boolean {
  const end = octets.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const lengths = [...octets.toString('latin1', 0, end).matchAll(/\r\n(?:content-length|l)[ \t]*:[ \t]*(\d+)[ \t]*(?=\r\n|$)/gi)];
  return lengths.length === 1 && Number(lengths[0]?.[1]) === octets.length - end - 4;
}

export async function runSipFuzz(o: FuzzRunOptions): Promise<FuzzStats> {
  const stats: FuzzStats = {
    sent: 0, sentUdp: 0, sentTcp: 0, tooBigForUdp: 0, coalescedWrites: 0, tcpClosedByGateway: 0, responses: 0,
    byStatus: new Map(), fiveXx: [], requestsFromGateway: 0, probesSent: 0, probesAnswered: 0, probesUnanswered: 0,
    uncaughtExceptions: 0, unhandledRejections: 0,
  };
  const onUncaught = (): void => void stats.uncaughtExceptions++;
  const onUnhandled = (): void => void stats.unhandledRejections++;
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUnhandled);
  const probes = new Map<string, number>();
  const caseOf = (text: string): number | undefined => {
    const m = new RegExp(`fz${o.seed}x(\\d+)`).exec(text);
    return m ? Number(m[1]) : undefined;
  };

  /** Whatever the gateway sent: a response is tallied; a request (a BYE) is answered 200. */
  let lastReceived = Date.now();
  const receive = (octets: Buffer, reply: (b: Buffer) => void): void => {
    lastReceived = Date.now();
    const text = octets.toString('latin1');
    const status = /^SIP\/2\.0 (\d{3}) ([^\r\n]*)/.exec(text);
    if (!status) {
      stats.requestsFromGateway++;
      try {
        const req = parseDatagram(octets);
        if (req instanceof SipRequest && req.method !== 'ACK') reply(serialize(createResponse(req, 200)));
      } catch {
        // Nothing to answer.
      }
      return;
    }
    const code = Number(status[1]);
    stats.responses++;
    stats.byStatus.set(code, (stats.byStatus.get(code) ?? 0) + 1);
    const callId = /\r\n(?:Call-ID|i) *: *([^\r\n]*)/i.exec(text)?.[1];
    if (callId !== undefined && probes.has(callId) && code === 200) {
      probes.delete(callId);
      stats.probesAnswered++;
    }
    // 501 (unknown method, sec. 8.2.1) and 505 (sec. 8.2.1 version) are what the RFC requires.
    if (code >= 500 && code !== 501 && code !== 505 && stats.fiveXx.length < 50) {
      stats.fiveXx.push({ status: code, reason: status[2] ?? '', caseIndex: caseOf(text) });
    }
  };

  const udp = new Map<string, UdpSocket>();
  const bindUdp = async (host: string): Promise<UdpSocket> => {
    const s = createSocket('udp4');
    await new Promise<void>((resolve) => s.bind(0, host, resolve));
    s.on('message', (buf, from) => receive(buf, (b) => s.send(b, from.port, from.address)));
    s.on('error', () => undefined);
    return s;
  };
  for (const host of [...o.sources, o.probeSource]) udp.set(host, await bindUdp(host));
  const rtpSink = await bindUdp(RTP_HOST);
  const rtp = { host: RTP_HOST, port: rtpSink.address().port };

  const tcp = new Map<string, Promise<Socket>>();
  let finished = false;
  const endedByUs = new WeakSet<Socket>();
  const tcpTo = (host: string): Promise<Socket> => {
    let pending = tcp.get(host);
    if (pending) return pending;
    pending = new Promise<Socket>((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port: o.tcpPort, localAddress: host });
      s.setNoDelay(true);
      let buffered: Buffer = Buffer.alloc(0);
      s.on('data', (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        for (let next = nextMessage(buffered); next; next = nextMessage(buffered)) {
          buffered = next.rest;
          receive(next.message, (b) => s.write(b));
        }
      });
      s.once('connect', () => resolve(s));
      s.on('error', reject);
      s.on('close', () => {
        if (tcp.get(host) === pending) tcp.delete(host);
        // Counted only when the gateway closed first (we half-close after an ill-framed case).
        if (!finished && !endedByUs.has(s)) stats.tcpClosedByGateway++;
      });
    });
    pending.catch(() => tcp.delete(host));
    tcp.set(host, pending);
    return pending;
  };
  const local = (s: UdpSocket): number => s.address().port;

  let probeCount = 0;
  const probe = async (): Promise<void> => {
    const id = `probe-${o.seed}-${probeCount++}`;
    const overTcp = probeCount % 2 === 0;
    let port = local(udp.get(o.probeSource) as UdpSocket);
    let socket: Socket | undefined;
    if (overTcp) {
      socket = await tcpTo(o.probeSource).catch(() => undefined);
      port = socket?.localPort ?? port;
    }
    const transport = socket ? 'TCP' : 'UDP';
    const text = `OPTIONS sip:probe@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/${transport} ${o.probeSource}:${port};branch=z9hG4bK${id};rport\r\n` +
      `Max-Forwards: 70\r\nFrom: <sip:probe@${o.probeSource}>;tag=p\r\nTo: <sip:probe@127.0.0.1>\r\nCall-ID: ${id}\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n`;
    probes.set(id, Date.now() + (o.probeTimeoutMs ?? 5000));
    stats.probesSent++;
    if (socket) socket.write(text);
    else udp.get(o.probeSource)?.send(text, o.udpPort, '127.0.0.1');
  };
  const expireProbes = (): void => {
    const now = Date.now();
    for (const [id, deadline] of probes) {
      if (deadline < now) {
        probes.delete(id);
        stats.probesUnanswered++;
      }
    }
  };

  const indexes = o.only ?? Array.from({ length: o.cases }, (_, i) => i);
  const rate = o.rate ?? 1500;
  const started = Date.now();
  let coalesce: { host: string; parts: Buffer[] } | undefined;
  const flush = async (): Promise<void> => {
    if (!coalesce) return;
    const { host, parts } = coalesce;
    coalesce = undefined;
    const s = await tcpTo(host).catch(() => undefined);
    if (parts.length > 1) stats.coalescedWrites++;
    s?.write(Buffer.concat(parts));
  };
  for (let n = 0; n < indexes.length; n++) {
    const index = indexes[n] as number;
    const r = casePrng(o.seed ^ 0x5bd1e995, index);
    // Runs of 8 cases per source, so TCP cases can share a segment; on average each source
    // still sends 1/N of the rate.
    const host = o.sources[Math.floor(index / 8) % o.sources.length] as string;
    const overTcp = r.chance(o.tcpShare ?? 0.4);
    const socket = overTcp ? await tcpTo(host).catch(() => undefined) : undefined;
    const origin: CaseOrigin = overTcp
      ? { transport: 'TCP', host, port: socket?.localPort ?? 5060, gatewayPort: o.tcpPort, did: o.did }
      : { transport: 'UDP', host, port: local(udp.get(host) as UdpSocket), gatewayPort: o.udpPort, did: o.did };
    const c = makeCase(o.seed, index, origin, rtp);
    stats.sent++;
    if (!overTcp) {
      stats.sentUdp++;
      if (c.octets.length > 65_000) stats.tooBigForUdp++;
      else udp.get(host)?.send(c.octets, o.udpPort, '127.0.0.1');
    } else if (socket) {
      stats.sentTcp++;
      if (coalesce && (coalesce.host !== host || coalesce.parts.length >= 3)) await flush();
      const clean = cleanlyFramed(c.octets);
      if (clean && r.chance(0.3)) {
        // Several messages in one segment (RFC 3261 sec. 18.3 framing by Content-Length).
        coalesce ??= { host, parts: [] };
        coalesce.parts.push(c.octets);
      } else {
        await flush();
        // Random fragments, each its own write (and, with Nagle off, its own segment).
        let at = 0;
        for (let k = 0, pieces = 1 + r.int(4); k < pieces && at < c.octets.length; k++) {
          const end = k === pieces - 1 ? c.octets.length : at + r.int(c.octets.length - at + 1);
          socket.write(c.octets.subarray(at, end));
          at = end;
        }
        if (!clean) {
          // Half-close: the answer still comes back; the next case gets a fresh connection.
          if (tcp.get(host)) tcp.delete(host);
          endedByUs.add(socket);
          socket.end();
        }
      }
    }
    if ((n + 1) % (o.probeEvery ?? 200) === 0) await probe();
    if ((n + 1) % 20 === 0) {
      await flush();
      expireProbes();
      const ahead = (n + 1) / rate * 1000 - (Date.now() - started);
      if (ahead > 0) await new Promise((resolve) => setTimeout(resolve, ahead));
      else await tick();
    }
    if (o.onProgress && (n + 1) % (o.progressEvery ?? 5000) === 0) o.onProgress(stats);
  }
  await flush();
  await probe();
  // The last answers and probes: until the probes are in and nothing came for a second, at
  // most the probe timeout.
  const end = Date.now() + (o.probeTimeoutMs ?? 5000) + 100;
  while ((probes.size > 0 || Date.now() - lastReceived < 1000) && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
  expireProbes();
  for (const id of [...probes.keys()]) {
    probes.delete(id);
    stats.probesUnanswered++;
  }
  finished = true;
  for (const s of [...udp.values(), rtpSink]) s.close();
  for (const s of tcp.values()) void s.then((sock) => sock.destroy(), () => undefined);
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUnhandled);
  o.onProgress?.(stats);
  return stats;
}
