import type { VariableValue } from '../../../platform/llm/agent-engine.js';

/**
 * Facts about the call a recipe can read: who called, which tenant, campaign variables from
 * SendMessage, and "now" in the tenant's timezone (what `{{current_time}}` means to the caller).
 */
export interface CallContext {
  readonly callId: string;
  readonly tenantId: string;
  readonly tenantName?: string;
  /** IANA zone such as `Asia/Kolkata`. */
  readonly timezone: string;
  readonly callerNumber?: string;
  readonly calledNumber?: string;
  readonly direction: 'inbound' | 'outbound' | 'simulation' | 'web';
  readonly language?: string;
  /** `Variables` of the campaign SendMessage request; they seed the recipe variables. */
  readonly campaignVariables: Readonly<Record<string, VariableValue>>;
  readonly now: () => number;
}

export interface LocalTime {
  readonly date: string;
  readonly time: string;
  readonly weekday: string;
}

/** Wall-clock date, HH:MM and weekday in `timezone`. */
export function localTime(ms: number, timezone: string): LocalTime {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    weekday: 'long',
  }).formatToParts(new Date(ms));
  const get = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? '';
  return { date: `${get('year')}-${get('month')}-${get('day')}`, time: `${get('hour')}:${get('minute')}`, weekday: get('weekday') };
}

/** Read-only variables every template can use besides the recipe's own. */
export function builtinVariables(context: CallContext): Record<string, VariableValue> {
  const local = localTime(context.now(), context.timezone);
  return {
    caller_number: context.callerNumber ?? '',
    called_number: context.calledNumber ?? '',
    tenant_id: context.tenantId,
    tenant_name: context.tenantName ?? '',
    timezone: context.timezone,
    current_date: local.date,
    current_time: local.time,
    current_day: local.weekday,
    call_id: context.callId,
  };
}
