import assert from 'node:assert/strict';
import { z } from 'zod';
import { phoneNumberSchema } from './phone-number.js';
import { campaignSchema } from './campaign.js';
import { strictDeep } from './strict.js';
import { safeParseReporting, toFieldIssues } from '../../platform/validation.js';

const issuesOf = (schema: z.ZodType, input: unknown) => {
  const result = safeParseReporting(schema, input);
  assert.ok(!result.success, 'expected a validation failure');
  return toFieldIssues(result.error);
};

describe('strictDeep', () => {
  const number = { number: '+914440001001', recipe: 'r1', provider: { type: 'nativeStack' } };

  it('refuses an unknown key at any depth, one issue per key, and leaves the original lenient', () => {
    const strict = strictDeep(phoneNumberSchema);
    const issues = issuesOf(strict, { ...number, favorite: true, provider: { type: 'providerA', accountSid: 'AC1', authToken: 't', region: 'in' } });
    assert.deepEqual(issues, [
      { path: 'provider.region', message: "provider.region is not a known field for type 'providerA' (check its spelling)" },
      { path: 'favorite', message: 'favorite is not a known field (check its spelling)' },
    ]);
    assert.equal(phoneNumberSchema.safeParse({ ...number, favorite: true }).success, true, 'stored specs are still read leniently');
  });

  it('keeps defaults, transforms and refinements of the original', () => {
    const strict = strictDeep(campaignSchema);
    const parsed = strict.parse({ name: 'c', phoneNumber: '914440001001', recipe: 'r1' });
    assert.equal(parsed.phoneNumber, '+914440001001');
    assert.equal(parsed.ringDurationSeconds, 30);
    assert.deepEqual(parsed.workingWindow, { enabled: false, mode: 'custom' });
    const refined = issuesOf(strict, { name: 'c', phoneNumber: '+914440001001', recipe: 'r1', maxRetries: 2, retryScenarios: [] });
    assert.deepEqual(refined.map((i) => i.path), ['retryScenarios']);
    const nested = issuesOf(strict, { name: 'c', phoneNumber: '+914440001001', recipe: 'r1', workingWindow: { enabled: false, colour: 'x' } });
    assert.deepEqual(nested.map((i) => i.path), ['workingWindow.colour']);
  });

  it('describes the strict objects as additionalProperties: false in JSON Schema', () => {
    const json = z.toJSONSchema(strictDeep(phoneNumberSchema), { io: 'input', unrepresentable: 'any' }) as { additionalProperties?: unknown };
    assert.equal(json.additionalProperties, false);
  });

  it('terminates on recursive schemas declared with getters', () => {
    const node = z.object({
      name: z.string(),
      get children(): z.ZodArray<typeof node> {
        return z.array(node);
      },
    });
    const strict = strictDeep(node);
    assert.equal(strict.safeParse({ name: 'a', children: [{ name: 'b', children: [] }] }).success, true);
    assert.deepEqual(issuesOf(strict, { name: 'a', children: [{ name: 'b', children: [], x: 1 }] }).map((i) => i.path), ['children[0].x']);
  });
});

describe('toFieldIssues', () => {
  it('says a missing field is required, whatever the schema calls its type error', () => {
    const schema = z.object({ a: z.string({ error: 'a must be a string' }), b: z.array(z.string()), c: z.number().nullable() });
    assert.deepEqual(issuesOf(schema, { c: 'x' }), [
      { path: 'a', message: 'a is required' },
      { path: 'b', message: 'b is required' },
      { path: 'c', message: 'Invalid input: expected number, received string' },
    ]);
  });

  it('writes array indexes in brackets, as the docs do', () => {
    const schema = z.object({ list: z.array(z.object({ n: z.number({ error: 'n must be a number' }) })) });
    assert.deepEqual(issuesOf(schema, { list: [{ n: 1 }, { n: 'x' }] }), [{ path: 'list[1].n', message: 'n must be a number' }]);
  });
});
