import type { Schema } from './schema-sample.js';

/** Which server and error format an operation belongs to. */
export type FuzzApi = 'control' | 'sandbox' | 'twirp';

export interface FuzzParameter {
  readonly name: string;
  readonly in: 'path' | 'query';
  readonly required: boolean;
  readonly schema: Schema;
}

export interface FuzzOperation {
  /** `METHOD /template`, e.g. `POST /v1/tenants/{clientId}/recipes`. */
  readonly id: string;
  readonly api: FuzzApi;
  readonly method: string;
  readonly template: string;
  readonly parameters: readonly FuzzParameter[];
  readonly body?: { readonly contentTypes: readonly string[]; readonly schema: Schema };
  /** Whether the document says a token is needed (`security: []` = none). */
  readonly secured: boolean;
}

interface OpenApiOperation {
  readonly parameters?: ReadonlyArray<{ name: string; in: string; required?: boolean; schema?: Schema }>;
  readonly requestBody?: { content?: Readonly<Record<string, { schema?: Schema }>> };
  readonly security?: readonly unknown[];
}

const methods = ['get', 'put', 'post', 'patch', 'delete'] as const;

/** Every operation of an OpenAPI 3.1 document. */
export function operationsOf(document: { paths: Readonly<Record<string, Readonly<Record<string, unknown>>>> }, api: FuzzApi): FuzzOperation[] {
  const out: FuzzOperation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const method of methods) {
      const op = item[method] as OpenApiOperation | undefined;
      if (!op) continue;
      const parameters = (op.parameters ?? [])
        .filter((p) => p.in === 'path' || p.in === 'query')
        .map((p) => ({ name: p.name, in: p.in as 'path' | 'query', required: p.required === true, schema: p.schema ?? { type: 'string' } }));
      const content = op.requestBody?.content;
      const body = content ? { contentTypes: Object.keys(content), schema: Object.values(content)[0]?.schema ?? {} } : undefined;
      out.push({
        id: `${method.toUpperCase()} ${template}`,
        api,
        method: method.toUpperCase(),
        template,
        parameters,
        ...(body ? { body } : {}),
        secured: !(Array.isArray(op.security) && op.security.length === 0),
      });
    }
  }
  return out;
}

/**
 * Campaign SendMessage is a Twirp method, not in an OpenAPI document: its body as docs/api.md
 * describes it (spec: Campaign SendMessage). Sent as `application/protobuf` too, the JSON text is
 * arbitrary bytes to the protobuf decoder.
 */
export const sendMessageOperation: FuzzOperation = {
  id: 'POST /api/v1/Campaign/SendMessage',
  api: 'twirp',
  method: 'POST',
  template: '/api/v1/Campaign/SendMessage',
  parameters: [],
  secured: true,
  body: {
    contentTypes: ['application/json', 'application/protobuf'],
    schema: {
      type: 'object',
      required: ['CampaignID', 'To', 'ScheduledAt'],
      properties: {
        CampaignID: { type: 'string', format: 'uuid' },
        To: { type: 'object', required: ['PhoneNumber'], properties: { PhoneNumber: { type: 'string', pattern: '^91[6-9][0-9]{9}$' } } },
        Variables: { type: 'object', propertyNames: { type: 'string', pattern: '^[a-z_][a-z0-9_]{0,10}$' }, additionalProperties: { type: 'string' } },
        Callback: {
          type: 'object',
          required: ['URL'],
          properties: { URL: { type: 'string', format: 'uri' }, State: { type: 'object', additionalProperties: { type: 'string' } } },
        },
        ScheduledAt: { type: 'object', required: ['Time'], properties: { Time: { type: 'string', format: 'date-time' }, BypassCallingWindow: { type: 'boolean' } } },
      },
    },
  },
};
