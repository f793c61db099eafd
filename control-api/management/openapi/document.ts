import { applyReportSchema } from '../../apply/apply-documents.js';
import { apiTokenRequestSchema } from '../../domain/api-token.js';
import { clientIdSchema, tenantRequestSchema, tenantSchema, tenantUpdateSchema } from '../../domain/tenant.js';
import { strictDeep } from '../../domain/strict.js';
import type { ResourceDefinition } from '../../resources/resource-definition.js';
import { issuedTokenSchema, tokenSchema } from '../token-routes.js';
import { OpenApiBuilder, clientIdParam, type OpenApiContribution } from './builder.js';
import { filterableFields, type JsonSchema } from './json-schema.js';
import { errorResponses, jsonBody, mergePatchBody, noContent, ok, operation, pageOf, pageParams, pathParam, ref } from './operations.js';

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

function addResourceKind(b: OpenApiBuilder, definition: ResourceDefinition): void {
  const { kind, plural } = definition;
  const input = b.addZod(`${kind}Spec`, definition.schema, 'input');
  const stored = b.addZod(`${kind}SpecStored`, definition.schema, 'output');
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
    parameters: [clientIdParam, ...pageParams, ...filters],
    responses: { '200': ok(`A page of ${plural}; a filtered page may be shorter than limit`, ref(`${kind}Page`)), ...errorResponses(400, 401, 404) },
  }));
  b.path(collection, 'post', operation({
    operationId: `create${kind}`, summary: `Create a ${kind}`, tag: kind, parameters: [clientIdParam], requestBody: jsonBody(input),
    responses: { '201': ok(`The created ${kind}`, ref(kind)), ...errorResponses(400, 401, 404, 409, 412, 413, 415) },
  }));
  b.path(item, 'get', operation({
    operationId: `get${kind}`, summary: `Get a ${kind}`, tag: kind, parameters: [clientIdParam, idParam],
    responses: { '200': ok(`The ${kind}`, ref(kind)), ...errorResponses(401, 404) },
  }));
  b.path(item, 'put', operation({
    operationId: `replace${kind}`, summary: `Replace a ${kind} (masked or absent secrets keep their stored value)`, tag: kind,
    parameters: [clientIdParam, idParam], requestBody: jsonBody(input),
    responses: { '200': ok(`The updated ${kind}`, ref(kind)), ...errorResponses(400, 401, ...builtInRefusal, 404, 409, 412, 413, 415) },
  }));
  b.path(item, 'patch', operation({
    operationId: `patch${kind}`, summary: `Change some fields of a ${kind} (JSON Merge Patch, RFC 7396: null removes a field)`, tag: kind,
    parameters: [clientIdParam, idParam], requestBody: mergePatchBody(kind),
    responses: { '200': ok(`The updated ${kind}`, ref(kind)), ...errorResponses(400, 401, ...builtInRefusal, 404, 409, 412, 413, 415) },
  }));
  b.path(item, 'delete', operation({
    operationId: `delete${kind}`, summary: `Delete a ${kind} (refused while other resources use it)`, tag: kind, parameters: [clientIdParam, idParam],
    responses: { '204': noContent('Deleted'), ...errorResponses(401, ...builtInRefusal, 404, 412) },
  }));
}

function addTenants(b: OpenApiBuilder): void {
  const input = b.addZod('TenantSpec', tenantRequestSchema, 'input');
  // A body read back from GET may repeat the (unchangeable) clientId.
  const update = b.addZod('TenantUpdate', strictDeep(tenantUpdateSchema.extend({ clientId: clientIdSchema.optional() })), 'input');
  const stored = b.addZod('TenantSpecStored', tenantSchema, 'output');
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
    parameters: [clientIdParam], requestBody: mergePatchBody('TenantUpdate'),
    responses: { '200': ok('The updated tenant', ref('Tenant')), ...errorResponses(400, 401, 404, 413, 415) },
  }));
  b.path(item, 'delete', operation({
    operationId: 'deleteTenant', summary: 'Delete a tenant and everything it owns (operator only)', tag: 'Tenant', parameters: [clientIdParam],
    responses: { '204': noContent('Deleted'), ...errorResponses(401, 403, 404, 412) },
  }));
}

function addTokens(b: OpenApiBuilder): void {
  const request = b.addZod('TokenRequest', apiTokenRequestSchema, 'input');
  b.addZod('Token', tokenSchema, 'output');
  b.addZod('IssuedToken', issuedTokenSchema, 'output');
  b.schemas['TokenPage'] = pageOf(ref('Token'));
  const collection = '/v1/tenants/{clientId}/tokens';
  const tokenId = pathParam('tokenId', 'token id');
  b.path(collection, 'get', operation({
    operationId: 'listTokens', summary: 'List API tokens (never their secrets)', tag: 'Token', parameters: [clientIdParam, ...pageParams],
    responses: { '200': ok('A page of tokens', ref('TokenPage')), ...errorResponses(400, 401, 404) },
  }));
  b.path(collection, 'post', operation({
    operationId: 'issueToken', summary: 'Issue an API token: the clear token is in this response only', tag: 'Token',
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
  b.path('/v1/apply', 'post', operation({
    operationId: 'apply', summary: 'Apply resource documents idempotently (create or update by natural key)', tag: 'Apply',
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
  b.path('/v1/openapi.json', 'get', operation({
    operationId: 'openapi', summary: 'This document', tag: 'Meta',
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
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Voice Agent Platform management API',
      version: managementApiVersion,
      description: 'Tenants, API tokens and every tenant resource, declarative apply, call records, the Master Report and recipe simulations. Errors are `{code, message, issues?}`.',
    },
    security: [{ bearer: [] }],
    paths: b.paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'The operator token, or a tenant API token with scope `management`' } },
      schemas: b.schemas,
    },
  };
}
