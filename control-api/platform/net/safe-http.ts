import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { AppError } from '../../../core/errors.js';
import type { HttpRequest, HttpResponse, OutboundHttp } from './outbound-http.js';
import { refusal } from './address-policy.js';

/**
 * Outbound HTTP for API and Webhook blocks, safe against SSRF. The address check runs inside the
 * socket's DNS lookup, so the address vetted is the address connected to (no DNS-rebinding gap);
 * every redirect hop is checked again; responses are capped in size and time.
 */
export interface SafeHttpOptions {
  /** Hosts, addresses or CIDRs a tenant explicitly allows despite being private/loopback. */
  readonly allowlist: (tenantId: string) => readonly string[] | Promise<readonly string[]>;
  /** Default 1 MiB. */
  readonly maxResponseBytes?: number;
  /** Default 3; only for GET/HEAD (other methods return the 3xx as is). */
  readonly maxRedirects?: number;
  /** Resolver, replaceable in tests. Default: the system resolver. */
  readonly lookup?: (hostname: string) => Promise<readonly LookupAddress[]>;
}

const systemLookup = (hostname: string): Promise<readonly LookupAddress[]> =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

export class SafeHttp implements OutboundHttp {
  constructor(private readonly options: SafeHttpOptions) {}

  async request(tenantId: string, request: HttpRequest): Promise<HttpResponse> {
    const allowlist = await this.options.allowlist(tenantId);
    const deadline = AbortSignal.timeout(request.timeoutMs);
    const signal = AbortSignal.any([request.signal, deadline]);
    let url = parseUrl(request.url);
    let method = request.method.toUpperCase();
    for (let hop = 0; ; hop++) {
      const response = await this.once(url, method, request, allowlist, signal, deadline);
      const location = response.headers.location;
      const redirect = response.status >= 300 && response.status < 400 && location && (method === 'GET' || method === 'HEAD');
      if (!redirect || hop >= (this.options.maxRedirects ?? 3)) return response;
      url = parseUrl(new URL(location, url).toString());
      method = 'GET';
    }
  }

  private once(url: URL, method: string, request: HttpRequest, allowlist: readonly string[], signal: AbortSignal, deadline: AbortSignal): Promise<HttpResponse> {
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(hostname)) {
      const refused = refusal(allowlist, hostname, hostname);
      if (refused) return Promise.reject(new AppError('permission_denied', refused));
    }
    const resolver = this.options.lookup ?? systemLookup;
    const lookup: LookupFunction = (host, options, callback) => {
      resolver(host).then(
        (addresses) => {
          const first = addresses[0];
          if (!first) return callback(new Error(`no address for ${host}`), '', 4);
          // Every address must pass: a mixed answer is how rebinding attacks hide a private target.
          for (const entry of addresses) {
            const refused = refusal(allowlist, host, entry.address);
            if (refused) return callback(new AppError('permission_denied', refused), '', 4);
          }
          // Happy-eyeballs connects (autoSelectFamily) ask for every address at once.
          if (options.all) (callback as unknown as (e: null, a: readonly LookupAddress[]) => void)(null, addresses);
          else callback(null, first.address, first.family);
        },
        (error: Error) => callback(error, '', 4),
      );
    };
    const maxBytes = this.options.maxResponseBytes ?? 1024 * 1024;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<HttpResponse>((resolve, reject) => {
      const fail = (error: unknown): void => reject(classify(error, url, deadline, request.signal));
      const req = send(url, { method, headers: { ...request.headers }, lookup, signal }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            res.destroy();
            req.destroy();
            reject(new AppError('resource_exhausted', `response from ${url.host} exceeds ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', fail);
        res.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
          resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8') });
        });
      });
      req.on('error', fail);
      if (request.body !== undefined && method !== 'GET' && method !== 'HEAD') req.end(request.body);
      else req.end();
    });
  }
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('invalid_argument', `'${raw}' is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('invalid_argument', `only http and https URLs may be called (got ${url.protocol})`);
  }
  if (url.username || url.password) throw new AppError('invalid_argument', 'credentials in the URL are not allowed; use an auth profile');
  return url;
}

function classify(error: unknown, url: URL, deadline: AbortSignal, caller: AbortSignal): AppError {
  if (error instanceof AppError) return error;
  const cause = error instanceof Error && error.cause instanceof AppError ? error.cause : undefined;
  if (cause) return cause;
  if (caller.aborted) return new AppError('canceled', `request to ${url.host} cancelled`, { cause: error });
  if (deadline.aborted) return new AppError('deadline_exceeded', `request to ${url.host} timed out`, { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new AppError('unavailable', `request to ${url.host} failed: ${message}`, { cause: error });
}
