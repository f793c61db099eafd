import type { IMessageType } from '@protobuf-ts/runtime';
import { AppError } from '../../../core/errors.js';
import { Campaign, SendMessageRequest, SendMessageResponse } from './proto/campaign.js';

/**
 * The two Twirp v7 encodings of the campaign service, both from `proto/campaign.proto` through
 * the code protobuf-ts generated from it (control-api/features/campaigns/proto, `npm run proto`):
 *
 * - `application/protobuf`: the binary encoding, decoded and encoded by the generated types.
 * - `application/json`: the proto3 JSON mapping. Its json_names are the spec's field names, so a
 *   request is brought to those names first and then validated field by field as before
 *   (send-message-request.ts), each error naming the spec's field.
 */
export type TwirpEncoding = 'json' | 'protobuf';

/** The Twirp path prefix the spec's path implies (`/api/v1/Campaign/SendMessage`). */
export const twirpPrefix = '/api/v1';

/**
 * Routes of the service: `<prefix>/<package>.<Service>/<Method>` (Twirp v7 "Routing"); the proto
 * declares no package, so this is `/api/v1/Campaign/SendMessage`.
 */
export const twirpRoutes: ReadonlyMap<string, string> = new Map(Campaign.methods.map((m) => [`${twirpPrefix}/${Campaign.typeName}/${m.name}`, m.name]));

/** The encoding a request's Content-Type asks for (parameters such as charset ignored), if any. */
export function twirpEncoding(contentType: string | undefined): TwirpEncoding | undefined {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') return 'json';
  if (type === 'application/protobuf') return 'protobuf';
  return undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** google.protobuf.Struct and the other well-known types have their own JSON form: user data, never renamed. */
const hasOwnJsonForm = (type: IMessageType<object>): boolean => type.typeName.startsWith('google.protobuf.');

type Field = IMessageType<object>['fields'][number];
const aliasMaps = new WeakMap<IMessageType<object>, ReadonlyMap<string, Field>>();

/** Every accepted name of a message's fields (json_name, proto name, lowerCamel), built once per type. */
function aliasesOf(type: IMessageType<object>): ReadonlyMap<string, Field> {
  let map = aliasMaps.get(type);
  if (!map) {
    map = new Map(type.fields.flatMap((f) => [[f.localName, f], [f.name, f], [f.jsonName, f]] as Array<[string, Field]>));
    aliasMaps.set(type, map);
  }
  return map;
}

/**
 * A proto3 JSON object with every field under its json_name (the spec's name). Proto3 JSON
 * parsers accept a field by its json_name or its original name; this also accepts the
 * lowerCamelCase form (protobuf-ts's local name, what `json_name` would default to), which
 * hand-written proto3 clients commonly send. Keys the message does not declare are ignored, as
 * before; a field given under two names is refused (as proto3 JSON parsers do), since either
 * choice would silently drop one value.
 */
export function withSpecNames(value: unknown, type: IMessageType<object> = SendMessageRequest, at = ''): unknown {
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  const seen = new Map<string, string>();
  for (const [key, child] of Object.entries(value)) {
    const field = aliasesOf(type).get(key);
    // Keys the message does not declare are ignored (dropped here, so not even a `__proto__` key
    // reaches the validated object).
    if (!field) continue;
    const path = `${at}${field.jsonName}`;
    const earlier = seen.get(field.jsonName);
    if (earlier !== undefined) {
      const message = `${path} is given twice (as ${earlier} and ${key}); send it once`;
      throw new AppError('invalid_argument', message, { meta: { argument: path }, issues: [{ path, message }] });
    }
    seen.set(field.jsonName, key);
    const nested = field.kind === 'message' ? field.T() : undefined;
    out[field.jsonName] = nested && !hasOwnJsonForm(nested) ? withSpecNames(child, nested, `${path}.`) : child;
  }
  return out;
}

/**
 * A binary SendMessageRequest as its proto3 JSON object under the spec's names, for the same
 * validation as a JSON request. Unset fields are absent, as in a JSON request that leaves them out.
 */
export function decodeProtobufRequest(body: Buffer): unknown {
  try {
    const message = SendMessageRequest.fromBinary(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
    return SendMessageRequest.toJson(message);
  } catch (error) {
    // Truncated or invalid wire data, a wire type that does not match the field, text that is not
    // UTF-8 (decoded with a fatal TextDecoder), or a Struct value JSON cannot hold (NaN, Infinity).
    throw new AppError('malformed', `the protobuf request could not be decoded: ${(error as Error).message}`, { cause: error });
  }
}

/** The SendMessage answer in the request's encoding; JSON stays exactly `{"message_id":"..."}`. */
export function encodeResponse(messageId: string, encoding: TwirpEncoding): { readonly type: string; readonly body: Buffer | { message_id: string } } {
  if (encoding === 'json') return { type: 'application/json', body: { message_id: messageId } };
  return { type: 'application/protobuf', body: Buffer.from(SendMessageResponse.toBinary({ messageId })) };
}
