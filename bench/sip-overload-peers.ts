/**
 * The two well-behaved peers of bench/sip-overload.ts, each run as its own child process so that
 * their timing is not the flood's or the platform's:
 *
 * - `callers`: N calls from the trunk address to a number whose recipe keeps talking, with RTP
 *   both ways (PCMU, 20 ms). It times every RTP packet the platform sends back and reports the
 *   gaps over 100 ms per call (with when they happened), lost sequence numbers, calls the
 *   platform ended, and its own event-loop stalls (a stall here would show as a gap too).
 * - `probe`: an OPTIONS from another address every `everyMs`, each timed to its 200; a probe
 *   without an answer in 2 s is lost.
 *
 * Both speak over IPC: `{ cmd: 'start' | 'stop' }` in, `{ up }`, `{ report }` out.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { parseDatagram } from '../gateway/sip/message/parser.js';
import { SipRequest, SipResponse } from '../gateway/sip/message/message.js';

export interface CallReport {
  readonly callId: string;
  readonly answered: boolean;
  readonly packetsIn: number;
  readonly packetsOut: number;
  readonly lost: number;
  readonly maxGapMs: number;
  /** Gaps over 100 ms: [epoch ms when the late packet came, gap ms]. */
  readonly gaps: ReadonlyArray<readonly [number, number]>;
  readonly endedByPlatform: boolean;
}

export interface CallersReport {
  readonly calls: readonly CallReport[];
  /** This process's own loop stalls over 50 ms: [epoch ms, ms]. */
  readonly stalls: ReadonlyArray<readonly [number, number]>;
}

export interface ProbeReport {
  readonly sent: number;
  /** [epoch ms sent, latency ms] per answered probe. */
  readonly answered: ReadonlyArray<readonly [number, number]>;
}

const send = (msg: unknown): Promise<void> => new Promise((resolve) => (process.send ? process.send(msg, () => resolve()) : resolve()));

const crlf = (text: string): Buffer => Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'latin1');

/** Own loop lag: a 10 ms timer that notes how late it runs. */
function watchStalls(stalls: Array<[number, number]>): () => void {
  let due = performance.now() + 10;
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - due > 50) stalls.push([Date.now(), Math.round(now - due)]);
    due = now + 10;
  }, 10);
  return () => clearInterval(timer);
}

interface Call {
  readonly n: number;
  readonly callId: string;
  readonly rtp: Socket;
  readonly ssrc: number;
  inviteBranch: string;
  toTag?: string;
  target?: string;
  media?: { address: string; port: number };
  answered: boolean;
  ended: boolean;
  endedByPlatform: boolean;
  seqOut: number;
  packetsOut: number;
  packetsIn: number;
  lastIn: number;
  maxGap: number;
  nextSeqIn: number | undefined;
  lost: number;
  gaps: Array<[number, number]>;
  byeAnswered: boolean;
  retries: number;
  /** A response to the current INVITE came (retransmissions stop, RFC 3261 sec. 17.1.1.2). */
  heard: boolean;
  /** Waiting out a Retry-After. */
  waiting: boolean;
}

async function callers(gateway: { address: string; port: number }, local: string, number: string, count: number, spacingMs: number): Promise<void> {
  const sip = createSocket({ type: 'udp4', recvBufferSize: 1 << 20 });
  await new Promise<void>((r) => sip.bind(0, local, r));
  const sipPort = sip.address().port;
  const stalls: Array<[number, number]> = [];
  const stopWatch = watchStalls(stalls);
  const calls: Call[] = [];
  for (let n = 1; n <= count; n++) {
    const rtp = createSocket({ type: 'udp4', recvBufferSize: 1 << 20 });
    await new Promise<void>((r) => rtp.bind(0, local, r));
    const call: Call = {
      n, callId: `hold-${n}-${process.pid}@${local}`, rtp, ssrc: (Math.random() * 0xffffffff) >>> 0, inviteBranch: '',
      answered: false, ended: false, endedByPlatform: false, seqOut: 0, packetsOut: 0, packetsIn: 0, lastIn: 0, maxGap: 0,
      nextSeqIn: undefined, lost: 0, gaps: [], byeAnswered: false, retries: 0, heard: false, waiting: false,
    };
    rtp.on('message', (buf) => onRtp(call, buf));
    calls.push(call);
  }
  const byCallId = new Map(calls.map((c) => [c.callId, c]));
  const head = (c: Call, method: string, cseq: number, uri: string, branch: string): string =>
    `${method} ${uri} SIP/2.0\nVia: SIP/2.0/UDP ${local}:${sipPort};branch=${branch};rport\nMax-Forwards: 70\n` +
    `From: <sip:+9198000${String(c.n).padStart(5, '0')}@${local}>;tag=hold${c.n}\nTo: <sip:${number}@${gateway.address}>${c.toTag ? `;tag=${c.toTag}` : ''}\n` +
    `Call-ID: ${c.callId}\nCSeq: ${cseq} ${method}\nContact: <sip:caller@${local}:${sipPort}>\n`;
  const toGateway = (text: string): void => void sip.send(crlf(text), gateway.port, gateway.address);
  const invite = (c: Call): void => {
    const port = c.rtp.address().port;
    const sdp = `v=0\no=- ${c.n} 1 IN IP4 ${local}\ns=-\nc=IN IP4 ${local}\nt=0 0\nm=audio ${port} RTP/AVP 0 101\na=rtpmap:0 PCMU/8000\na=rtpmap:101 telephone-event/8000\na=fmtp:101 0-15\na=ptime:20\na=sendrecv\n`;
    c.inviteBranch ||= `z9hG4bK-hold-${c.n}-${process.pid}`;
    const body = crlf(sdp);
    toGateway(`${head(c, 'INVITE', 1, `sip:${number}@${gateway.address}:${gateway.port}`, c.inviteBranch)}Content-Type: application/sdp\nContent-Length: ${body.length}\n\n${body.toString('latin1')}`);
  };
  const ack = (c: Call): void => toGateway(`${head(c, 'ACK', 1, c.target as string, `z9hG4bK-ack-${c.n}-${Date.now()}`)}Content-Length: 0\n\n`);
  const bye = (c: Call): void => toGateway(`${head(c, 'BYE', 2, c.target as string, `z9hG4bK-bye-${c.n}`)}Content-Length: 0\n\n`);

  sip.on('message', (buf: Buffer, from: RemoteInfo) => {
    let msg;
    try {
      msg = parseDatagram(buf);
    } catch {
      return;
    }
    const c = byCallId.get(msg.callId);
    if (!c) return;
    if (msg instanceof SipRequest) {
      // The platform ended the call (or asks anything else in the dialog): 200, copied back (RFC 3261 sec. 8.2.6).
      const text = buf.toString('latin1');
      const lines = text.slice(0, text.indexOf('\r\n\r\n')).split('\r\n').filter((l) => /^(via|from|to|call-id|cseq|v|f|t|i):/i.test(l));
      sip.send(crlf(`SIP/2.0 200 OK\n${lines.join('\n')}\nContent-Length: 0\n\n`), from.port, from.address);
      if (msg.method === 'BYE' && !c.ended) {
        c.ended = true;
        c.endedByPlatform = true;
      }
      return;
    }
    const res = msg as SipResponse;
    if (res.cseq.method === 'BYE') {
      c.byeAnswered = true;
      return;
    }
    if (res.cseq.method !== 'INVITE') return;
    if (res.headers.get('via')?.includes(c.inviteBranch)) c.heard = true;
    if (res.status < 200) return;
    if (res.status >= 300) {
      // A node at its call rate says when to come back (RFC 3261 sec. 21.5.4): a carrier tries again then.
      const retryAfter = Number(res.headers.get('retry-after'));
      if (res.status === 503 && retryAfter > 0 && c.retries++ < 5) {
        c.waiting = true;
        setTimeout(() => {
          c.inviteBranch = `z9hG4bK-hold-${c.n}-${process.pid}-r${c.retries}`;
          c.waiting = false;
          c.heard = false;
          invite(c);
        }, Math.min(retryAfter, 10) * 1000);
        return;
      }
      c.ended = true;
      return;
    }
    c.toTag = res.to.tag;
    c.target = res.headers.get('contact')?.replace(/^.*<|>.*$/g, '') ?? `sip:${number}@${gateway.address}:${gateway.port}`;
    const sdp = res.body.toString('latin1');
    const address = /c=IN IP4 (\S+)/.exec(sdp)?.[1];
    const port = Number(/m=audio (\d+)/.exec(sdp)?.[1]);
    if (address && port) c.media = { address, port };
    c.answered = true;
    ack(c);
  });

  function onRtp(c: Call, buf: Buffer): void {
    if (buf.length < 12 || c.ended) return;
    const now = performance.now();
    const seq = buf.readUInt16BE(2);
    if (c.packetsIn > 0) {
      const gap = now - c.lastIn;
      if (gap > c.maxGap) c.maxGap = gap;
      if (gap > 100) c.gaps.push([Date.now(), Math.round(gap)]);
      // A jump of 1000 or more is a new stream or reordering, not loss.
      const missing = c.nextSeqIn === undefined ? 0 : (seq - c.nextSeqIn) & 0xffff;
      if (missing < 1000) c.lost += missing;
    }
    c.nextSeqIn = (seq + 1) & 0xffff;
    c.lastIn = now;
    c.packetsIn++;
  }

  // Place the calls `spacingMs` apart; an INVITE unanswered after 500 ms is sent again (same
  // branch: a retransmission), one refused 503 again after its Retry-After (a new transaction).
  for (const c of calls) {
    invite(c);
    await new Promise((r) => setTimeout(r, spacingMs));
  }
  const deadline = Date.now() + 60_000;
  while (calls.some((c) => !c.answered && !c.ended) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    for (const c of calls) if (!c.answered && !c.ended && !c.heard && !c.waiting) invite(c);
  }
  // RTP every 20 ms on a clock that does not drift: a late timer sends what is due.
  const payload = Buffer.alloc(160, 0xff);
  const started = performance.now();
  let tick = 0;
  let rtpTimer: NodeJS.Timeout | undefined;
  const pump = (): void => {
    const now = performance.now();
    while (started + tick * 20 <= now) {
      for (const c of calls) {
        if (!c.answered || c.ended || !c.media) continue;
        const packet = Buffer.alloc(12 + 160);
        packet[0] = 0x80;
        packet[1] = 0;
        packet.writeUInt16BE(c.seqOut = (c.seqOut + 1) & 0xffff, 2);
        packet.writeUInt32BE((tick * 160) >>> 0, 4);
        packet.writeUInt32BE(c.ssrc, 8);
        payload.copy(packet, 12);
        c.rtp.send(packet, c.media.port, c.media.address);
        c.packetsOut++;
      }
      tick++;
    }
    rtpTimer = setTimeout(pump, Math.max(1, started + tick * 20 - performance.now()));
  };
  pump();
  await send({ up: calls.filter((c) => c.answered).length });

  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  clearTimeout(rtpTimer);
  for (const c of calls) if (c.answered && !c.ended) c.ended = true;
  for (let tries = 0; tries < 6 && calls.some((c) => c.answered && !c.endedByPlatform && !c.byeAnswered); tries++) {
    for (const c of calls) if (c.answered && !c.endedByPlatform && !c.byeAnswered) bye(c);
    await new Promise((r) => setTimeout(r, 500));
  }
  stopWatch();
  const report: CallersReport = {
    calls: calls.map((c) => ({ callId: c.callId, answered: c.answered, packetsIn: c.packetsIn, packetsOut: c.packetsOut, lost: c.lost, maxGapMs: Math.round(c.maxGap), gaps: c.gaps, endedByPlatform: c.endedByPlatform })),
    stalls,
  };
  await send({ report });
  sip.close();
  for (const c of calls) c.rtp.close();
}

async function probe(gateway: { address: string; port: number }, local: string, everyMs: number): Promise<void> {
  const socket = createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, local, r));
  const port = socket.address().port;
  const pending = new Map<string, [number, number]>();
  const answered: Array<[number, number]> = [];
  let sent = 0;
  socket.on('message', (buf) => {
    const text = buf.toString('latin1');
    const callId = /\r\nCall-ID:\s*([^\r]+)/i.exec(text)?.[1];
    const at = callId === undefined ? undefined : pending.get(callId);
    if (at === undefined || !text.startsWith('SIP/2.0 200 ')) return;
    pending.delete(callId as string);
    answered.push([at[0], performance.now() - at[1]]);
  });
  const timer = setInterval(() => {
    const callId = `probe-${++sent}-${process.pid}`;
    pending.set(callId, [Date.now(), performance.now()]);
    socket.send(crlf(
      `OPTIONS sip:ping@${gateway.address}:${gateway.port} SIP/2.0\nVia: SIP/2.0/UDP ${local}:${port};branch=z9hG4bK-${callId};rport\n` +
      `Max-Forwards: 70\nFrom: <sip:monitor@${local}>;tag=${sent}\nTo: <sip:ping@${gateway.address}>\nCall-ID: ${callId}\nCSeq: 1 OPTIONS\n` +
      `User-Agent: overload bench monitor\nContent-Length: 0\n\n`,
    ), gateway.port, gateway.address);
  }, everyMs);
  await send({ up: true });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  clearInterval(timer);
  // Whatever is still pending after 2 s is lost.
  await new Promise((r) => setTimeout(r, 2000));
  await send({ report: { sent, answered } satisfies ProbeReport });
  socket.close();
}

const [mode, address, port, local, a, b, c] = process.argv.slice(2);
const gateway = { address: address as string, port: Number(port) };
process.once('disconnect', () => process.exit(0));
if (mode === 'callers') void callers(gateway, local as string, a as string, Number(b), Number(c ?? 300)).then(() => process.exit(0));
else if (mode === 'probe') void probe(gateway, local as string, Number(a)).then(() => process.exit(0));
