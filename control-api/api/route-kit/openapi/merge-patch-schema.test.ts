import assert from 'node:assert/strict';
import { mergePatchSchema } from './merge-patch-schema.js';

describe('mergePatchSchema (JSON Merge Patch of a request schema)', () => {
  const spec = {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1 },
      enabled: { type: 'boolean', default: true },
      tags: { type: 'array', items: { type: 'string' } },
      settings: { type: 'object', properties: { url: { type: 'string' }, retries: { type: 'integer' } }, required: ['url'], additionalProperties: false },
      labels: { type: 'object', propertyNames: { pattern: '^[a-z]+$' }, additionalProperties: { type: 'string' } },
      provider: {
        oneOf: [
          { type: 'object', properties: { type: { const: 'a' }, key: { type: 'string' } }, required: ['type', 'key'], additionalProperties: false },
          { type: 'object', properties: { type: { const: 'b' }, token: { type: 'string' } }, required: ['type'], additionalProperties: false },
        ],
      },
    },
    required: ['name', 'provider'],
    additionalProperties: false,
  };
  const patch = mergePatchSchema(spec) as { required?: unknown; additionalProperties: unknown; properties: Record<string, Record<string, unknown>> };

  it('makes every field optional, nullable only where null removes something optional', () => {
    assert.equal(patch.required, undefined);
    assert.equal(patch.additionalProperties, false);
    assert.deepEqual(patch.properties['name'], { type: 'string', minLength: 1 });
    assert.deepEqual(patch.properties['enabled'], { anyOf: [{ type: 'boolean' }, { type: 'null' }] }, 'its default is dropped: absent means unchanged');
  });

  it('replaces arrays whole and merges nested objects and maps key by key', () => {
    assert.deepEqual(patch.properties['tags'], { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }] });
    assert.deepEqual(patch.properties['settings'], {
      anyOf: [
        { type: 'object', properties: { url: { type: 'string' }, retries: { anyOf: [{ type: 'integer' }, { type: 'null' }] } }, additionalProperties: false },
        { type: 'null' },
      ],
    });
    assert.deepEqual(patch.properties['labels'], {
      anyOf: [{ type: 'object', propertyNames: { pattern: '^[a-z]+$' }, additionalProperties: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, { type: 'null' }],
    });
  });

  it('patches each variant of a union, as anyOf since partial variants overlap', () => {
    assert.deepEqual(patch.properties['provider'], {
      anyOf: [
        { type: 'object', properties: { type: { const: 'a' }, key: { type: 'string' } }, additionalProperties: false },
        { type: 'object', properties: { type: { const: 'b' }, token: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, additionalProperties: false },
      ],
    });
  });
});
