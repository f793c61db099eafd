import assert from 'node:assert/strict';
import { z } from 'zod';
import { AppError } from '../../../core/errors.js';
import { formatPath, fromZodError, HttpError, toAppError } from './error-response.js';

describe('error responses', () => {
  it('formats field paths the way the docs write them', () => {
    assert.equal(formatPath(['blocks', 3, 'settings', 'url']), 'blocks[3].settings.url');
    assert.equal(formatPath([0, 'spec'], 'documents'), 'documents[0].spec');
    assert.equal(formatPath([]), '');
  });

  it('turns a zod failure into invalid_argument with every issue', () => {
    const schema = z.object({ a: z.string(), b: z.array(z.number()) });
    const parsed = schema.safeParse({ a: 1, b: [1, 'x'] });
    assert.ok(!parsed.success);
    const error = fromZodError(parsed.error, 'widget');
    assert.equal(error.code, 'invalid_argument');
    assert.equal(error.httpStatus, 400);
    assert.deepEqual(error.issues.map((i) => i.path), ['a', 'b[1]']);
    assert.match(error.message, /^invalid widget: a: .* \(and 1 more\)$/);
  });

  it('maps PostgreSQL constraint errors to client errors, anything unknown to internal', () => {
    assert.equal(toAppError(Object.assign(new Error('dup'), { code: '23505' })).httpStatus, 409);
    assert.equal(toAppError(Object.assign(new Error('fk'), { code: '23503' })).httpStatus, 412);
    assert.equal(toAppError(Object.assign(new Error('uuid'), { code: '22P02' })).httpStatus, 400);
    const internal = toAppError(new Error('connection reset with secret details'));
    assert.equal(internal.code, 'internal');
    assert.equal(internal.message, 'internal error', 'no internal detail reaches the client');
    const app = new AppError('not_found', 'x not found');
    assert.equal(toAppError(app), app);
  });

  it('keeps the precise status of an HttpError', () => {
    const error = new HttpError(413, 'resource_exhausted', 'too big');
    assert.equal(error.httpStatus, 413);
    assert.equal(toAppError(Object.assign(new Error('too large'), { status: 413 })).httpStatus, 413);
  });
});
