import { z } from 'zod';
import { httpUrl, ianaTimezone, requiredText } from './common.js';
import { maskedSecret, secret } from '../../platform/crypto/secret.js';
import { strictDeep } from './strict.js';
import { tenantSpeechSchema } from './tenant-speech.js';

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

/**
 * The tenant's language model for recipes (Smart AI, AnswerFlow) and post-call analysis. Absent or
 * `offline`: the built-in offline engine. The base URL is set by the operator or tenant admin, not
 * by callers, so it is not SSRF-filtered like API blocks; it must still be http(s) without
 * credentials (the key goes in `apiKey`, a write-only secret sealed at rest).
 */
export const llmProviders = ['offline', 'openaiCompatible'] as const;

export const tenantLlmSchema = z
  .object({
    provider: z.enum(llmProviders, { error: `settings.llm.provider must be one of ${llmProviders.join(', ')}` }),
    baseUrl: httpUrl('settings.llm.baseUrl')
      .refine((v) => !/^[a-z]+:\/\/[^/]*@/i.test(v), { error: 'settings.llm.baseUrl must not carry credentials; use settings.llm.apiKey' })
      .optional(),
    model: z.string({ error: 'settings.llm.model must be a string' }).min(1).max(200, { error: 'settings.llm.model must be at most 200 characters' }).optional(),
    /** Write-only: sent as `Authorization: Bearer`; masked on read. */
    apiKey: secret('settings.llm.apiKey'),
    timeoutMs: z.number().int().min(1_000, { error: 'settings.llm.timeoutMs must be 1000 to 120000' }).max(120_000, { error: 'settings.llm.timeoutMs must be 1000 to 120000' }).default(30_000),
    maxRetries: z.number().int().min(0, { error: 'settings.llm.maxRetries must be 0 to 5' }).max(5, { error: 'settings.llm.maxRetries must be 0 to 5' }).default(2),
  })
  .strict()
  .superRefine((llm, ctx) => {
    if (llm.provider !== 'openaiCompatible') return;
    if (llm.baseUrl === undefined) ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: 'settings.llm.baseUrl is required for openaiCompatible' });
    if (llm.model === undefined) ctx.addIssue({ code: 'custom', path: ['model'], message: 'settings.llm.model is required for openaiCompatible' });
  });
export type TenantLlm = z.infer<typeof tenantLlmSchema>;

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
  llm: tenantLlmSchema.optional(),
  /** Cloud speech for phone calls (control-api/model/domain/tenant-speech.ts); absent: offline speech. */
  speech: tenantSpeechSchema.optional(),
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

/** What clients send (API, apply): the same schemas, refusing unknown fields at every level. */
export const tenantRequestSchema = strictDeep(tenantSchema);
export const tenantUpdateRequestSchema = strictDeep(tenantUpdateSchema);
