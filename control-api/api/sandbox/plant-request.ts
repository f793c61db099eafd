import type Koa from 'koa';
import { isLosslessNumber, parse as parseLosslessJson } from 'lossless-json';
import getRawBody from 'raw-body';
import { flawMessage, textFlaw } from '../../platform/http/acceptable-json.js';
import { INT32_MAX, readDecimalInt64, readInt64 } from './int64.js';
import { PlantApiError, badRequest } from './plant-errors.js';

/** Request bodies above this are refused with 413 (a NewPlant is a few hundred bytes). */
export const PLANT_BODY_LIMIT_BYTES = 64 * 1024;
/** Longest `name` and `tag`, in Unicode code points (what JSON Schema's maxLength counts). */
export const PLANT_TEXT_MAX = 200;

export interface NewPlant {
  readonly id: bigint;
  readonly name: string;
  readonly tag?: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a JSON request body: `Content-Type: application/json` (charset UTF-8 if given) and no
 * content coding, else 415 (RFC 9110 sec. 15.5.16); at most PLANT_BODY_LIMIT_BYTES, else 413;
 * valid UTF-8 and JSON (RFC 8259), else 400. Numbers come back as exact decimal tokens.
 */
export async function readJsonBody(ctx: Koa.Context): Promise<unknown> {
  const type = ctx.request.type;
  if (type !== 'application/json') {
    throw new PlantApiError(415, type ? `unsupported content type ${type}: send application/json` : 'missing Content-Type: send application/json');
  }
  const charset = ctx.request.charset.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') throw new PlantApiError(415, `unsupported charset ${charset}: send UTF-8`);
  const coding = ctx.get('Content-Encoding').trim().toLowerCase();
  if (coding && coding !== 'identity') throw new PlantApiError(415, `unsupported Content-Encoding ${coding}`);

  let raw: Buffer;
  try {
    raw = await getRawBody(ctx.req, { length: ctx.get('Content-Length') || undefined, limit: PLANT_BODY_LIMIT_BYTES });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') throw new PlantApiError(413, `request body exceeds ${PLANT_BODY_LIMIT_BYTES} bytes`);
    if (type === 'request.size.invalid') throw badRequest('request body length does not match Content-Length');
    if (type === 'request.aborted') throw badRequest('request body was cut short');
    throw error;
  }
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw badRequest('request body is not valid UTF-8');
  }
  if (text.trim() === '') throw badRequest('request body is empty: send a JSON object');
  try {
    return parseLosslessJson(text);
  } catch (error) {
    throw badRequest(`malformed JSON: ${(error as Error).message}`);
  }
}

function checkText(field: string, value: unknown): string {
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
  const length = [...value].length;
  if (field === 'name' && length === 0) throw badRequest('name must not be empty');
  if (length > PLANT_TEXT_MAX) throw badRequest(`${field} must be at most ${PLANT_TEXT_MAX} characters`);
  // PostgreSQL text cannot hold U+0000, and a lone surrogate cannot round-trip through UTF-8
  // (the same check as every other API's, control-api/platform/http/acceptable-json.ts).
  const flaw = textFlaw(value);
  if (flaw) throw badRequest(flawMessage(flaw, field));
  return value;
}

/** Validates a parsed body as the spec's NewPlant: `id` int64 and `name` required, `tag` optional. */
export function toNewPlant(body: unknown): NewPlant {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || isLosslessNumber(body)) {
    throw badRequest('request body must be a JSON object (NewPlant)');
  }
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => k !== 'id' && k !== 'name' && k !== 'tag');
  if (unknown.length > 0) throw badRequest(`unknown field ${unknown.map((k) => JSON.stringify(k)).join(', ')}: NewPlant has id, name and tag`);
  if (!('id' in fields)) throw badRequest('id is required');
  if (!('name' in fields)) throw badRequest('name is required');
  const id = fields['id'];
  if (!isLosslessNumber(id)) throw badRequest('id must be an integer (int64)');
  const reading = readInt64(id.value);
  if (reading.kind === 'not-integer') throw badRequest('id must be an integer (int64)');
  if (reading.kind === 'out-of-range') throw badRequest('id is outside the int64 range');
  const name = checkText('name', fields['name']);
  const tag = 'tag' in fields ? checkText('tag', fields['tag']) : undefined;
  return tag === undefined ? { id: reading.value, name } : { id: reading.value, name, tag };
}

/** The `{id}` path parameter of DELETE /plants/{id}: a decimal int64. */
export function toPlantId(text: string): bigint {
  const reading = readDecimalInt64(text);
  if (reading.kind === 'not-integer') throw badRequest(`plant id must be an integer (int64), got ${JSON.stringify(text.slice(0, 40))}`);
  if (reading.kind === 'out-of-range') throw badRequest('plant id is outside the int64 range');
  return reading.value;
}

/** The optional `limit` query parameter of GET /plants: an int32 of at least 1. */
export function toLimit(query: Koa.Context['query']): number | undefined {
  const raw = query['limit'];
  if (raw === undefined) return undefined;
  if (Array.isArray(raw)) throw badRequest('limit must be given at most once');
  if (!/^\d+$/.test(raw)) throw badRequest('limit must be an integer of at least 1');
  const value = raw.length > 10 ? Number.POSITIVE_INFINITY : Number(raw);
  if (value < 1) throw badRequest('limit must be an integer of at least 1');
  if (value > INT32_MAX) throw badRequest(`limit must be at most ${INT32_MAX} (int32)`);
  return value;
}
