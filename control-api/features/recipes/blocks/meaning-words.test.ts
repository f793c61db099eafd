import assert from 'node:assert/strict';
import type { ExtractedVariable, Intent } from '../../../model/recipes/recipe-schema.js';
import { confirmationQuestion } from './meaning-words.js';

const promise: Intent = {
  name: 'promise_to_pay',
  description: 'caller promises payment on a later date',
  confirmation: 'you will pay {{promise_amount}} on {{promise_date}}',
  captures: ['promise_amount', 'promise_date'],
  examples: ['I will pay'],
};
const variables: ExtractedVariable[] = [
  { name: 'promise_amount', type: 'number', description: 'amount the caller promises to pay' },
  { name: 'promise_date', type: 'date', description: 'date the caller promises to pay on' },
];
const nothingElse = (): unknown => undefined;

describe('confirmationQuestion: the meaning read back with the values it has', () => {
  it('reads every captured value as it would be stored', () => {
    const question = confirmationQuestion(promise, { promise_amount: 3000, promise_date: '2026-12-07' }, variables, '2026-12-01', nothingElse);
    assert.equal(question, 'Just to check: you will pay 3000 on Monday 7 December?');
  });

  it('leaves out a value nobody said together with the word that introduced it', () => {
    assert.equal(confirmationQuestion(promise, { promise_date: '2026-12-07' }, variables, '2026-12-01', nothingElse), 'Just to check: you will pay on Monday 7 December?');
    assert.equal(confirmationQuestion(promise, { promise_amount: 3000 }, variables, '2026-12-01', nothingElse), 'Just to check: you will pay 3000?');
    assert.equal(confirmationQuestion(promise, {}, variables, '2026-12-01', nothingElse), 'Just to check: you will pay?');
  });

  it('keeps a placeholder the call already knows (a value from an earlier block)', () => {
    const known = (name: string): unknown => (name === 'promise_date' ? 'Friday' : undefined);
    assert.equal(confirmationQuestion(promise, { promise_amount: 500 }, variables, '2026-12-01', known), 'Just to check: you will pay 500 on Friday?');
  });
});
