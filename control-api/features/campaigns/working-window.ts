import { DateTime } from 'luxon';
import { minutesOfDay, weekdays, type BusinessHoursSpec } from '../../model/domain/business-hours.js';

/**
 * When a campaign may ring (spec: Working window; the time outside it is the DND period).
 * Windows are local wall-clock ranges in an IANA timezone, so the open intervals are rebuilt per
 * local day with luxon: a 09:00-18:00 window is 9 hours on a normal day and still 09:00-18:00 on
 * the days DST starts or ends. A wall-clock start that does not exist (skipped by a spring-forward
 * gap) moves to the first instant after the gap, which is what luxon does on normalisation.
 */
export type CallingWindow =
  | { readonly kind: 'always' }
  /** Daily HH:MM range; an end before the start crosses midnight (22:00-06:00). */
  | { readonly kind: 'custom'; readonly start: string; readonly end: string; readonly timezone: string }
  | { readonly kind: 'businessHours'; readonly profile: BusinessHoursSpec; readonly timezone: string };

interface Interval {
  readonly start: number;
  readonly end: number;
}

// A business-hours profile may be closed on many dates; a year and a bit always finds the next
// opening of a profile that opens at all.
const searchDays = 400;

function atLocal(day: DateTime, hhmm: string): DateTime {
  const minutes = minutesOfDay(hhmm);
  return day.set({ hour: Math.floor(minutes / 60), minute: minutes % 60, second: 0, millisecond: 0 });
}

/** Open intervals that start on the local calendar day `day` (start of day in the window's zone). */
function intervalsOn(window: Exclude<CallingWindow, { kind: 'always' }>, day: DateTime): Interval[] {
  if (window.kind === 'custom') {
    const start = atLocal(day, window.start);
    const crossesMidnight = minutesOfDay(window.end) <= minutesOfDay(window.start);
    const end = atLocal(crossesMidnight ? day.plus({ days: 1 }) : day, window.end);
    return [{ start: start.toMillis(), end: end.toMillis() }];
  }
  const { profile } = window;
  if (profile.closedDates.includes(day.toISODate() ?? '')) return [];
  const weekday = weekdays[day.weekday - 1];
  return profile.hours
    .filter((h) => h.day === weekday)
    .map((h) => ({ start: atLocal(day, h.start).toMillis(), end: atLocal(day, h.end).toMillis() }))
    .sort((a, b) => a.start - b.start);
}

/** True when a call may ring at `at` (epoch ms). */
export function isOpen(window: CallingWindow, at: number): boolean {
  return nextOpening(window, at) === at;
}

/**
 * The first instant at or after `at` when the window is open: `at` itself when open now,
 * undefined when it never opens within the search horizon.
 */
export function nextOpening(window: CallingWindow, at: number): number | undefined {
  if (window.kind === 'always') return at;
  // Start a day early: an overnight window that opened yesterday may still be open.
  let day = DateTime.fromMillis(at, { zone: window.timezone }).startOf('day').minus({ days: 1 });
  for (let i = 0; i < searchDays; i++, day = day.plus({ days: 1 }).startOf('day')) {
    for (const interval of intervalsOn(window, day)) {
      if (interval.end > at && interval.end > interval.start) return Math.max(interval.start, at);
    }
  }
  return undefined;
}
