import { z } from 'zod';

/**
 * Secrets (provider tokens, SIP passwords, API keys) are write-only. Reads return this mask;
 * a write that sends the mask back, or leaves the field out, keeps the stored value, so a
 * document read from the API can be applied again without knowing its secrets.
 */
export const maskedSecret = '********';

export const secret = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .min(1, { error: `${field} must not be empty` })
    .max(4_096, { error: `${field} must be at most 4096 characters` })
    .optional();

export const isMasked = (value: unknown): boolean => value === undefined || value === maskedSecret;
