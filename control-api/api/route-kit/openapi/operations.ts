import type { JsonSchema } from './json-schema.js';

/** Small builders for OpenAPI 3.1 operation objects, so every path reads the same way. */

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

export const jsonContent = (schema: JsonSchema): JsonSchema => ({ 'application/json': { schema } });

export const errorResponses = (...statuses: number[]): Record<string, JsonSchema> => {
  const descriptions: Record<number, string> = {
    400: 'Invalid argument or malformed body (`issues` names every offending field)',
    401: 'Missing or invalid credential',
    403: 'The credential may not perform this action',
    404: 'Not found, or not reachable with this credential',
    405: 'Method not allowed on this path',
    409: 'A resource with the same natural key already exists',
    412: 'Refused: the change conflicts with resources that use this one (the message names them)',
    413: 'Request body too large',
    415: 'Unsupported content type',
  };
  const out: Record<string, JsonSchema> = {};
  for (const status of statuses) {
    out[String(status)] = { description: descriptions[status] ?? 'Error', content: jsonContent(ref('Error')) };
  }
  return out;
};

export const pathParam = (name: string, description: string): JsonSchema => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
});

export const pageParams: readonly JsonSchema[] = [
  { name: 'limit', in: 'query', required: false, description: 'Page size, 1 to 200 (default 50)', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
  { name: 'cursor', in: 'query', required: false, description: '`nextCursor` of the previous page', schema: { type: 'string' } },
];

export interface OperationInput {
  readonly operationId: string;
  readonly summary: string;
  /** Longer text (CommonMark) beside the one-line summary. */
  readonly description?: string;
  readonly tag: string;
  readonly parameters?: readonly JsonSchema[];
  readonly requestBody?: JsonSchema;
  readonly responses: Record<string, JsonSchema>;
}

export const operation = (input: OperationInput): JsonSchema => ({
  operationId: input.operationId,
  summary: input.summary,
  ...(input.description ? { description: input.description } : {}),
  tags: [input.tag],
  ...(input.parameters && input.parameters.length > 0 ? { parameters: input.parameters } : {}),
  ...(input.requestBody ? { requestBody: input.requestBody } : {}),
  responses: input.responses,
});

export const jsonBody = (schema: JsonSchema, description?: string): JsonSchema => ({
  required: true,
  ...(description ? { description } : {}),
  content: jsonContent(schema),
});

export const ok = (description: string, schema: JsonSchema): JsonSchema => ({ description, content: jsonContent(schema) });

export const noContent = (description: string): JsonSchema => ({ description });

/** `{items, nextCursor?}`: one page of a cursor-paginated list. */
export const pageOf = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['items'],
  properties: { items: { type: 'array', items: item }, nextCursor: { type: 'string', description: 'absent on the last page' } },
  additionalProperties: false,
});

/**
 * A JSON Merge Patch body (RFC 7396) typed by `schema` (a `<Kind>Patch` component, see
 * merge-patch-schema.ts); sent as `application/merge-patch+json` or plain `application/json`.
 */
export const mergePatchBody = (schema: JsonSchema): JsonSchema => ({
  required: true,
  content: { 'application/merge-patch+json': { schema }, 'application/json': { schema } },
});

/** Tags the small routes add operations under, with the description used when no kind declared it first. */
export const sharedTags = {
  tenant: ['Tenant', 'Tenants (clients) of the platform.'],
  sipTrunk: ['SipTrunk', 'Custom SIP trunks and what the customer configures on their side for them.'],
} as const satisfies Record<string, readonly [string, string]>;
