import { histogram, sampledCounter, sampledGauge, type Sample } from '../../core/metrics.js';
import type { CallRegistry } from './call-registry.js';

/** What a running gateway shows of itself at scrape time. */
export interface GatewayView {
  readonly registry: CallRegistry;
  readonly draining: boolean;
  /** Datagrams waiting to be parsed, by receive lane (receive-lanes.ts). */
  readonly receiveQueue?: () => { readonly priority: number; readonly calls: number };
  /** The admission's event-loop delay, ms (loop-lag.ts), when it watches one. */
  readonly loopLagMs?: () => number;
  /** Kernel drops on the SIP UDP sockets (udp-drops.ts), where the system tells. */
  readonly udpDrops?: () => number | undefined;
}

/** The gateways of this process (one in production; several in some tests). */
const gateways = new Set<GatewayView>();

export function watchGateway(view: GatewayView): () => void {
  gateways.add(view);
  return () => gateways.delete(view);
}

/** Trunk label of a call that came from, or left through, no trunk (trusted source, native route). */
const NO_TRUNK = 'none';

// Read from the registries at scrape time: nothing is counted on the call path. Tenant and trunk
// ids are bounded by configuration, so the series stay few.
sampledGauge('calls_active', 'Answered calls up in this process, by direction, tenant and trunk (trunk "none": a trusted source or the native route)', ['direction', 'tenant', 'trunk'], () => {
  const samples: Sample[] = [];
  for (const g of gateways) {
    for (const call of g.registry.all()) {
      samples.push([{ direction: g.registry.directionOf(call), tenant: call.info.tenantId, trunk: call.info.trunkId ?? NO_TRUNK }, 1]);
    }
  }
  return samples;
});

sampledGauge('gateway_live_calls', 'Calls up or being set up in this gateway (a drain waits for them to reach 0)', [], () => {
  let n = 0;
  for (const g of gateways) n += g.registry.inProgress;
  return [[{}, n]];
});

sampledGauge('gateway_draining', '1 while the gateway drains: new INVITEs and OPTIONS are answered 503, live calls go on', [], () => {
  let draining = 0;
  for (const g of gateways) if (g.draining) draining = 1;
  return [[{}, draining]];
});

sampledGauge('sip_receive_queue_messages', 'SIP datagrams admitted and waiting to be parsed, by receive lane (priority: responses, ACK, in-dialog, OPTIONS; calls: new INVITEs and CANCEL)', ['lane'], () => {
  let priority = 0;
  let calls = 0;
  for (const g of gateways) {
    const q = g.receiveQueue?.();
    priority += q?.priority ?? 0;
    calls += q?.calls ?? 0;
  }
  return [[{ lane: 'priority' }, priority], [{ lane: 'calls' }, calls]];
});

sampledGauge('gateway_event_loop_lag_seconds', 'Mean event-loop delay over the last second that admission by capacity judges new calls by (sip.admission.maxEventLoopLagMs)', [], () => {
  const samples: Sample[] = [];
  for (const g of gateways) if (g.loopLagMs) samples.push([{}, g.loopLagMs() / 1000]);
  return samples.slice(0, 1);
});

sampledCounter('sip_udp_receive_drops_total', 'Datagrams the kernel dropped on the SIP UDP sockets because their receive buffer was full (/proc/net/udp; Linux)', [], () => {
  let total: number | undefined;
  for (const g of gateways) {
    const n = g.udpDrops?.();
    if (n !== undefined) total = (total ?? 0) + n;
  }
  return total === undefined ? [] : [[{}, total]];
});

const answerLatency = histogram(
  'sip_invite_answer_seconds',
  'INVITE to 200 OK. Inbound: from the INVITE reaching the gateway to our 200 (routing lookups, media, ring time). Outbound: from our first INVITE to the callee\'s 200 (post-dial delay and ringing)',
  ['direction'],
  [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60],
);
// Bound once; observed once per answered call, never per message.
const inboundAnswer = answerLatency.labels('inbound');
const outboundAnswer = answerLatency.labels('outbound');

export function observeAnswer(direction: 'inbound' | 'outbound', ms: number): void {
  (direction === 'inbound' ? inboundAnswer : outboundAnswer).observe(Math.max(0, ms) / 1000);
}
