import { randomBytes } from 'node:crypto';
import { SipParseError } from '../message/errors.js';
import type { SipRequest, SipResponse } from '../message/message.js';
import { formatAuthValue, parseAuthValue } from './auth-params.js';
import { digestResponse, ha1Of, hashOf, normalizeAlgorithm, type DigestAlgorithm } from './digest.js';

/**
 * Client side of digest authentication, for the outbound trunk credentials: answers a 401/407
 * (RFC 3261 sec. 22.2, 22.3) with Authorization or Proxy-Authorization, choosing SHA-256 when
 * the server offers it (RFC 8760 sec. 2.4) and counting nonce uses (RFC 7616 sec. 3.4).
 */
export interface DigestChallenge {
  readonly realm: string;
  readonly nonce: string;
  readonly algorithm: DigestAlgorithm;
  readonly qop: readonly string[];
  readonly opaque?: string;
  readonly stale: boolean;
}

/** Client preference: SHA-256 first (RFC 8760's SIP default), MD5 only when nothing else. */
const PREFERENCE: readonly DigestAlgorithm[] = ['SHA-256', 'SHA-256-sess', 'SHA-512-256', 'SHA-512-256-sess', 'MD5', 'MD5-sess'];
const TOKEN_PARAMS = new Set(['algorithm', 'qop', 'nc']);

/** A Digest challenge we can answer, or undefined (other schemes, unknown algorithms). */
export function parseChallenge(value: string): DigestChallenge | undefined {
  let parsed;
  try {
    parsed = parseAuthValue(value);
  } catch (e) {
    if (e instanceof SipParseError) return undefined;
    throw e;
  }
  if (parsed.scheme.toLowerCase() !== 'digest') return undefined;
  const p = parsed.params;
  const realm = p.get('realm');
  const nonce = p.get('nonce');
  const algorithm = normalizeAlgorithm(p.get('algorithm'));
  if (realm === undefined || !nonce || !algorithm) return undefined;
  const qop = (p.get('qop') ?? '').split(',').map((q) => q.trim().toLowerCase()).filter(Boolean);
  return { realm, nonce, algorithm, qop, opaque: p.get('opaque'), stale: p.get('stale')?.toLowerCase() === 'true' };
}

export function chooseChallenge(challenges: readonly DigestChallenge[]): DigestChallenge | undefined {
  let best: DigestChallenge | undefined;
  for (const c of challenges) {
    if (!best || PREFERENCE.indexOf(c.algorithm) < PREFERENCE.indexOf(best.algorithm)) best = c;
  }
  return best;
}

export interface ClientCredentials {
  readonly username: string;
  readonly password: string;
}

export interface AuthorizeInput {
  readonly method: string;
  readonly uri: string;
  readonly body?: Buffer;
  /** For tests and RFC vectors; random otherwise. */
  readonly cnonce?: string;
}

export class DigestClient {
  private readonly counts = new Map<string, number>();

  constructor(private readonly credentials: ClientCredentials) {}

  /** Credentials answering `challenge` for one request (RFC 7616 sec. 3.4). */
  authorize(challenge: DigestChallenge, input: AuthorizeInput): string {
    const qop = challenge.qop.includes('auth') ? 'auth' : challenge.qop.includes('auth-int') ? 'auth-int' : undefined;
    const nc = (this.counts.get(challenge.nonce) ?? 0) + 1;
    if (this.counts.size > 64) this.counts.clear();
    this.counts.set(challenge.nonce, nc);
    const ncText = nc.toString(16).padStart(8, '0');
    const cnonce = input.cnonce ?? randomBytes(16).toString('base64url');
    const { username, password } = this.credentials;
    const response = digestResponse({
      algorithm: challenge.algorithm,
      ha1: ha1Of(hashOf(challenge.algorithm), username, challenge.realm, password),
      method: input.method,
      uri: input.uri,
      nonce: challenge.nonce,
      qop,
      nc: ncText,
      cnonce,
      body: input.body,
    });
    const params: [string, string][] = [
      ['username', username],
      ['realm', challenge.realm],
      ['nonce', challenge.nonce],
      ['uri', input.uri],
      ['response', response],
      ['algorithm', challenge.algorithm],
    ];
    if (qop) params.push(['qop', qop], ['nc', ncText], ['cnonce', cnonce]);
    if (challenge.opaque !== undefined) params.push(['opaque', challenge.opaque]);
    return formatAuthValue('Digest', params, TOKEN_PARAMS);
  }

  /**
   * Header to add when re-sending `request` after `response` (401 or 407), or undefined when
   * the response offers nothing we can answer. One credential per challenged realm.
   */
  answer(request: SipRequest, response: SipResponse): { name: 'Authorization' | 'Proxy-Authorization'; values: string[] } | undefined {
    const proxy = response.status === 407;
    const header = proxy ? 'proxy-authenticate' : 'www-authenticate';
    const byRealm = new Map<string, DigestChallenge[]>();
    for (const value of response.headers.getAll(header)) {
      const c = parseChallenge(value);
      if (c) byRealm.set(c.realm, [...(byRealm.get(c.realm) ?? []), c]);
    }
    const values: string[] = [];
    for (const challenges of byRealm.values()) {
      const chosen = chooseChallenge(challenges);
      if (chosen) values.push(this.authorize(chosen, { method: request.method, uri: request.uri, body: request.body }));
    }
    return values.length ? { name: proxy ? 'Proxy-Authorization' : 'Authorization', values } : undefined;
  }
}
