/** Bounds of the OpenAPI `int64` and `int32` formats (two's complement). */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const INT32_MAX = 2 ** 31 - 1;

export type IntegerReading =
  | { readonly kind: 'integer'; readonly value: bigint }
  | { readonly kind: 'not-integer' }
  | { readonly kind: 'out-of-range' };

/**
 * Reads a JSON number token (RFC 8259 sec. 6) exactly. JSON Schema counts `1.0` and `1e3` as
 * integers, so they are accepted; `1.5` is not an integer; anything beyond int64 is out of range.
 * Works on the token's digits, so ids beyond 2^53 never pass through a double.
 */
export function readInt64(token: string): IntegerReading {
  const match = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(token);
  if (!match) return { kind: 'not-integer' };
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;
  let digits = (whole + fraction).replace(/^0+/, '');
  if (digits === '') return { kind: 'integer', value: 0n };
  // Value = digits * 10^scale. Exponents far beyond int64 need no arithmetic to judge.
  const exponentSign = exponentText.startsWith('-') ? -1 : 1;
  const exponentDigits = exponentText.replace(/^[+-]?0*/, '');
  const exponent = exponentSign * (exponentDigits.length > 12 ? 1e12 : Number(exponentDigits || '0'));
  let scale = exponent - fraction.length;
  const trailing = /0*$/.exec(digits)?.[0].length ?? 0;
  digits = digits.slice(0, digits.length - trailing);
  scale += trailing;
  if (scale < 0) return { kind: 'not-integer' };
  // int64 has at most 19 digits; anything longer is out of range whatever its value.
  if (digits.length + scale > 19) return { kind: 'out-of-range' };
  const value = BigInt(`${sign}${digits}${'0'.repeat(scale)}`);
  return value < INT64_MIN || value > INT64_MAX ? { kind: 'out-of-range' } : { kind: 'integer', value };
}

/** A path or query segment holding a decimal integer: optional minus, digits only. */
export function readDecimalInt64(text: string): IntegerReading {
  if (!/^-?\d+$/.test(text)) return { kind: 'not-integer' };
  const negative = text.startsWith('-');
  const digits = text.replace(/^-?0*/, '');
  if (digits.length > 19) return { kind: 'out-of-range' };
  const value = digits === '' ? 0n : BigInt(`${negative ? '-' : ''}${digits}`);
  return value < INT64_MIN || value > INT64_MAX ? { kind: 'out-of-range' } : { kind: 'integer', value };
}
