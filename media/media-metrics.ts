import { histogram, sampledCounter, sampledGauge, type Sample } from '../core/metrics.js';
import type { MediaSession } from './media-session.js';

/**
 * RTP figures aggregated over the process, never per call (a label per call would grow without
 * end). Nothing runs per packet: the sessions already count what they send and receive and keep
 * the RFC 3550 jitter estimate; the totals are read at scrape time from the open sessions plus
 * what closed sessions left behind.
 */
const open = new Set<MediaSession>();
const closed = { received: 0, sent: 0, lost: 0, late: 0 };

const sessionJitter = histogram(
  'rtp_session_jitter_seconds',
  'RFC 3550 interarrival jitter estimate of each RTP session that received audio, when it closed',
  [],
  [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32],
);

export function trackSession(session: MediaSession): void {
  open.add(session);
}

export function sessionClosed(session: MediaSession): void {
  if (!open.delete(session)) return;
  closed.received += session.stats.packetsReceived;
  closed.sent += session.stats.packetsSent;
  closed.lost += session.jitterStats.missing;
  closed.late += session.jitterStats.late;
  if (session.stats.packetsReceived > 0) sessionJitter.observe(session.receiveDelay.jitterMs / 1000);
}

const total = (base: number, of: (s: MediaSession) => number): Sample[] => {
  let n = base;
  for (const s of open) n += of(s);
  return [[{}, n]];
};

sampledCounter('rtp_packets_received_total', 'RTP packets received from callers (all sessions of this process)', [], () => total(closed.received, (s) => s.stats.packetsReceived));
sampledCounter('rtp_packets_sent_total', 'RTP packets sent to callers (all sessions of this process)', [], () => total(closed.sent, (s) => s.stats.packetsSent));
sampledCounter(
  'rtp_packets_lost_total',
  'RTP packets never received by the time their audio was due (RFC 3550 sec. 6.4.1 loss, counted at playout): concealed with silence',
  [],
  () => total(closed.lost, (s) => s.jitterStats.missing),
);
sampledCounter('rtp_packets_late_total', 'RTP packets that arrived after their audio was played, and were dropped', [], () => total(closed.late, (s) => s.jitterStats.late));

sampledGauge('rtp_jitter_seconds', 'RFC 3550 interarrival jitter estimate (sec. 6.4.1, A.8), mean over the open sessions that receive audio', [], () => {
  let sum = 0;
  let n = 0;
  for (const s of open) {
    if (s.stats.packetsReceived === 0) continue;
    sum += s.receiveDelay.jitterMs;
    n += 1;
  }
  return [[{}, n === 0 ? 0 : sum / n / 1000]];
});
