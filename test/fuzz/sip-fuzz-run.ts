import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import { setImmediate as tick } from 'node:timers/promises';
import { SipRequest } from '../../gateway/sip/message/message.js';
import { parseDatagram } from '../../gateway/sip/message/parser.js';
import { createResponse } from '../../gateway/sip/message/response.js';
import { serialize } from '../../gateway/sip/message/serializer.js';
import { casePrng, makeCase, type CaseOrigin, type LiveDialog } from './sip-fuzz-cases.js';

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
  /** 5xx answers RFC 3261 does not require: must be 0. */
  serverErrors: number;
  /** The first 50 of them. */
  fiveXx: FiveXxSample[];
  /** 5xx answers RFC 3261 requires (see rfcRequired), by kind. */
  rfcRequired: Map<string, number>;
  requestsFromGateway: number;
  /** RTP the answered calls sent to the fuzzer's sink. */
  rtpPackets: number;
  gatewayRequestMethods: Map<string, number>;
  probesSent: number;
  probesAnswered: number;
  probesUnanswered: number;
  uncaughtExceptions: number;
  unhandledRejections: number;
  /** The first few of them, with their stack's top. */
  crashSamples: string[];
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

/** Where an answer arrived: the source it was sent from and its local port. */
interface Receiver {
  readonly transport: 'UDP' | 'TCP';
  readonly host: string;
  readonly port: number;
}

/**
 * The 5xx answers RFC 3261 itself prescribes, kept apart from the must-be-zero count: 501 for an
 * unknown method and 505 for another version (sec. 8.2.1, 21.5.2, 21.5.6), 500 for a request whose
 * CSeq is below the dialog's (sec. 12.2.2) and 500 with Retry-After for an INVITE while another is
 * in progress in the dialog (sec. 14.2).
 */
function rfcRequired(code: number, reason: string, text: string): string | undefined {
  if (code === 501) return '501 unknown method (sec. 8.2.1)';
  if (code === 505) return '505 SIP version (sec. 8.2.1)';
  if (code === 500 && reason === 'CSeq out of order') return '500 CSeq out of order (sec. 12.2.2)';
  if (code === 500 && /\r\nCSeq: *\d+ INVITE\r\n/i.test(text) && /\r\nRetry-After:/i.test(text)) return '500 + Retry-After, INVITE in progress (sec. 14.2)';
  return undefined;
}

export async function runSipFuzz(o: FuzzRunOptions): Promise<FuzzStats> {
  const stats: FuzzStats = {
    sent: 0, sentUdp: 0, sentTcp: 0, tooBigForUdp: 0, coalescedWrites: 0, tcpClosedByGateway: 0, responses: 0,
    byStatus: new Map(), serverErrors: 0, fiveXx: [], rfcRequired: new Map(), requestsFromGateway: 0, rtpPackets: 0, gatewayRequestMethods: new Map(), probesSent: 0, probesAnswered: 0, probesUnanswered: 0,
    uncaughtExceptions: 0, unhandledRejections: 0, crashSamples: [],
  };
  const sample = (kind: string, e: unknown): void => {
    if (stats.crashSamples.length < 10) stats.crashSamples.push(`${kind}: ${e instanceof Error ? (e.stack ?? e.message).split('\n').slice(0, 4).join(' | ') : String(e)}`);
  };
  const onUncaught = (e: unknown): void => {
    stats.uncaughtExceptions++;
    sample('uncaught exception', e);
  };
  const onUnhandled = (e: unknown): void => {
    stats.unhandledRejections++;
    sample('unhandled rejection', e);
  };
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUnhandled);
  const probes = new Map<string, number>();
  const caseOf = (text: string): number | undefined => {
    const m = new RegExp(`fz${o.seed}x(\\d+)`).exec(text);
    return m ? Number(m[1]) : undefined;
  };

  /** The last calls the gateway answered: in-dialog cases pick one by their index. */
  const dialogs: LiveDialog[] = [];
  let acks = 0;
  /**
   * A final answer to an INVITE is ACKed like a UAC would: a 3xx-6xx in its transaction (same top
   * Via, sec. 17.1.1.3), so the gateway stops retransmitting it and the counts are not inflated;
   * a 2xx with a new branch to its Contact (sec. 13.2.2.4), confirming the call, which then joins
   * the live dialogs until the gateway's BYE. Built from the raw header lines: an answer that
   * copies a malformed header of its request does not parse.
   */
  const ack = (octets: Buffer, text: string, code: number, at: Receiver, reply: (b: Buffer) => void): void => {
    const raw = (re: RegExp): string | undefined => re.exec(text)?.[1];
    const seq = raw(/\r\nCSeq[ \t]*:[ \t]*(\d+)[ \t]+INVITE[ \t]*\r\n/i);
    const from = raw(/\r\n(?:From|f)[ \t]*:[ \t]*([^\r\n]*)/i);
    const to = raw(/\r\n(?:To|t)[ \t]*:[ \t]*([^\r\n]*)/i);
    const callId = raw(/\r\n(?:Call-ID|i)[ \t]*:[ \t]*([^\r\n]*)/i);
    if (seq === undefined || from === undefined || to === undefined || callId === undefined) return;
    const ok = code < 300;
    const gateway = `sip:gateway@127.0.0.1:${at.transport === 'TCP' ? o.tcpPort : o.udpPort}`;
    const target = ok ? (raw(/\r\n(?:Contact|m)[ \t]*:[^<\r\n]*<([^>\r\n]*)>/i) ?? gateway) : gateway;
    const via = ok ? `SIP/2.0/${at.transport} ${at.host}:${at.port};branch=z9hG4bKack${acks++};rport` : raw(/\r\n(?:Via|v)[ \t]*:[ \t]*([^\r\n]*)/i);
    if (via === undefined) return;
    reply(Buffer.from(`ACK ${target} SIP/2.0\r\nVia: ${via}\r\nMax-Forwards: 70\r\nFrom: ${from}\r\nTo: ${to}\r\n` +
      `Call-ID: ${callId}\r\nCSeq: ${seq} ACK\r\nContent-Length: 0\r\n\r\n`, 'latin1'));
    if (!ok || !new RegExp(`^fz${o.seed}x\\d+@fuzz$`).test(callId) || dialogs.some((d) => d.callId === callId)) return;
    try {
      const res = parseDatagram(octets);
      if (res.from.tag && res.to.tag) dialogs.push({ callId, fromTag: res.from.tag, toTag: res.to.tag });
      if (dialogs.length > 16) dialogs.shift();
    } catch {
      // Not a call we can address.
    }
  };

  /** Whatever the gateway sent: a response is tallied; a request (a BYE) is answered 200. */
  let lastReceived = Date.now();
  const receive = (octets: Buffer, at: Receiver, reply: (b: Buffer) => void): void => {
    lastReceived = Date.now();
    const text = octets.toString('latin1');
    const status = /^SIP\/2\.0 (\d{3}) ([^\r\n]*)/.exec(text);
    if (!status) {
      stats.requestsFromGateway++;
      const method = /^([A-Z]{1,12}) /.exec(text)?.[1] ?? 'unparsable';
      stats.gatewayRequestMethods.set(method, (stats.gatewayRequestMethods.get(method) ?? 0) + 1);
      try {
        const req = parseDatagram(octets);
        if (req instanceof SipRequest && req.method !== 'ACK') reply(serialize(createResponse(req, 200)));
        const ended = req instanceof SipRequest && req.method === 'BYE' ? dialogs.findIndex((d) => d.callId === req.callId) : -1;
        if (ended >= 0) dialogs.splice(ended, 1);
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
    if (code >= 200) ack(octets, text, code, at, reply);
    const required = rfcRequired(code, status[2] ?? '', text);
    if (required) stats.rfcRequired.set(required, (stats.rfcRequired.get(required) ?? 0) + 1);
    else if (code >= 500) {
      stats.serverErrors++;
      if (stats.fiveXx.length < 50) stats.fiveXx.push({ status: code, reason: status[2] ?? '', caseIndex: caseOf(text) });
    }
  };

  const udp = new Map<string, UdpSocket>();
  const bindUdp = async (host: string): Promise<UdpSocket> => {
    const s = createSocket('udp4');
    await new Promise<void>((resolve) => s.bind(0, host, resolve));
    s.on('message', (buf, from) => receive(buf, { transport: 'UDP', host, port: s.address().port }, (b) => s.send(b, from.port, from.address)));
    s.on('error', () => undefined);
    return s;
  };
  for (const host of [...o.sources, o.probeSource]) udp.set(host, await bindUdp(host));
  const rtpSink = createSocket('udp4');
  await new Promise<void>((resolve) => rtpSink.bind(0, RTP_HOST, resolve));
  rtpSink.on('message', () => void stats.rtpPackets++);
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
          receive(next.message, { transport: 'TCP', host, port: s.localPort ?? 0 }, (b) => s.write(b));
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
    const c = makeCase(o.seed, index, origin, rtp, dialogs[index % Math.max(1, dialogs.length)]);
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
