import { z } from 'zod';
import { boundedInt, clockTime, e164, ianaTimezone, resourceName } from './common.js';

/** Outreach campaign (spec: "Campaign configuration" table and Limits). Natural key: name. */

export const startModes = ['immediately', 'waitForGreeting', 'waitSeconds'] as const;
export const dndBehaviours = ['reschedule', 'discard'] as const;
export const retryScenarios = ['busy', 'noAnswer', 'failed'] as const;
export type RetryScenario = (typeof retryScenarios)[number];

export const startLogicSchema = z.discriminatedUnion(
  'mode',
  [
    z.object({ mode: z.literal('immediately') }),
    /** Voice activity detection: speak once the callee has said hello. */
    z.object({ mode: z.literal('waitForGreeting') }),
    z.object({ mode: z.literal('waitSeconds'), seconds: boundedInt('startLogic.seconds', 1, 5, 'seconds') }),
  ],
  { error: `startLogic.mode must be one of ${startModes.join(', ')}` },
);

export const workingWindowModes = ['custom', 'businessHours'] as const;

/**
 * The dashboard's toggle plus its mode. Settings of the unused mode may stay filled in (the
 * dashboard keeps them when the toggle is flipped); only the active mode's fields are required.
 */
export const workingWindowSchema = z
  .object({
    enabled: z.boolean({ error: 'workingWindow.enabled must be true or false' }).default(false),
    mode: z.enum(workingWindowModes, { error: "workingWindow.mode must be 'custom' or 'businessHours'" }).default('custom'),
    /** Custom mode. An end before the start is an overnight window (22:00 to 06:00). */
    start: clockTime('workingWindow.start').optional(),
    end: clockTime('workingWindow.end').optional(),
    /** Custom mode; absent: the tenant's dashboard timezone. */
    timezone: ianaTimezone('workingWindow.timezone').optional(),
    /** Business-hours mode: a BusinessHoursProfile name. */
    profile: resourceName('workingWindow.profile').optional(),
  })
  .superRefine((w, ctx) => {
    if (!w.enabled) return;
    if (w.mode === 'custom') {
      if (!w.start) ctx.addIssue({ code: 'custom', path: ['start'], message: 'workingWindow.start is required for a custom working window' });
      if (!w.end) ctx.addIssue({ code: 'custom', path: ['end'], message: 'workingWindow.end is required for a custom working window' });
      if (w.start && w.start === w.end) ctx.addIssue({ code: 'custom', path: ['end'], message: 'workingWindow.end must differ from workingWindow.start' });
    } else if (!w.profile) {
      ctx.addIssue({ code: 'custom', path: ['profile'], message: 'workingWindow.profile (a business-hours profile name) is required in businessHours mode' });
    }
  });
export type WorkingWindow = z.infer<typeof workingWindowSchema>;

export const campaignSchema = z
  .object({
    name: resourceName('name'),
    channel: z.literal('voice', { error: "channel must be 'voice'" }).default('voice'),
    /** Voice Integration: a connected PhoneNumber (E.164) calls go out from. */
    phoneNumber: e164('phoneNumber'),
    trigger: z.literal('api', { error: "trigger must be 'api' (Via API)" }).default('api'),
    recipe: resourceName('recipe'),
    startLogic: startLogicSchema.default({ mode: 'immediately' }),
    workingWindow: workingWindowSchema.default({ enabled: false, mode: 'custom' }),
    dndBehaviour: z.enum(dndBehaviours, { error: "dndBehaviour must be 'reschedule' or 'discard'" }).default('reschedule'),
    ringDurationSeconds: boundedInt('ringDurationSeconds', 15, 30, 'seconds').default(30),
    maxRetries: boundedInt('maxRetries', 0, 10).default(0),
    /** Gap between attempts; a day at most, so a retry stays relevant to the trigger. */
    retryIntervalMinutes: boundedInt('retryIntervalMinutes', 1, 1_440, 'minutes').default(30),
    retryScenarios: z
      .array(z.enum(retryScenarios, { error: `retryScenarios entries must be one of ${retryScenarios.join(', ')}` }))
      .refine((s) => new Set(s).size === s.length, { error: 'retryScenarios lists a scenario twice' })
      .default(['busy', 'noAnswer', 'failed']),
    /** Calls of this campaign ringing or connected at once; more wait in the queue (scheduler). Absent: no limit. */
    maxConcurrentCalls: boundedInt('maxConcurrentCalls', 1, 10_000).optional(),
    /** Calls at once from the campaign's number, across every campaign using it. Absent: no limit. */
    maxConcurrentCallsPerNumber: boundedInt('maxConcurrentCallsPerNumber', 1, 10_000).optional(),
    /** Published campaigns accept SendMessage requests. */
    published: z.boolean({ error: 'published must be true or false' }).default(false),
  })
  .superRefine((c, ctx) => {
    if (c.maxRetries > 0 && c.retryScenarios.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['retryScenarios'], message: 'retryScenarios needs at least one scenario when maxRetries is above 0' });
    }
  });
export type CampaignSpec = z.infer<typeof campaignSchema>;
export type CampaignInput = z.input<typeof campaignSchema>;
