import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import getRawBody from 'raw-body';
import { AppError } from '../../../core/errors.js';
import { HttpError } from '../../platform/http/error-response.js';

/** Webhook bodies are a few hundred bytes of form fields; anything near this is not a provider. */
export const webhookBodyLimitBytes = 64 * 1024;

export type FormPairs = [string, string][];

/**
 * Reads an `application/x-www-form-urlencoded` webhook body (every provider here posts its call
 * events that way) as ordered name/value pairs: signature schemes need every field, repeated
 * names included. 415 for another content type, 413 over the limit.
 */
export async function readForm(ctx: Koa.Context): Promise<FormPairs> {
  const type = ctx.get('Content-Type').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new HttpError(415, 'invalid_argument', `unsupported content type "${ctx.get('Content-Type') || '(none)'}": provider webhooks post application/x-www-form-urlencoded`);
  }
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: webhookBodyLimitBytes, encoding: 'utf8' });
  } catch (error) {
    if ((error as { type?: string }).type === 'entity.too.large') throw new HttpError(413, 'resource_exhausted', `webhook body exceeds ${webhookBodyLimitBytes} bytes`);
    throw new AppError('malformed', `could not read the webhook body: ${(error as Error).message}`);
  }
  return [...new URLSearchParams(text)];
}

/** The first value of a form field. */
export const field = (form: FormPairs, name: string): string | undefined => form.find(([k]) => k === name)?.[1];

/** The fields a webhook cannot do without: 400 naming every missing one. */
export function requireFields<K extends string>(form: FormPairs, names: readonly K[]): Record<K, string> {
  const missing = names.filter((n) => !field(form, n));
  if (missing.length > 0) throw new AppError('invalid_argument', `webhook is missing ${missing.join(', ')}`, { issues: missing.map((path) => ({ path, message: `${path} is required` })) });
  return Object.fromEntries(names.map((n) => [n, field(form, n) as string])) as Record<K, string>;
}

/** An XML call-instructions answer. */
export function xml(ctx: Koa.Context, body: string): void {
  ctx.status = 200;
  ctx.type = 'application/xml';
  ctx.body = body;
}

/**
 * Where providers reach us: `publicBaseUrl` as the provider sees it (it signs requests with the
 * exact URL it called, so this must match what is configured at the provider, scheme, host and
 * port included). Media streams use the same host over ws:// / wss://.
 */
export class PublicUrls {
  private base = '';

  /** Set once the listener is up (the default base needs its bound port). */
  set(publicBaseUrl: string): void {
    this.base = publicBaseUrl.replace(/\/+$/, '');
  }

  get http(): string {
    return this.base;
  }

  get ws(): string {
    return this.base.replace(/^http/, 'ws');
  }

  /** The URL the provider requested, for signature checks: our public base plus the path and query it asked for. */
  requested(originalUrl: string): string {
    return `${this.base}${originalUrl}`;
  }
}

/** A refused WebSocket upgrade: a plain HTTP answer on the raw socket, then close. */
export function refuseUpgrade(socket: Duplex, status: 400 | 403 | 404 | 503, message: string): void {
  const text = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 503: 'Service Unavailable' }[status];
  const body = JSON.stringify({ code: status === 403 ? 'permission_denied' : status === 404 ? 'not_found' : status === 503 ? 'unavailable' : 'invalid_argument', message });
  socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

