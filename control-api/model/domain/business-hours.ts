import { z } from 'zod';
import { clockTime, ianaTimezone, resourceName } from './common.js';

/** Business-hours profile a campaign's working window can point at (spec: Working window). */
export const weekdays = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof weekdays)[number];

export const minutesOfDay = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

export const openingHoursSchema = z
  .object({
    day: z.enum(weekdays, { error: `day must be one of ${weekdays.join(', ')}` }),
    start: clockTime('start'),
    end: clockTime('end'),
  })
  .refine((h) => minutesOfDay(h.start) < minutesOfDay(h.end), { error: 'end must be later than start on the same day', path: ['end'] });

export const businessHoursSchema = z
  .object({
    name: resourceName('name'),
    /** Absent: the tenant's dashboard timezone. */
    timezone: ianaTimezone('timezone').optional(),
    hours: z.array(openingHoursSchema).min(1, { error: 'hours needs at least one opening period' }).max(50, { error: 'hours must have at most 50 periods' }),
    /** Closed all day (YYYY-MM-DD, in the profile's timezone). */
    closedDates: z
      .array(z.iso.date({ error: 'closedDates entries must be dates as YYYY-MM-DD' }))
      .max(366, { error: 'closedDates must have at most 366 entries' })
      .default([]),
  })
  .superRefine((profile, ctx) => {
    // Overlapping periods on one day are almost always a typing error.
    profile.hours.forEach((a, i) => {
      profile.hours.slice(0, i).forEach((b, j) => {
        if (a.day === b.day && minutesOfDay(a.start) < minutesOfDay(b.end) && minutesOfDay(b.start) < minutesOfDay(a.end)) {
          ctx.addIssue({ code: 'custom', path: ['hours', i], message: `hours ${i} overlaps hours ${j} on ${a.day}` });
        }
      });
    });
  });
export type BusinessHoursSpec = z.infer<typeof businessHoursSchema>;
