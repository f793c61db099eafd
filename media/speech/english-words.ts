/**
 * English number words for speech normalisation. How a number is said depends on the variety:
 * Indian English groups by lakh and crore, British and Indian English put "and" before the last
 * part under a hundred ("one hundred and five"), American English does not.
 */
export const ONES = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const ORDINAL_IRREGULAR: Record<string, string> = { one: 'first', two: 'second', three: 'third', five: 'fifth', eight: 'eighth', nine: 'ninth', twelve: 'twelfth' };

/** How numbers are grouped and joined in one English variety. */
export interface NumberStyle {
  /** Lakh and crore instead of million and billion (en-IN). */
  readonly indian?: boolean;
  /** "one hundred and five" (en-GB, en-IN and most varieties outside North America). */
  readonly and?: boolean;
}

function below100(n: number): string {
  return n < 20 ? ONES[n]! : TENS[Math.floor(n / 10)]! + (n % 10 ? `-${ONES[n % 10]}` : '');
}

function below1000(n: number, style: NumberStyle): string {
  if (n < 100) return below100(n);
  const hundreds = `${ONES[Math.floor(n / 100)]} hundred`;
  const rest = n % 100;
  if (rest === 0) return hundreds;
  return `${hundreds} ${style.and ? 'and ' : ''}${below100(rest)}`;
}

/** English cardinal number ("two thousand five hundred"). */
export function englishNumber(n: number, style: NumberStyle = {}): string {
  if (!Number.isFinite(n)) return String(n);
  if (n < 0) return `minus ${englishNumber(-n, style)}`;
  n = Math.floor(n);
  if (n < 1000) return below1000(n, style);
  const scales: [number, string][] = style.indian
    ? [[10_000_000, 'crore'], [100_000, 'lakh'], [1000, 'thousand']]
    : [[1_000_000_000_000, 'trillion'], [1_000_000_000, 'billion'], [1_000_000, 'million'], [1000, 'thousand']];
  const parts: string[] = [];
  for (const [value, name] of scales) {
    if (n >= value) {
      parts.push(`${englishNumber(Math.floor(n / value), style)} ${name}`);
      n %= value;
    }
  }
  if (n > 0) parts.push(`${style.and && n < 100 ? 'and ' : ''}${below1000(n, style)}`);
  return parts.join(' ');
}

/** English ordinal ("twenty-first"). */
export function englishOrdinal(n: number, style: NumberStyle = {}): string {
  const words = englishNumber(n, style);
  const m = /([a-z]+)$/.exec(words);
  const last = m?.[1] ?? words;
  const head = words.slice(0, words.length - last.length);
  if (ORDINAL_IRREGULAR[last]) return head + ORDINAL_IRREGULAR[last];
  if (last.endsWith('y')) return `${head}${last.slice(0, -1)}ieth`;
  return `${words}th`;
}

/** A year as people say it: "twenty twenty-six", "nineteen oh five", "two thousand six". */
export function yearWords(year: number, style: NumberStyle = {}): string {
  if ((year >= 2000 && year < 2010) || year < 1000 || year % 1000 === 0) return englishNumber(year, style);
  const low = year % 100;
  return `${englishNumber(Math.floor(year / 100))} ${low === 0 ? 'hundred' : low < 10 ? `oh ${ONES[low]}` : below100(low)}`;
}

/** Digits one by one ("one zero zero one"), the way ids and phone numbers are read. */
export function digitByDigit(digits: string): string {
  return [...digits].filter((c) => c >= '0' && c <= '9').map((c) => ONES[Number(c)]).join(' ');
}

/** A decimal number ("three point one four"); commas are thousands separators. */
export function decimalWords(raw: string, style: NumberStyle): string {
  const [int = '0', frac] = raw.replace(/,/g, '').split('.');
  const whole = englishNumber(Number(int), style);
  return frac ? `${whole} point ${digitByDigit(frac)}` : whole;
}
