import assert from 'node:assert/strict';
import { readDecimalInt64, readInt64 } from './int64.js';

describe('reading int64 JSON number tokens exactly', () => {
  const cases: ReadonlyArray<[string, ReturnType<typeof readInt64>]> = [
    ['0', { kind: 'integer', value: 0n }],
    ['-0', { kind: 'integer', value: 0n }],
    ['9223372036854775807', { kind: 'integer', value: 9223372036854775807n }],
    ['-9223372036854775808', { kind: 'integer', value: -9223372036854775808n }],
    ['9223372036854775808', { kind: 'out-of-range' }],
    ['-9223372036854775809', { kind: 'out-of-range' }],
    ['9007199254740993', { kind: 'integer', value: 9007199254740993n }],
    ['1e3', { kind: 'integer', value: 1000n }],
    ['1E+3', { kind: 'integer', value: 1000n }],
    ['1000.000', { kind: 'integer', value: 1000n }],
    ['12.5e1', { kind: 'integer', value: 125n }],
    ['1500e-3', { kind: 'not-integer' }],
    ['2000e-3', { kind: 'integer', value: 2n }],
    ['1.5', { kind: 'not-integer' }],
    ['1e-1', { kind: 'not-integer' }],
    ['0.0e-99999999999999', { kind: 'integer', value: 0n }],
    ['1e19', { kind: 'out-of-range' }],
    ['9.223372036854775807e18', { kind: 'integer', value: 9223372036854775807n }],
    ['1e+0000000000000005', { kind: 'integer', value: 100000n }],
    ['1e99999999999999999', { kind: 'out-of-range' }],
    ['1e-99999999999999999', { kind: 'not-integer' }],
    ['01', { kind: 'not-integer' }],
    ['abc', { kind: 'not-integer' }],
  ];
  for (const [token, expected] of cases) {
    it(`${token} -> ${expected.kind}${'value' in expected ? ` ${expected.value}` : ''}`, () => {
      assert.deepEqual(readInt64(token), expected);
    });
  }
});

describe('reading int64 path segments', () => {
  it('accepts signed decimal digits within int64 only', () => {
    assert.deepEqual(readDecimalInt64('007'), { kind: 'integer', value: 7n });
    assert.deepEqual(readDecimalInt64('-9223372036854775808'), { kind: 'integer', value: -9223372036854775808n });
    assert.deepEqual(readDecimalInt64('-0'), { kind: 'integer', value: 0n });
    assert.deepEqual(readDecimalInt64('00000000000000000000000001'), { kind: 'integer', value: 1n });
    assert.deepEqual(readDecimalInt64('9223372036854775808'), { kind: 'out-of-range' });
    for (const text of ['', '-', '+1', '1e3', '1.0', ' 1', '0x1']) assert.deepEqual(readDecimalInt64(text), { kind: 'not-integer' }, text);
  });
});
