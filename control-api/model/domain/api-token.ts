import { z } from 'zod';
import { requiredText } from './common.js';

/** What a token may be used for. */
export const tokenScopes = ['campaign', 'sandbox', 'management'] as const;
export type TokenScope = (typeof tokenScopes)[number];

/** Body of a token issue request. The secret itself is generated, returned once, stored hashed. */
export const apiTokenRequestSchema = z.strictObject({
  name: requiredText('name', 100),
  scopes: z
    .array(z.enum(tokenScopes, { error: `scope must be one of ${tokenScopes.join(', ')}` }))
    .min(1, { error: 'scopes must name at least one scope' }),
  /** Absent: never expires (revocation still applies). Must lie in the future. */
  expiresAt: z.iso
    .datetime({ offset: true, error: 'expiresAt must be an ISO 8601 date-time with Z or an offset' })
    .refine((v) => Date.parse(v) > Date.now(), { error: 'expiresAt must be in the future' })
    .optional(),
});
export type ApiTokenRequest = z.infer<typeof apiTokenRequestSchema>;
