import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { plantStoreOpenApi } from '../../control-api/api/sandbox/openapi-document.js';
import { OpenApiResponseValidator, type OpenApiDocument } from './openapi-response-validator.js';

const json = new Headers({ 'content-type': 'application/json; charset=utf-8' });

/** A small 3.0 document with nullable and a range status, to show the helper is not plant-specific. */
const petDocument: OpenApiDocument = {
  openapi: '3.0.3',
  paths: {
    '/pets/{petId}': {
      get: {
        responses: {
          '200': {
            description: 'a pet',
            headers: { 'X-Rate-Limit': { required: true, schema: { type: 'integer' } } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
          },
          '4XX': { description: 'client error', content: { 'application/problem+json': { schema: { type: 'object', required: ['title'] } } } },
        },
      },
    },
    '/pets/mine': { get: { responses: { default: { description: 'text', content: { 'text/plain': {} } } } } },
  },
  components: {
    schemas: { Pet: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, nick: { type: 'string', nullable: true } } } },
  },
};

describe('OpenAPI response validator (test helper)', () => {
  const plants = new OpenApiResponseValidator(plantStoreOpenApi);
  const pets = new OpenApiResponseValidator(petDocument);

  it('accepts responses that match the document', () => {
    assert.deepEqual(plants.assertResponse({ method: 'GET', path: '/plants', status: 200, headers: json, bodyText: '[{"name":"a","tag":"b"}]' }), [{ name: 'a', tag: 'b' }]);
    plants.assertResponse({ method: 'DELETE', path: '/plants/7', status: 204, headers: new Headers(), bodyText: '' });
    const limited = new Headers({ 'content-type': 'application/json', 'x-rate-limit': '5' });
    pets.assertResponse({ method: 'GET', path: '/pets/1', status: 200, headers: limited, bodyText: '{"name":"Rex","nick":null}' });
    pets.assertResponse({ method: 'GET', path: '/pets/1', status: 404, headers: new Headers({ 'content-type': 'application/problem+json' }), bodyText: '{"title":"gone"}' });
    pets.assertResponse({ method: 'GET', path: '/pets/mine', status: 302, headers: new Headers({ 'content-type': 'text/plain' }), bodyText: 'x' });
  });

  const rejections: ReadonlyArray<[string, () => unknown, RegExp]> = [
    ['a body that breaks the schema', () => plants.assertResponse({ method: 'POST', path: '/plants', status: 200, headers: json, bodyText: '{"name":"a","id":1}' }), /must NOT have additional properties/],
    ['an int32 error code out of range', () => plants.assertResponse({ method: 'GET', path: '/plants', status: 400, headers: json, bodyText: '{"error":4294967296,"message":"x"}' }), /must match format "int32"/],
    ['an undocumented status', () => plants.assertResponse({ method: 'GET', path: '/plants', status: 404, headers: json, bodyText: '{}' }), /status not documented/],
    ['an undocumented method', () => plants.assertResponse({ method: 'PUT', path: '/plants', status: 200, headers: json, bodyText: '{}' }), /PUT \/plants is not in the OpenAPI document/],
    ['an unknown path', () => plants.assertResponse({ method: 'GET', path: '/trees', status: 200, headers: json, bodyText: '[]' }), /path is not in the OpenAPI document/],
    ['a body where none is documented', () => plants.assertResponse({ method: 'DELETE', path: '/plants/1', status: 204, headers: json, bodyText: '{}' }), /documented without content/],
    ['an undeclared Content-Type', () => plants.assertResponse({ method: 'GET', path: '/plants', status: 200, headers: new Headers({ 'content-type': 'text/html' }), bodyText: '[]' }), /Content-Type "text\/html" is not one of application\/json/],
    ['a missing Content-Type', () => plants.assertResponse({ method: 'GET', path: '/plants', status: 200, headers: new Headers(), bodyText: '[]' }), /Content-Type "" is not one of/],
    ['a body that is not JSON', () => plants.assertResponse({ method: 'GET', path: '/plants', status: 200, headers: json, bodyText: '[' }), /body is not JSON/],
    ['a missing required header', () => pets.assertResponse({ method: 'GET', path: '/pets/1', status: 200, headers: json, bodyText: '{"name":"Rex"}' }), /required header X-Rate-Limit missing/],
    ['null where 3.0 has no nullable', () => pets.assertResponse({ method: 'GET', path: '/pets/1', status: 200, headers: new Headers({ 'content-type': 'application/json', 'x-rate-limit': '1' }), bodyText: '{"name":null}' }), /must be string/],
  ];
  for (const [what, run, message] of rejections) {
    it(`rejects ${what}`, () => {
      assert.throws(run, (error: unknown) => {
        assert.ok(error instanceof assert.AssertionError);
        assert.match(error.message, message);
        return true;
      });
    });
  }

  it('prefers a literal path over a template (/pets/mine is not /pets/{petId})', () => {
    assert.throws(() => pets.assertResponse({ method: 'GET', path: '/pets/mine', status: 200, headers: json, bodyText: '{"name":"a"}' }), /Content-Type "application\/json" is not one of text\/plain/);
  });
});

describe('plant store OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (official JSON schema) at version 1.0.0', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(JSON.stringify(plantStoreOpenApi)) as Record<string, unknown>);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    assert.equal(validator.version, '3.1');
    assert.equal(plantStoreOpenApi.info.version, '1.0.0');
  });
});
