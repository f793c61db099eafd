import { applyReportSchema } from '../../apply/apply-documents.js';
import { apiTokenRequestSchema } from '../../../model/domain/api-token.js';
import { clientIdSchema, tenantRequestSchema, tenantSchema, tenantUpdateSchema } from '../../../model/domain/tenant.js';
import { strictDeep } from '../../../model/domain/strict.js';
import type { ResourceDefinition } from '../../../model/resources/resource-definition.js';
import { issuedTokenSchema, tokenSchema } from '../token-routes.js';
import { OpenApiBuilder, clientIdParam, type OpenApiContribution } from '../../route-kit/openapi/builder.js';
import { filterableFields, type JsonSchema } from '../../route-kit/openapi/json-schema.js';
import { mergePatchSchema } from '../../route-kit/openapi/merge-patch-schema.js';
import { errorResponses, jsonBody, mergePatchBody, noContent, ok, operation, pageOf, pageParams, pathParam, ref } from '../../route-kit/openapi/operations.js';

export const managementApiVersion = '1.0.0';

const errorSchema: JsonSchema = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', description: 'Twirp-style error code, e.g. invalid_argument, not_found, failed_precondition' },
    message: { type: 'string' },
    issues: {
      type: 'array',
      items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

const timestamp: JsonSchema = { type: 'string', format: 'date-time' };

/** `{id, kind, tenant?, spec, createdAt, updatedAt}`: how every stored resource comes back. */
const resourceEnvelope = (kind: string, specRef: JsonSchema, tenantScoped: boolean, hasBuiltIns = false): JsonSchema => ({
  type: 'object',
  required: ['id', 'kind', ...(tenantScoped ? ['tenant'] : []), 'spec', 'createdAt', 'updatedAt', ...(hasBuiltIns ? ['builtIn'] : [])],
  properties: {
    id: { type: 'string', format: 'uuid' },
    kind: { const: kind },
    ...(tenantScoped ? { tenant: { type: 'string', description: 'client ID of the owning tenant' } } : {}),
    spec: specRef,
    createdAt: timestamp,
    updatedAt: timestamp,
    ...(hasBuiltIns
      ? { builtIn: { type: 'boolean', description: 'true: provided by the platform to every tenant; only its favourite star can change (else 403 permission_denied)' } }
      : {}),
  },
  additionalProperties: false,
});

/** What each platform kind is, for its tag (docs/domain.md); other kinds get the generic sentence only. */
const kindDescriptions: Readonly<Record<string, string>> = {
  BusinessHours: 'Named working-hour profiles a campaign can use as its working window.',
  SipTrunk: 'Custom SIP trunks: inbound termination addresses and DIDs, outbound address and credentials. `sip-info` tells the customer where to send calls.',
  AuthProfile: 'Credentials (basic, bearer, API key) that API blocks of recipes select by name.',
  SpeechProfile: 'Voices: language, gender, provider and voice name; built-in profiles are shared by every tenant and only their favourite star changes.',
  PronunciationEntry: 'Custom pronunciations of words, per agent (at most 40).',
  KnowledgeDocument: 'Texts that SmartAI and AnswerFlow blocks answer from, found by tags.',
  Recipe: 'Conversations: a graph of blocks (Message, SmartAI, Ask, Condition, Code, API, Webhook, Transfer, Close) and global settings.',
  PhoneNumber: 'Numbers on a telephony provider or custom SIP trunk, each linked to one recipe; `enabled` switches a number on or off.',
  Campaign: 'Outreach campaigns: number, recipe, start logic, working window, DND behaviour, ring duration and retries. A published campaign\'s id is the `CampaignID` of SendMessage.',
};

/** The typed JSON Merge Patch body of `<name>` (merge-patch-schema.ts). */
function patchSchema(input: JsonSchema, name: string): JsonSchema {
  return {
    ...mergePatchSchema(input),
    description: `A JSON Merge Patch (RFC 7396) of ${name}: any of its fields; \`null\` removes an optional field (its default applies again); objects merge key by key, arrays are replaced whole. The merged result must be a valid ${name}.`,
  };
}

function addResourceKind(b: OpenApiBuilder, definition: ResourceDefinition): void {
  const { kind, plural } = definition;
  const input = b.addZod(`${kind}Spec`, definition.schema, 'input');
  const stored = b.addZod(`${kind}SpecStored`, definition.schema, 'output');
  b.schemas[`${kind}Patch`] = patchSchema(b.schemas[`${kind}Spec`]!, `${kind}Spec`);
  b.tag(kind, `${kindDescriptions[kind] ? `${kindDescriptions[kind]} ` : ''}Every ${kind} belongs to one tenant: \`/v1/tenants/{clientId}/${plural}\`.`);
  b.schemas[kind] = resourceEnvelope(kind, stored, true, definition.hasBuiltIns);
  // Built-ins refuse changes with 403; other kinds never answer it on these operations.
  const builtInRefusal = definition.hasBuiltIns ? [403] : [];
  b.schemas[`${kind}Page`] = pageOf(ref(kind));
  const collection = `/v1/tenants/{clientId}/${plural}`;
  const item = `${collection}/{id}`;
  const idParam = pathParam('id', `${kind} id`);
  const own = definition.listFilter?.parameters;
  const filters = own
    ? Object.entries(own).map(([name, p]) => {
        const scalar = { type: p.type === 'list' ? 'string' : p.type, ...(p.enum ? { enum: [...p.enum] } : {}) };
        return {
          name, in: 'query', required: false, description: p.description,
          schema: p.type === 'list' ? { type: 'array', items: scalar } : scalar,
          ...(p.type === 'list' ? { style: 'form', explode: true } : {}),
        };
      })
    : Object.entries(filterableFields(definition.schema)).map(([name, type]) => ({
        name,
        in: 'query',
        required: false,
        description: type === 'list' ? `only ${plural} whose ${name} contain this value (repeat for all of several)` : `only ${plural} whose ${name} equals this value (case-insensitive)`,
        schema: type === 'list' ? { type: 'array', items: { type: 'string' } } : { type: type === 'number' ? 'number' : type },
        ...(type === 'list' ? { style: 'form', explode: true } : {}),
      }));
  b.path(collection, 'get', operation({
    operationId: `list${kind}`, summary: `List ${plural} (paginated, filterable)`, tag: kind,
    description: `Ordered by natural key. \`limit\` and \`cursor\` page through the list; any other query parameter filters on a top-level field of the spec. An unknown parameter is a 400.`,
    parameters: [clientIdParam, ...pageParams, ...filters],
    responses: { '200': ok(`A page of ${plural}; a filtered page may be shorter than limit`, ref(`${kind}Page`)), ...errorResponses(400, 401, 404) },
  }));
  b.path(collection, 'post', operation({
    operationId: `create${kind}`, summary: `Create a ${kind}`, tag: kind, parameters: [clientIdParam], requestBody: jsonBody(input),
    description: 'The body is checked strictly: a field the schema does not declare, at any depth, is a 400 naming it. Answers 201 with `Location`.',
    responses: { '201': ok(`The created ${kind}`, ref(kind)), ...errorResponses(400, 401, 404, 409, 412, 413, 415) },
  }));
  b.path(item, 'get', operation({
    operationId: `get${kind}`, summary: `Get a ${kind}`, tag: kind, parameters: [clientIdParam, idParam],
    responses: { '200': ok(`The ${kind}`, ref(kind)), ...errorResponses(401, 404) },
  }));
  b.path(item, 'put', operation({
    operationId: `replace${kind}`, summary: `Replace a ${kind} (masked or absent secrets keep their stored value)`, tag: kind,
    description: 'A full replace: a spec read with GET can be sent back unchanged. A secret sent as `********` or left out keeps its stored value.',
    parameters: [clientIdParam, idParam], requestBody: jsonBody(input),
    responses: { '200': ok(`The updated ${kind}`, ref(kind)), ...errorResponses(400, 401, ...builtInRefusal, 404, 409, 412, 413, 415) },
  }));
  b.path(item, 'patch', operation({
    operationId: `patch${kind}`, summary: `Change some fields of a ${kind} (JSON Merge Patch, RFC 7396: null removes a field)`, tag: kind,
    description: 'Merged over the stored spec, then validated like a PUT. Switching a discriminated variant (a provider `type`) needs the new variant\'s required fields, so it is simpler as a PUT.',
    parameters: [clientIdParam, idParam], requestBody: mergePatchBody(ref(`${kind}Patch`)),
    responses: { '200': ok(`The updated ${kind}`, ref(kind)), ...errorResponses(400, 401, ...builtInRefusal, 404, 409, 412, 413, 415) },
  }));
  b.path(item, 'delete', operation({
    operationId: `delete${kind}`, summary: `Delete a ${kind} (refused while other resources use it)`, tag: kind, parameters: [clientIdParam, idParam],
    description: 'Refused with 412 while another resource refers to it; the message names them.',
    responses: { '204': noContent('Deleted'), ...errorResponses(401, ...builtInRefusal, 404, 412) },
  }));
}

function addTenants(b: OpenApiBuilder): void {
  const input = b.addZod('TenantSpec', tenantRequestSchema, 'input');
  // A body read back from GET may repeat the (unchangeable) clientId.
  const update = b.addZod('TenantUpdate', strictDeep(tenantUpdateSchema.extend({ clientId: clientIdSchema.optional() })), 'input');
  const stored = b.addZod('TenantSpecStored', tenantSchema, 'output');
  b.schemas['TenantPatch'] = patchSchema(b.schemas['TenantUpdate']!, 'TenantUpdate');
  b.tag('Tenant', 'Tenants (a client ID is the subdomain of their SendMessage address) and their settings: timezone, webhook secret, outbound address allowlist, language model, speech providers. Listing, creating and deleting tenants takes the operator token.');
  b.schemas['Tenant'] = resourceEnvelope('Tenant', stored, false);
  b.schemas['TenantPage'] = pageOf(ref('Tenant'));
  const item = '/v1/tenants/{clientId}';
  b.path('/v1/tenants', 'get', operation({
    operationId: 'listTenants', summary: 'List tenants (operator only)', tag: 'Tenant', parameters: [...pageParams],
    responses: { '200': ok('A page of tenants', ref('TenantPage')), ...errorResponses(400, 401, 403) },
  }));
  b.path('/v1/tenants', 'post', operation({
    operationId: 'createTenant', summary: 'Create a tenant (operator only)', tag: 'Tenant', requestBody: jsonBody(input),
    responses: { '201': ok('The created tenant', ref('Tenant')), ...errorResponses(400, 401, 403, 409, 413, 415) },
  }));
  b.path(item, 'get', operation({
    operationId: 'getTenant', summary: 'Get a tenant', tag: 'Tenant', parameters: [clientIdParam],
    responses: { '200': ok('The tenant', ref('Tenant')), ...errorResponses(401, 404) },
  }));
  b.path(item, 'put', operation({
    operationId: 'replaceTenant', summary: 'Replace a tenant\'s settings (the client ID never changes)', tag: 'Tenant',
    parameters: [clientIdParam], requestBody: jsonBody(update),
    responses: { '200': ok('The updated tenant', ref('Tenant')), ...errorResponses(400, 401, 404, 413, 415) },
  }));
  b.path(item, 'patch', operation({
    operationId: 'patchTenant', summary: 'Change some of a tenant\'s settings (JSON Merge Patch, RFC 7396)', tag: 'Tenant',
    description: 'Merged over the stored tenant (masked secrets keep their values), then validated like a PUT.',
    parameters: [clientIdParam], requestBody: mergePatchBody(ref('TenantPatch')),
    responses: { '200': ok('The updated tenant', ref('Tenant')), ...errorResponses(400, 401, 404, 413, 415) },
  }));
  b.path(item, 'delete', operation({
    operationId: 'deleteTenant', summary: 'Delete a tenant and everything it owns (operator only)', tag: 'Tenant', parameters: [clientIdParam],
    description: 'Removes the tenant with its tokens, resources, messages and call records.',
    responses: { '204': noContent('Deleted'), ...errorResponses(401, 403, 404, 412) },
  }));
}

function addTokens(b: OpenApiBuilder): void {
  const request = b.addZod('TokenRequest', apiTokenRequestSchema, 'input');
  b.addZod('Token', tokenSchema, 'output');
  b.addZod('IssuedToken', issuedTokenSchema, 'output');
  b.schemas['TokenPage'] = pageOf(ref('Token'));
  b.tag('Token', 'API tokens of a tenant. Scopes: `campaign` (Campaign SendMessage and message status), `sandbox` (the plant store), `management` (this API, for its own tenant). Only a SHA-256 digest is stored.');
  const collection = '/v1/tenants/{clientId}/tokens';
  const tokenId = pathParam('tokenId', 'token id');
  b.path(collection, 'get', operation({
    operationId: 'listTokens', summary: 'List API tokens (never their secrets)', tag: 'Token', parameters: [clientIdParam, ...pageParams],
    responses: { '200': ok('A page of tokens', ref('TokenPage')), ...errorResponses(400, 401, 404) },
  }));
  b.path(collection, 'post', operation({
    operationId: 'issueToken', summary: 'Issue an API token: the clear token is in this response only', tag: 'Token',
    description: 'The answer carries `Cache-Control: no-store`; store the token now, it cannot be read again.',
    parameters: [clientIdParam], requestBody: jsonBody(request),
    responses: { '201': ok('The issued token, with its secret', ref('IssuedToken')), ...errorResponses(400, 401, 404, 413, 415) },
  }));
  b.path(`${collection}/{tokenId}`, 'get', operation({
    operationId: 'getToken', summary: 'Get an API token (never its secret)', tag: 'Token', parameters: [clientIdParam, tokenId],
    responses: { '200': ok('The token', ref('Token')), ...errorResponses(401, 404) },
  }));
  b.path(`${collection}/{tokenId}`, 'delete', operation({
    operationId: 'revokeToken', summary: 'Revoke an API token', tag: 'Token', parameters: [clientIdParam, tokenId],
    responses: { '204': noContent('Revoked'), ...errorResponses(401, 404) },
  }));
}

function addApply(b: OpenApiBuilder): void {
  const report = b.addZod('ApplyReport', applyReportSchema, 'output');
  b.tag('Apply', 'Declarative apply: a whole tenant as YAML documents (`apiVersion: vap/v1`), created, updated or left unchanged by natural key, all in one transaction.');
  b.path('/v1/apply', 'post', operation({
    operationId: 'apply', summary: 'Apply resource documents idempotently (create or update by natural key)', tag: 'Apply',
    description: 'Documents are applied in dependency order, so references by name resolve within one apply. Every problem is reported at once with paths such as `documents[3].spec.provider.trunk`, and nothing is written. A tenant token may apply its own tenant\'s resources only (a `Tenant` document is 403). Deletion is not part of apply.',
    parameters: [{ name: 'dryRun', in: 'query', required: false, description: 'validate and report without writing', schema: { type: 'boolean', default: false } }],
    requestBody: {
      required: true,
      description: 'Multi-document YAML (`---` separated), or JSON: one document, a list, or `{documents: [...]}`',
      content: {
        'application/yaml': { schema: { type: 'string' } },
        'application/json': { schema: {} },
      },
    },
    responses: { '200': ok('What changed (or would change, on a dry run)', report), ...errorResponses(400, 401, 403, 404, 409, 412, 413, 415) },
  }));
}

/** The management API's OpenAPI 3.1 document, generated from the same zod schemas that validate requests. */
export function buildManagementOpenApi(definitions: readonly ResourceDefinition[], contributions: readonly OpenApiContribution[] = []): JsonSchema {
  const b = new OpenApiBuilder(errorSchema);
  addTenants(b);
  addTokens(b);
  for (const definition of definitions) addResourceKind(b, definition);
  addApply(b);
  for (const contribute of contributions) contribute(b);
  b.tag('Meta', 'This document.');
  b.path('/v1/openapi.json', 'get', operation({
    operationId: 'openapi', summary: 'This document', tag: 'Meta',
    description: 'Served without a token; the same document is committed as docs/openapi/management.json.',
    responses: { '200': ok('OpenAPI 3.1 document', { type: 'object' }) },
  }));
  (b.paths['/v1/openapi.json']!['get'] as Record<string, unknown>)['security'] = [];
  // Every path and query parameter is refused with 400 when it holds text PostgreSQL cannot store
  // (http/storable-params.ts), whichever route it is for: say so on each operation with parameters.
  for (const item of Object.values(b.paths)) {
    for (const op of Object.values(item) as Array<{ parameters?: unknown[]; responses?: Record<string, unknown> }>) {
      if (op.parameters?.length && op.responses && !op.responses['400']) Object.assign(op.responses, errorResponses(400));
    }
  }
  const used = new Set(Object.values(b.paths).flatMap((item) => Object.values(item).flatMap((op) => (op as { tags?: string[] }).tags ?? [])));
  const undeclared = [...used].filter((t) => !b.tags.has(t));
  if (undeclared.length > 0) throw new Error(`OpenAPI: tags used without a description: ${undeclared.join(', ')}`);
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Voice Agent Platform management API',
      version: managementApiVersion,
      description:
        'Tenants, API tokens and every tenant resource, declarative apply, call records, the Master Report, campaign message status and ' +
        'recipe simulations, on the control port under `/v1`. Authenticate with `Authorization: Bearer <token>`: the operator token reaches ' +
        'every tenant, a tenant token with scope `management` its own tenant only (another tenant answers 404 like a missing one). ' +
        'Errors are `{code, message, issues?}`; `code` is a Twirp-style error code.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [
      // Relative: resolved against where this document was fetched, which is the control API itself.
      { url: '/', description: 'the control API serving this document' },
    ],
    tags: [...b.tags].filter(([name]) => used.has(name)).map(([name, description]) => ({ name, description })),
    security: [{ bearer: [] }],
    paths: b.paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'The operator token, or a tenant API token with scope `management`' } },
      schemas: b.schemas,
    },
  };
}
