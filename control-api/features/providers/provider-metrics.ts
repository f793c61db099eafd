import { counter, sampledGauge, type Sample } from '../../../core/metrics.js';
import type { CloudProviderType } from './provider-numbers.js';

/** Label of a request that no provider's prefix matched. */
const NONE = 'none';

const webhooks = counter(
  'provider_webhooks_total',
  'HTTP requests to the provider listener (call webhooks, status callbacks, instruction fetches), by provider and response status',
  ['provider', 'status'],
);
const streams = counter(
  'provider_media_streams_total',
  'WebSocket media stream upgrades on the provider listener, by provider and outcome (accepted: handed to the provider; refused: no such endpoint)',
  ['provider', 'outcome'],
);

export function countWebhook(provider: CloudProviderType | undefined, status: number): void {
  webhooks.labels(provider ?? NONE, String(status)).inc();
}

export function countMediaStream(provider: CloudProviderType | undefined, outcome: 'accepted' | 'refused'): void {
  streams.labels(provider ?? NONE, outcome).inc();
}

/** What the provider listener shows at scrape time: its live calls by provider and direction. */
export interface ProviderCallsView {
  live(): ReadonlyArray<{ readonly provider: CloudProviderType; readonly direction: 'inbound' | 'outbound' }>;
}

const views = new Set<ProviderCallsView>();

export function watchProviderCalls(view: ProviderCallsView): () => void {
  views.add(view);
  return () => views.delete(view);
}

sampledGauge('provider_calls_active', 'Calls up on cloud telephony providers (their media stream connected), by provider and direction', ['provider', 'direction'], () => {
  const samples: Sample[] = [];
  for (const v of views) for (const c of v.live()) samples.push([{ provider: c.provider, direction: c.direction }, 1]);
  return samples;
});
