import type { Kysely } from 'kysely';
import type { Clock } from '../../../core/clock.js';
import type { WebCallAuthority, WebCallDecision } from '../../../core/ports/web-call.js';
import { findNumberByE164, findRecipeById } from '../../model/resources/definitions/lookups.js';
import type { Database } from '../../platform/store/schema.js';
import { verifyCallToken } from '../../platform/crypto/call-token.js';

/** Settings a web call to a recipe takes when no number lends its own (the phone-number defaults). */
export const recipeCallDefaults = { language: 'en-US', maxCallDurationMinutes: 10, endCallOnSilenceMinutes: 2 } as const;

/**
 * The gateway's WebCallAuthority: verifies the browser's call token (signature, expiry, single
 * use), that the Request-URI names the target the token was issued for, and that the target still
 * exists in the token's tenant. A recipe called directly runs with `recipeCallDefaults` (and the
 * language the token carries).
 */
export class StoreWebCallAuthority implements WebCallAuthority {
  /** Token ids already used, until they expire: a token starts one call. */
  private readonly used = new Map<string, number>();

  constructor(private readonly o: { readonly db: Kysely<Database>; readonly key: Buffer; readonly clock: Clock }) {}

  async authorize(token: string, target: string): Promise<WebCallDecision> {
    const now = this.o.clock.now();
    const check = verifyCallToken(this.o.key, token, now);
    if (!check.ok) return { ok: false, reason: 'invalid', detail: `token ${check.why}` };
    const { claims } = check;
    for (const [id, expiresAt] of this.used) if (expiresAt <= now) this.used.delete(id);
    if (this.used.has(claims.id)) return { ok: false, reason: 'invalid', detail: 'token already used' };
    let decision: WebCallDecision;
    if (claims.target.kind === 'recipe') {
      if (target !== `recipe-${claims.target.recipeId}`) return { ok: false, reason: 'invalid', detail: 'the token was issued for another target' };
      const recipe = await findRecipeById(this.o.db, claims.tenantId, claims.target.recipeId);
      if (!recipe) return { ok: false, reason: 'gone', detail: 'recipe deleted' };
      decision = { ok: true, route: { tenantId: claims.tenantId, recipeId: claims.target.recipeId, numberId: null, e164: null, enabled: true, ...recipeCallDefaults, ...(claims.language ? { language: claims.language } : {}) } };
    } else {
      const number = await findNumberByE164(this.o.db, target, claims.tenantId);
      if (!number || number.id !== claims.target.numberId) {
        return number ? { ok: false, reason: 'invalid', detail: 'the token was issued for another target' } : { ok: false, reason: 'gone', detail: 'number deleted' };
      }
      decision = {
        ok: true,
        route: {
          tenantId: number.tenantId,
          recipeId: number.recipeId,
          numberId: number.id,
          e164: number.e164,
          enabled: number.enabled,
          language: number.spec.language,
          maxCallDurationMinutes: number.spec.maxCallDurationMinutes,
          endCallOnSilenceMinutes: number.spec.endCallOnSilenceMinutes,
        },
      };
    }
    this.used.set(claims.id, claims.expiresAt);
    return decision;
  }
}
