import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { systemClock, type Clock } from '../../../core/clock.js';
import { SipParseError } from '../message/errors.js';
import { formatAuthValue, parseAuthValue, type AuthValue } from './auth-params.js';
import {
  digestEquals,
  digestResponse,
  ha1Of,
  hashOf,
  normalizeAlgorithm,
  type DigestAlgorithm,
  type DigestHashName,
} from './digest.js';

/**
 * Server side of SIP digest authentication (RFC 3261 sec. 22, RFC 7616, RFC 8760).
 *
 * Nonces are stateless: a timestamp and random bytes, signed with HMAC-SHA-256 under a server
 * secret, so any gateway instance sharing the secret can check them and expiry needs no table
 * (an expired but authentic nonce gives `stale=true`, RFC 7616 sec. 3.3). Replays are caught by
 * remembering the highest nonce-count seen per nonce (RFC 7616 sec. 3.4.5) in a bounded map.
 */
export interface DigestServerOptions {
  readonly realm: string;
  /** HMAC key for nonces; at least 16 random bytes, shared by every instance of the realm. */
  readonly secret: Buffer;
  readonly clock?: Clock;
  /** How long a nonce is good for; afterwards the client is asked again with stale=true. */
  readonly nonceTtlMs?: number;
  /** Offered in this order; RFC 8760 sec. 2.4: the preferred (strongest) first. */
  readonly algorithms?: readonly DigestAlgorithm[];
  readonly maxTrackedNonces?: number;
  /** Require the digest uri to equal the Request-URI (RFC 7616 sec. 3.4.6). */
  readonly checkUri?: boolean;
}

/** A credential record: the password, or for storage at rest the HA1 per hash (RFC 7616 3.4.2). */
export interface DigestSecret {
  readonly password?: string;
  readonly ha1?: Partial<Record<DigestHashName, string>>;
}

export type DigestFailure =
  | 'missing'
  | 'unsupported-scheme'
  | 'malformed'
  | 'wrong-realm'
  | 'unsupported-algorithm'
  | 'bad-nonce'
  | 'stale'
  | 'uri-mismatch'
  | 'unknown-user'
  | 'bad-response'
  | 'replay';

export type DigestOutcome =
  | { readonly ok: true; readonly username: string; readonly algorithm: DigestAlgorithm }
  | { readonly ok: false; readonly reason: DigestFailure; readonly username?: string };

export interface DigestRequest {
  readonly method: string;
  readonly uri: string;
  /** Every Authorization (or Proxy-Authorization) value of the request. */
  readonly credentials: readonly string[];
  readonly body?: Buffer;
}

const TOKEN_PARAMS = new Set(['algorithm', 'qop', 'nc', 'stale']);
const NONCE_PAYLOAD = 8 + 12;
const NONCE_MAC = 16;

export class DigestServer {
  private readonly clock: Clock;
  private readonly ttl: number;
  private readonly algorithms: readonly DigestAlgorithm[];
  private readonly maxTracked: number;
  private readonly seen = new Map<string, { nc: number; at: number }>();

  constructor(private readonly options: DigestServerOptions) {
    if (options.secret.length < 16) throw new RangeError('digest nonce secret must be at least 16 bytes');
    this.clock = options.clock ?? systemClock;
    this.ttl = options.nonceTtlMs ?? 5 * 60_000;
    this.algorithms = options.algorithms ?? ['SHA-256', 'MD5'];
    this.maxTracked = options.maxTrackedNonces ?? 50_000;
  }

  get realm(): string {
    return this.options.realm;
  }

  /** One WWW-Authenticate / Proxy-Authenticate value per offered algorithm (RFC 8760 sec. 2.4). */
  challenge(options: { stale?: boolean } = {}): string[] {
    const nonce = this.newNonce();
    return this.algorithms.map((algorithm) => {
      const params: [string, string][] = [
        ['realm', this.options.realm],
        ['nonce', nonce],
        ['algorithm', algorithm],
        ['qop', 'auth'],
      ];
      if (options.stale) params.push(['stale', 'true']);
      return formatAuthValue('Digest', params, TOKEN_PARAMS);
    });
  }

  async verify(req: DigestRequest, lookup: (username: string) => Promise<DigestSecret | undefined> | DigestSecret | undefined): Promise<DigestOutcome> {
    const mine = this.pickCredentials(req.credentials);
    if (typeof mine === 'string') return { ok: false, reason: mine };
    const p = mine.params;
    const username = p.get('username');
    const nonce = p.get('nonce');
    const uri = p.get('uri');
    const response = p.get('response');
    const qop = p.get('qop');
    const nc = p.get('nc');
    const cnonce = p.get('cnonce');
    if (!username || !nonce || !uri || !response) return { ok: false, reason: 'malformed', username };
    // We always offer qop=auth, so RFC 7616 sec. 3.4 requires qop, nc and cnonce back.
    if ((qop !== 'auth' && qop !== 'auth-int') || !cnonce || !nc || !/^[0-9a-fA-F]{8}$/.test(nc)) {
      return { ok: false, reason: 'malformed', username };
    }
    const algorithm = normalizeAlgorithm(p.get('algorithm'));
    if (!algorithm || !this.algorithms.includes(algorithm)) return { ok: false, reason: 'unsupported-algorithm', username };
    const issued = this.nonceTime(nonce);
    if (issued === undefined) return { ok: false, reason: 'bad-nonce', username };
    if ((this.options.checkUri ?? true) && uri !== req.uri) return { ok: false, reason: 'uri-mismatch', username };
    const secret = await lookup(username);
    const hash = hashOf(algorithm);
    const ha1 = secret?.ha1?.[hash] ?? (secret?.password !== undefined ? ha1Of(hash, username, this.options.realm, secret.password) : undefined);
    if (ha1 === undefined) return { ok: false, reason: 'unknown-user', username };
    const expected = digestResponse({ algorithm, ha1, method: req.method, uri, nonce, qop, nc, cnonce, body: req.body });
    if (!digestEquals(expected, response)) return { ok: false, reason: 'bad-response', username };
    // Only a correct response may learn that the nonce is old: stale=true tells the client its
    // password was right and it may retry silently (RFC 7616 sec. 3.3).
    const now = this.clock.now();
    if (now - issued > this.ttl) return { ok: false, reason: 'stale', username };
    const count = parseInt(nc, 16);
    const last = this.seen.get(nonce);
    if (last && count <= last.nc) return { ok: false, reason: 'replay', username };
    this.remember(nonce, count, issued);
    return { ok: true, username, algorithm };
  }

  private pickCredentials(values: readonly string[]): AuthValue | DigestFailure {
    if (values.length === 0) return 'missing';
    let sawDigest = false;
    for (const value of values) {
      let parsed: AuthValue;
      try {
        parsed = parseAuthValue(value);
      } catch (e) {
        if (e instanceof SipParseError) continue;
        throw e;
      }
      if (parsed.scheme.toLowerCase() !== 'digest') continue;
      sawDigest = true;
      // RFC 3261 sec. 22.3: credentials for other realms (other proxies) are not ours.
      if (parsed.params.get('realm') === this.options.realm) return parsed;
    }
    return sawDigest ? 'wrong-realm' : 'unsupported-scheme';
  }

  private newNonce(): string {
    const payload = Buffer.alloc(NONCE_PAYLOAD);
    payload.writeBigUInt64BE(BigInt(Math.max(0, Math.floor(this.clock.now()))), 0);
    randomBytes(12).copy(payload, 8);
    return Buffer.concat([payload, this.mac(payload)]).toString('base64url');
  }

  /** Issue time of an authentic nonce, or undefined for forged or garbled ones. */
  private nonceTime(nonce: string): number | undefined {
    const raw = Buffer.from(nonce, 'base64url');
    if (raw.length !== NONCE_PAYLOAD + NONCE_MAC || raw.toString('base64url') !== nonce) return undefined;
    const payload = raw.subarray(0, NONCE_PAYLOAD);
    if (!timingSafeEqual(raw.subarray(NONCE_PAYLOAD), this.mac(payload))) return undefined;
    const issued = Number(payload.readBigUInt64BE(0));
    // A nonce from the future was not made by this clock.
    return issued > this.clock.now() + 60_000 ? undefined : issued;
  }

  private mac(payload: Buffer): Buffer {
    return createHmac('sha256', this.options.secret).update(payload).update(this.options.realm).digest().subarray(0, NONCE_MAC);
  }

  private remember(nonce: string, nc: number, issued: number): void {
    this.seen.delete(nonce);
    this.seen.set(nonce, { nc, at: issued });
    if (this.seen.size <= this.maxTracked) return;
    // Oldest first: expired nonces are useless anyway; beyond the bound, the least recently
    // used go (documented limit: a nonce dropped here could be replayed until it expires).
    const cutoff = this.clock.now() - this.ttl;
    for (const [key, entry] of this.seen) {
      if (this.seen.size <= this.maxTracked && entry.at >= cutoff) break;
      this.seen.delete(key);
    }
  }
}
