import { INT32_MAX } from './int64.js';
import { PLANT_BODY_LIMIT_BYTES, PLANT_TEXT_MAX } from './plant-request.js';

const errorResponse = (description: string): object => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const unauthorizedResponse = {
  description: 'Missing, malformed, unknown, expired or revoked bearer token, or one without the sandbox scope (error 401)',
  headers: { 'WWW-Authenticate': { description: 'RFC 6750 challenge', schema: { type: 'string' } } },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

const serverError = errorResponse('Unexpected failure, e.g. the database is unreachable (error 500); retry later');

/**
 * The plant store's OpenAPI 3.1 document, served at /openapi.json. Written by hand because the
 * int64 id is read losslessly (beyond what a JSON-Schema-from-zod export can say); the app's tests
 * validate every response against it, so it cannot drift from the behaviour.
 */
export const plantStoreOpenApi = {
  openapi: '3.1.0',
  info: {
    title: 'Plant Store',
    version: '1.0.0',
    description:
      'Sample plant store (sandbox). Plants belong to the owner of the bearer token: the tenant of an issued token, or a ' +
      'configured static token itself. Every error body is an Error whose `error` repeats the HTTP status.',
    license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
  },
  // Relative: resolved against where this document was fetched, which is the sandbox itself (default :8081).
  servers: [{ url: '/', description: 'the sandbox serving this document (plain HTTP)' }],
  tags: [
    { name: 'Plant', description: 'Plants of the token owner: create, list, delete.' },
    { name: 'Meta', description: 'This document.' },
  ],
  security: [{ bearerAuth: [] }],
  paths: {
    '/plants': {
      get: {
        operationId: 'getPlants',
        tags: ['Plant'],
        summary: 'Returns all plants the token owner has, ordered by id',
        parameters: [
          {
            name: 'limit',
            in: 'query',
            required: false,
            description: 'The maximum number of results to return',
            schema: { type: 'integer', format: 'int32', minimum: 1, maximum: INT32_MAX },
          },
        ],
        responses: {
          '200': {
            description: 'Plants, ordered by id ascending',
            content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Plant' } } } },
          },
          '400': errorResponse('Invalid `limit`: not an integer, below 1, above the int32 range, or given twice (error 400)'),
          '401': unauthorizedResponse,
          '500': serverError,
        },
      },
      post: {
        operationId: 'createPlant',
        tags: ['Plant'],
        summary: 'Creates a new plant in the store',
        requestBody: {
          required: true,
          description: `A NewPlant, at most ${PLANT_BODY_LIMIT_BYTES} bytes`,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
        },
        responses: {
          '200': { description: 'The stored plant', content: { 'application/json': { schema: { $ref: '#/components/schemas/Plant' } } } },
          '400': errorResponse(
            'Malformed JSON, not an object, a missing, unknown or mistyped field, an id outside int64, or an id the owner already uses (error 400)',
          ),
          '401': unauthorizedResponse,
          '413': errorResponse(`Body larger than ${PLANT_BODY_LIMIT_BYTES} bytes (error 413)`),
          '415': errorResponse('Content-Type other than application/json, a charset other than UTF-8, or a Content-Encoding (error 415)'),
          '500': serverError,
        },
      },
    },
    '/plants/{id}': {
      delete: {
        operationId: 'deletePlant',
        tags: ['Plant'],
        summary: 'Deletes a single plant by its id',
        parameters: [{ name: 'id', in: 'path', required: true, description: 'ID of the plant to delete', schema: { type: 'integer', format: 'int64' } }],
        responses: {
          '204': { description: 'Deleted; empty body' },
          '400': errorResponse('The id is not a decimal integer or is outside int64 (error 400)'),
          '401': unauthorizedResponse,
          '404': errorResponse('The token owner has no plant with this id (error 404)'),
          '500': serverError,
        },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'getOpenApiDocument',
        tags: ['Meta'],
        summary: 'This document',
        security: [],
        responses: { '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
  },
  components: {
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'A token with the sandbox scope, or one configured in SANDBOX_TOKENS' },
    },
    schemas: {
      Plant: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', description: 'The name of the plant', minLength: 1, maxLength: PLANT_TEXT_MAX, pattern: '^[^\\u0000]*$' },
          tag: { type: 'string', description: 'Tag to specify the type', maxLength: PLANT_TEXT_MAX, pattern: '^[^\\u0000]*$' },
        },
      },
      NewPlant: {
        type: 'object',
        required: ['id', 'name'],
        additionalProperties: false,
        properties: {
          id: { type: 'integer', format: 'int64', description: 'Identification number of the plant, unique per token owner' },
          name: { $ref: '#/components/schemas/Plant/properties/name' },
          tag: { $ref: '#/components/schemas/Plant/properties/tag' },
        },
      },
      Error: {
        type: 'object',
        required: ['error', 'message'],
        additionalProperties: false,
        properties: {
          error: { type: 'integer', format: 'int32', description: 'The HTTP status: 400, 401, 404, 405, 413, 415 or 500' },
          message: { type: 'string' },
        },
      },
    },
  },
} as const;
