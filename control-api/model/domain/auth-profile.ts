import { z } from 'zod';
import { resourceName } from './common.js';
import { secret } from '../../platform/crypto/secret.js';

/** Authentication profiles the API block selects by name (spec: API block). */
export const authSchemes = ['basic', 'bearer', 'apiKey'] as const;

export const authProfileSchema = z.object({
  name: resourceName('name'),
  auth: z.discriminatedUnion(
    'scheme',
    [
      z.object({
        scheme: z.literal('basic'),
        // RFC 7617 sec. 2: the user-id cannot contain a colon.
        username: z.string().min(1, { error: 'auth.username is required' }).max(200).refine((u) => !u.includes(':'), {
          error: "auth.username must not contain ':'",
        }),
        password: secret('auth.password'),
      }),
      z.object({ scheme: z.literal('bearer'), token: secret('auth.token') }),
      z.object({
        scheme: z.literal('apiKey'),
        in: z.enum(['header', 'query'], { error: "auth.in must be 'header' or 'query'" }).default('header'),
        name: z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, { error: 'auth.name must be a header or query parameter name' }),
        value: secret('auth.value'),
      }),
    ],
    { error: `auth.scheme must be one of ${authSchemes.join(', ')}` },
  ),
});
export type AuthProfileSpec = z.infer<typeof authProfileSchema>;

export const authProfileSecretPaths = ['auth.password', 'auth.token', 'auth.value'] as const;
