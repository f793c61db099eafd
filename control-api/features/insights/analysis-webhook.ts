import type { CallRecord, InsightValues } from '../calls/call-types.js';
import type { OutboundHttp } from '../../platform/net/outbound-http.js';
import { signatureHeader, signatureHeaderValue } from '../../platform/webhooks/signing.js';
import { insightText } from './insight-values.js';

/**
 * The `analysis_success` event (spec: Events 1): `trigger_type`, `channel: "voice"` and
 * `room.analysis.user_defined` with one string per insight parameter, plus the identifiers a
 * receiver correlates on. Built only from stored data, so every retry sends the same bytes.
 */
export interface AnalysisSuccessPayload {
  readonly trigger_type: 'analysis_success';
  readonly channel: 'voice';
  /** Stable per call: receivers dedupe retries on it. */
  readonly event_id: string;
  readonly call_id: string;
  readonly message_id: string | null;
  readonly campaign_id: string | null;
  /** The other party: the campaign contact (`To.PhoneNumber`) or the inbound caller. */
  readonly phone_number: string | null;
  /** The platform's number the call ran on. */
  readonly agent_phone_number: string | null;
  readonly direction: CallRecord['direction'];
  readonly call: {
    readonly started_at: string;
    readonly ended_at: string | null;
    readonly duration_seconds: number;
    readonly outcome: string | null;
    readonly disposition: string | null;
  };
  readonly room: {
    readonly id: string;
    readonly analysis: {
      readonly status: 'completed';
      readonly completed_at: string | null;
      readonly user_defined: Readonly<Record<string, string>>;
    };
  };
}

export function analysisSuccessPayload(eventId: string, call: CallRecord, parameterNames: readonly string[]): AnalysisSuccessPayload {
  const values: InsightValues = call.analysis.values ?? {};
  return {
    trigger_type: 'analysis_success',
    channel: 'voice',
    event_id: eventId,
    call_id: call.id,
    message_id: call.messageId,
    campaign_id: call.campaignId,
    phone_number: call.remoteNumber,
    agent_phone_number: call.phoneNumber,
    direction: call.direction,
    call: {
      started_at: call.startedAt.toISOString(),
      ended_at: call.endedAt?.toISOString() ?? null,
      duration_seconds: Math.round((call.durationMs ?? 0) / 1000),
      outcome: call.outcome,
      disposition: call.disposition,
    },
    room: {
      id: call.id,
      analysis: {
        status: 'completed',
        completed_at: call.analysis.completedAt?.toISOString() ?? null,
        user_defined: Object.fromEntries(parameterNames.map((name) => [name, insightText(values[name])])),
      },
    },
  };
}

export type DeliveryResult =
  | { readonly ok: true; readonly status: number }
  | { readonly ok: false; readonly permanent: boolean; readonly status?: number; readonly error: string };

/**
 * One POST through the SSRF-safe client, signed with the tenant's secret (`X-VAP-Signature`,
 * control-api/platform/webhooks/signing.ts) when it has one, as campaign callbacks are. 2xx is delivered;
 * 4xx other than 408/429 means the receiver rejects the body, so retrying cannot help.
 */
export async function deliverWebhook(
  http: OutboundHttp,
  target: { tenantId: string; url: string; secret?: string },
  payload: unknown,
  options: { nowMs: number; timeoutMs: number; signal: AbortSignal },
): Promise<DeliveryResult> {
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'voice-agent-platform-webhooks',
    'x-vap-event': 'analysis_success',
  };
  if (target.secret) headers[signatureHeader.toLowerCase()] = signatureHeaderValue(target.secret, body, options.nowMs);
  try {
    const response = await http.request(target.tenantId, { method: 'POST', url: target.url, headers, body, timeoutMs: options.timeoutMs, signal: options.signal });
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    const permanent = response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429;
    return { ok: false, permanent, status: response.status, error: `receiver answered HTTP ${response.status}` };
  } catch (thrown) {
    const error = thrown as { message?: string; code?: string };
    // A refused address (SSRF policy) or a malformed URL will not change by retrying.
    const permanent = error.code === 'permission_denied' || error.code === 'invalid_argument';
    return { ok: false, permanent, error: (error.message ?? String(thrown)).slice(0, 500) };
  }
}
