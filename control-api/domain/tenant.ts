import { z } from 'zod';
import { httpUrl, ianaTimezone, requiredText } from './common.js';
import { maskedSecret } from './secret.js';

/**
 * A tenant is one dashboard: its client ID is the subdomain of `{base_url}` (spec: Address
 * placeholders), so it must be a valid DNS label (RFC 1035 sec. 2.3.1, lower case).
 */
export const clientIdPattern = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export const clientIdSchema = z
  .string({ error: 'clientId must be a string' })
  .regex(clientIdPattern, { error: 'clientId must be a DNS label: 1 to 63 lower-case letters, digits or inner hyphens' });

/** Hosts (or CIDRs) that API and Webhook blocks may reach even though they resolve to private addresses. */
const allowlistEntry = z
  .string()
  .regex(/^[A-Za-z0-9.:*-]+(\/\d{1,3})?$/, { error: 'ssrfAllowlist entries must be a host name, IP address or CIDR' })
  .max(253);

export const tenantSettingsSchema = z.object({
  /** Receives `analysis_success` and other tenant-level events. */
  webhookUrl: httpUrl('settings.webhookUrl').optional(),
  /** Write-only: signs outgoing webhooks; masked on read. */
  webhookSecret: z
    .string({ error: 'settings.webhookSecret must be a string' })
    .max(256, { error: 'settings.webhookSecret must be at most 256 characters' })
    .refine((v) => v === maskedSecret || v.length >= 16, { error: 'settings.webhookSecret must be at least 16 characters' })
    .optional(),
  ssrfAllowlist: z.array(allowlistEntry).max(100, { error: 'settings.ssrfAllowlist must have at most 100 entries' }).default([]),
});
export type TenantSettings = z.infer<typeof tenantSettingsSchema>;

export const tenantSchema = z.object({
  clientId: clientIdSchema,
  name: requiredText('name', 200),
  /** Dashboard timezone: reads `ScheduledAt.Time` without an offset (spec: SendMessage rule 2). */
  timezone: ianaTimezone('timezone').default('UTC'),
  settings: tenantSettingsSchema.default({ ssrfAllowlist: [] }),
});
export type TenantSpec = z.infer<typeof tenantSchema>;
export type TenantInput = z.input<typeof tenantSchema>;

/** Update body: the client ID is the tenant's address and never changes. */
export const tenantUpdateSchema = tenantSchema.omit({ clientId: true });
export type TenantUpdate = z.infer<typeof tenantUpdateSchema>;
