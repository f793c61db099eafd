import assert from 'node:assert/strict';
import { fakeContext } from '../../../../test/fakes/fake-block-context.js';
import { conditionSettingsSchema, type ConditionRule } from '../../../model/recipes/recipe-schema.js';
import { conditionBlock, isLinearSafe, ruleMatches } from './condition.js';

describe('Condition block', () => {
  const vars = { amount: '2500', due: 5000, city: 'Mumbai', empty: '', tags: ['vip', 'late'], paid_on: '2026-11-20', promise: '2026-11-25', regex_target: 'INV-2026-0042' };
  const ctx = fakeContext({ variables: vars });
  const check = (rule: Partial<ConditionRule> & Pick<ConditionRule, 'variable' | 'operator'>): boolean => ruleMatches(ctx, rule as ConditionRule);

  it('implements every operator the spec lists plus starts/ends with and regex', () => {
    assert.equal(check({ variable: 'city', operator: 'equals', value: 'mumbai' }), true);
    assert.equal(check({ variable: 'amount', operator: 'equals', value: 2500 }), true, 'numeric text equals a number');
    assert.equal(check({ variable: 'city', operator: 'notEquals', value: 'Delhi' }), true);
    assert.equal(check({ variable: 'amount', operator: 'lessThan', valueVariable: 'due' }), true, 'compares with another variable');
    assert.equal(check({ variable: 'due', operator: 'greaterThan', value: '10000' }), false);
    assert.equal(check({ variable: 'paid_on', operator: 'lessThan', valueVariable: 'promise' }), true, 'ISO dates compare');
    assert.equal(check({ variable: 'city', operator: 'contains', value: 'MUM' }), true);
    assert.equal(check({ variable: 'tags', operator: 'contains', value: 'vip' }), true);
    assert.equal(check({ variable: 'city', operator: 'notContains', value: 'pune' }), true);
    assert.equal(check({ variable: 'empty', operator: 'isEmpty' }), true);
    assert.equal(check({ variable: 'never_set', operator: 'isEmpty' }), true);
    assert.equal(check({ variable: 'city', operator: 'isNotEmpty' }), true);
    assert.equal(check({ variable: 'regex_target', operator: 'startsWith', value: 'inv-' }), true);
    assert.equal(check({ variable: 'regex_target', operator: 'endsWith', value: '0042' }), true);
    assert.equal(check({ variable: 'regex_target', operator: 'matchesRegex', value: '^INV-\\d{4}-\\d+$' }), true);
    assert.equal(check({ variable: 'caller_number', operator: 'startsWith', value: '+91' }), true, 'built-in call context');
  });

  it('refuses regular expressions that can backtrack catastrophically, at once', () => {
    for (const pattern of ['(a+)+$', '^(\\w*)*$', '(a|aa)+$', '(\\d+)-\\1', '((ab)+c)+']) {
      assert.equal(isLinearSafe(pattern), false, pattern);
    }
    for (const pattern of ['^INV-\\d{4}-\\d+$', '^\\+91[0-9]{10}$', '^(yes|no)$', '[(]a+[)]+']) {
      assert.equal(isLinearSafe(pattern), true, pattern);
    }
    const started = Date.now();
    const evil = fakeContext({ variables: { v: `${'a'.repeat(40)}!` } });
    assert.equal(ruleMatches(evil, { variable: 'v', operator: 'matchesRegex', value: '^(a+)+$' }), false);
    assert.ok(Date.now() - started < 100);
    assert.match(evil.warnings[0] ?? '', /refused/);
  });

  it('never matches a comparison against a missing or non-numeric value', () => {
    assert.equal(check({ variable: 'never_set', operator: 'lessThan', value: 10 }), false);
    assert.equal(check({ variable: 'city', operator: 'greaterThan', value: 10 }), false);
  });

  it('takes the first matching branch top to bottom, with AND/OR groups, else Else', async () => {
    const settings = conditionSettingsSchema.parse({
      branches: [
        { name: 'vip_in_mumbai', rules: [{ variable: 'city', operator: 'equals', value: 'Delhi' }] },
        {
          name: 'big_or_vip',
          combinator: 'and',
          rules: [
            { variable: 'city', operator: 'isNotEmpty' },
            { combinator: 'or', rules: [{ variable: 'amount', operator: 'greaterThan', value: 100000 }, { variable: 'tags', operator: 'contains', value: 'vip' }] },
          ],
        },
        { name: 'also_true', rules: [{ variable: 'city', operator: 'isNotEmpty' }] },
      ],
    });
    assert.deepEqual(await conditionBlock.run(ctx, settings, ctx.signal), { exit: 'big_or_vip' });
    const none = conditionSettingsSchema.parse({ branches: [{ name: 'never', rules: [{ variable: 'city', operator: 'isEmpty' }] }] });
    assert.deepEqual(await conditionBlock.run(ctx, none, ctx.signal), { exit: 'else' });
  });
});
