import type Koa from 'koa';
import getRawBody from 'raw-body';
import { AppError } from '../../../core/errors.js';
import { HttpError } from './error-response.js';
import { assertAcceptableJson } from './acceptable-json.js';

export type BodyFormat = 'json' | 'yaml';

const mediaTypes: Readonly<Record<BodyFormat, readonly string[]>> = {
  json: ['application/json'],
  yaml: ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'],
};

export interface ReadBodyOptions {
  readonly limitBytes: number;
  /** Formats this endpoint accepts; the first is what the 415 message suggests. */
  readonly accept?: readonly BodyFormat[];
}

export interface RawBody {
  readonly format: BodyFormat;
  readonly text: string;
}

function formatOf(contentType: string, accept: readonly BodyFormat[]): BodyFormat | undefined {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  for (const format of accept) {
    if (mediaTypes[format].includes(type)) return format;
    if (format === 'json' && type.endsWith('+json')) return format;
  }
  return undefined;
}

/**
 * Reads a request body as UTF-8 text under a hard size limit (raw-body stops reading at the limit,
 * so an oversized upload costs no more than `limitBytes` of memory). 413 when larger, 415 when the
 * content type is not one the endpoint accepts.
 */
export async function readRawBody(ctx: Koa.Context, options: ReadBodyOptions): Promise<RawBody> {
  const accept = options.accept ?? ['json'];
  const format = formatOf(ctx.get('Content-Type'), accept);
  if (!format) {
    const wanted = accept.flatMap((f) => mediaTypes[f]).join(', ');
    throw new HttpError(415, 'invalid_argument', `unsupported content type "${ctx.get('Content-Type') || '(none)'}": send ${wanted}`);
  }
  // JSON is UTF-8 (RFC 8259 sec. 8.1) and so is YAML as we read it: a declared other charset, or a
  // compressed body, would otherwise be decoded as UTF-8 and fail later as a confusing parse error.
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(ctx.get('Content-Type'))?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpError(415, 'invalid_argument', `unsupported charset "${charset}": send the body as UTF-8`);
  }
  const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') {
    throw new HttpError(415, 'invalid_argument', `unsupported Content-Encoding "${encoding}": send the body uncompressed`);
  }
  const declared = Number(ctx.get('Content-Length') || Number.NaN);
  if (Number.isFinite(declared) && declared > options.limitBytes) {
    throw new HttpError(413, 'resource_exhausted', `request body of ${declared} bytes exceeds the limit of ${options.limitBytes} bytes`);
  }
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: options.limitBytes, encoding: 'utf8' });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') {
      throw new HttpError(413, 'resource_exhausted', `request body exceeds the limit of ${options.limitBytes} bytes`);
    }
    if (type === 'request.aborted') throw new AppError('canceled', 'client aborted the request');
    throw new AppError('malformed', `could not read the request body: ${(error as Error).message}`);
  }
  return { format, text };
}

/**
 * Reads and parses a JSON body; malformed JSON is a 400 `malformed`, never a 500, and a string
 * PostgreSQL cannot store (U+0000, a lone surrogate) is a 400 naming its field.
 */
export async function readJsonBody(ctx: Koa.Context, limitBytes: number): Promise<unknown> {
  const { text } = await readRawBody(ctx, { limitBytes, accept: ['json'] });
  const body = parseJson(text);
  assertAcceptableJson(body);
  return body;
}

/** Parses JSON text only; callers that split a body into documents check each one themselves. */
export function parseJson(text: string): unknown {
  if (text.trim() === '') throw new AppError('malformed', 'request body is empty: send a JSON document');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new AppError('malformed', `request body is not valid JSON: ${(error as Error).message}`);
  }
}
