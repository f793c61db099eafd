import { DateTime } from 'luxon';
import { AppError } from '../../../core/errors.js';
import { analysisStates, callOutcomes } from './call-types.js';
import { isUuid, type CallFilter } from './call-repository.js';
import { callSorts, sortOrders, type CallSort, type ListOrder, type SortOrder } from './call-list.js';

/**
 * Query parameters of the call list and the report: `from`/`to` (ISO 8601 instant with offset, or
 * a date `YYYY-MM-DD` read in the tenant's timezone; `from` inclusive, `to` exclusive for an
 * instant and through the end of that day for a date), `campaign`, `number`, `sipCallId`, and repeatable
 * `outcome`, `disposition`, `endReason`, `direction`, `analysis`.
 */
type QueryValue = string | string[] | undefined;

export const filterParameters = ['from', 'to', 'campaign', 'number', 'sipCallId', 'outcome', 'disposition', 'endReason', 'direction', 'analysis'] as const;

const bad = (name: string, message: string): AppError => new AppError('invalid_argument', `${name} ${message}`, { issues: [{ path: name, message }] });

function single(query: Readonly<Record<string, QueryValue>>, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) throw bad(name, 'may be given once');
  return v === '' ? undefined : v;
}

function many(query: Readonly<Record<string, QueryValue>>, name: string, allowed?: readonly string[]): string[] | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  const values = (Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean);
  if (allowed) {
    const wrong = values.find((x) => !allowed.includes(x));
    if (wrong !== undefined) throw bad(name, `must be one of ${allowed.join(', ')} (got "${wrong}")`);
  }
  return values.length > 0 ? values : undefined;
}

function instant(name: string, text: string, timezone: string, endOfDay: boolean): Date {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const day = DateTime.fromISO(text, { zone: timezone });
    if (!day.isValid) throw bad(name, 'must be a date YYYY-MM-DD or an ISO 8601 date-time with offset');
    return (endOfDay ? day.plus({ days: 1 }) : day).startOf('day').toJSDate();
  }
  const at = DateTime.fromISO(text, { setZone: true });
  if (!at.isValid) throw bad(name, 'must be a date YYYY-MM-DD or an ISO 8601 date-time with offset');
  if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(text)) throw bad(name, 'must carry a UTC offset (e.g. 2026-03-01T00:00:00Z) or be a date YYYY-MM-DD');
  return at.toJSDate();
}

/** Builds the filter; `allowedExtra` names the other parameters the route accepts (limit, cursor, ...). */
export function parseCallFilter(query: Readonly<Record<string, QueryValue>>, timezone: string, allowedExtra: readonly string[]): CallFilter {
  for (const name of Object.keys(query)) {
    if (!(filterParameters as readonly string[]).includes(name) && !allowedExtra.includes(name)) {
      throw new AppError('invalid_argument', `unknown query parameter "${name}" (allowed: ${[...filterParameters, ...allowedExtra].join(', ')})`, {
        issues: [{ path: name, message: 'unknown query parameter' }],
      });
    }
  }
  const fromText = single(query, 'from');
  const toText = single(query, 'to');
  const from = fromText ? instant('from', fromText, timezone, false) : undefined;
  const to = toText ? instant('to', toText, timezone, true) : undefined;
  if (from && to && from.getTime() >= to.getTime()) throw bad('to', 'must be after from');
  const campaign = single(query, 'campaign');
  if (campaign !== undefined && !isUuid(campaign)) throw bad('campaign', 'must be a campaign id (UUID)');
  const number = single(query, 'number');
  const sipCallId = single(query, 'sipCallId');
  const outcome = many(query, 'outcome', callOutcomes);
  const disposition = many(query, 'disposition');
  const endReason = many(query, 'endReason');
  const direction = many(query, 'direction', ['inbound', 'outbound', 'simulation', 'web']);
  const analysis = many(query, 'analysis', analysisStates);
  return {
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(campaign ? { campaignId: campaign } : {}),
    // Numbers are stored E.164 with '+'; accept the SendMessage form (digits only) too.
    ...(number ? { number: /^\d+$/.test(number) ? `+${number}` : number.replace(/^ /, '+') } : {}),
    ...(sipCallId ? { sipCallId } : {}),
    ...(outcome ? { outcome } : {}),
    ...(disposition ? { disposition } : {}),
    ...(endReason ? { endReason } : {}),
    ...(direction ? { direction } : {}),
    ...(analysis ? { analysisStatus: analysis } : {}),
  };
}

/** `sort` (startedAt, duration; default startedAt) and `order` (desc, asc; default desc: newest first). */
export function parseListOrder(query: Readonly<Record<string, QueryValue>>): ListOrder {
  const sort = single(query, 'sort') ?? 'startedAt';
  if (!(callSorts as readonly string[]).includes(sort)) throw bad('sort', `must be one of ${callSorts.join(', ')} (got "${sort}")`);
  const order = single(query, 'order') ?? 'desc';
  if (!(sortOrders as readonly string[]).includes(order)) throw bad('order', `must be one of ${sortOrders.join(', ')} (got "${order}")`);
  return { sort: sort as CallSort, order: order as SortOrder };
}

/** `true`/`false`/absent for a boolean report option. */
export function flag(query: Readonly<Record<string, QueryValue>>, name: string): boolean {
  const v = single(query, name);
  if (v === undefined) return false;
  if (v !== 'true' && v !== 'false') throw bad(name, 'must be true or false');
  return v === 'true';
}
