/**
 * Speech normalisation: numbers, currency, dates, times and units into words per language, so
 * every TTS engine says "five hundred rupees" for "₹500" the same way. English is complete;
 * Hindi has numbers and currency words; other languages keep digits (engines read them natively).
 */
const ONES = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const ORDINAL_IRREGULAR: Record<string, string> = { one: 'first', two: 'second', three: 'third', five: 'fifth', eight: 'eighth', nine: 'ninth', twelve: 'twelfth' };
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

function below1000(n: number): string {
  const parts: string[] = [];
  if (n >= 100) {
    parts.push(`${ONES[Math.floor(n / 100)]} hundred`);
    n %= 100;
  }
  if (n >= 20) parts.push(TENS[Math.floor(n / 10)]! + (n % 10 ? `-${ONES[n % 10]}` : ''));
  else if (n > 0 || parts.length === 0) parts.push(ONES[n]!);
  return parts.join(' ');
}

/** English cardinal; Indian English groups by lakh and crore (spec: Indian callers). */
export function englishNumber(n: number, indian = false): string {
  if (!Number.isFinite(n)) return String(n);
  if (n < 0) return `minus ${englishNumber(-n, indian)}`;
  n = Math.floor(n);
  if (n < 1000) return below1000(n);
  const scales: [number, string][] = indian
    ? [[10_000_000, 'crore'], [100_000, 'lakh'], [1000, 'thousand']]
    : [[1_000_000_000_000, 'trillion'], [1_000_000_000, 'billion'], [1_000_000, 'million'], [1000, 'thousand']];
  const parts: string[] = [];
  for (const [value, name] of scales) {
    if (n >= value) {
      parts.push(`${englishNumber(Math.floor(n / value), indian)} ${name}`);
      n %= value;
    }
  }
  if (n > 0) parts.push(below1000(n));
  return parts.join(' ');
}

export function englishOrdinal(n: number): string {
  const words = englishNumber(n);
  const m = /(\w+)$/.exec(words);
  const last = m?.[1] ?? words;
  const head = words.slice(0, words.length - last.length);
  if (ORDINAL_IRREGULAR[last]) return head + ORDINAL_IRREGULAR[last];
  if (last.endsWith('y')) return `${head}${last.slice(0, -1)}ieth`;
  return `${words}th`;
}

function decimal(raw: string, indian: boolean): string {
  const [int = '0', frac] = raw.replace(/,/g, '').split('.');
  const whole = englishNumber(Number(int), indian);
  if (!frac) return whole;
  return `${whole} point ${[...frac].map((d) => ONES[Number(d)]).join(' ')}`;
}

const CURRENCIES: Record<string, [string, string, string, string]> = {
  '₹': ['rupee', 'rupees', 'paisa', 'paise'],
  Rs: ['rupee', 'rupees', 'paisa', 'paise'],
  INR: ['rupee', 'rupees', 'paisa', 'paise'],
  $: ['dollar', 'dollars', 'cent', 'cents'],
  USD: ['dollar', 'dollars', 'cent', 'cents'],
  '€': ['euro', 'euros', 'cent', 'cents'],
  '£': ['pound', 'pounds', 'penny', 'pence'],
  AED: ['dirham', 'dirhams', 'fils', 'fils'],
};

const UNITS: Record<string, [string, string]> = {
  km: ['kilometre', 'kilometres'], kg: ['kilogram', 'kilograms'], g: ['gram', 'grams'], m: ['metre', 'metres'],
  cm: ['centimetre', 'centimetres'], mm: ['millimetre', 'millimetres'], l: ['litre', 'litres'], ml: ['millilitre', 'millilitres'],
  '%': ['percent', 'percent'], 'km/h': ['kilometre per hour', 'kilometres per hour'], GB: ['gigabyte', 'gigabytes'], MB: ['megabyte', 'megabytes'],
  min: ['minute', 'minutes'], hrs: ['hour', 'hours'], h: ['hour', 'hours'],
};

function money(symbol: string, amount: string, indian: boolean): string {
  const names = CURRENCIES[symbol] ?? CURRENCIES.$!;
  const [int = '0', frac] = amount.replace(/,/g, '').split('.');
  const whole = Number(int);
  let out = `${englishNumber(whole, indian)} ${whole === 1 ? names[0] : names[1]}`;
  const minor = frac ? Number(frac.padEnd(2, '0').slice(0, 2)) : 0;
  if (minor > 0) out += ` and ${englishNumber(minor)} ${minor === 1 ? names[2] : names[3]}`;
  return out;
}

export type NormalisationRule = 'numbers' | 'dates' | 'times' | 'currency' | 'units' | 'phoneNumbers' | 'ordinals';
export const allNormalisationRules: readonly NormalisationRule[] = ['phoneNumbers', 'dates', 'times', 'currency', 'ordinals', 'units', 'numbers'];

function yearWords(year: number): string {
  if (year >= 2000 && year < 2010) return englishNumber(year);
  const low = year % 100;
  return `${englishNumber(Math.floor(year / 100))} ${low === 0 ? 'hundred' : low < 10 ? `oh ${englishNumber(low)}` : englishNumber(low)}`;
}

function normaliseEnglish(text: string, indian: boolean, rules: ReadonlySet<NormalisationRule>): string {
  const num = String.raw`\d[\d,]*(?:\.\d+)?`;
  let out = text;
  if (rules.has('phoneNumbers')) {
    // +91 98450 12345 -> digit by digit, the way people read phone numbers.
    out = out.replace(/\+\d[\d ]{8,}\d|\b\d{10,}\b/g, (all) =>
      [...all.replace(/ /g, '')].map((c) => (c === '+' ? 'plus' : ONES[Number(c)])).join(' '));
  }
  if (rules.has('dates')) {
    out = out.replace(/\b(\d{4})-(\d{2})-(\d{2})\b/g, (all, y: string, m: string, d: string) => {
      const month = MONTHS[Number(m) - 1];
      if (!month || Number(d) < 1 || Number(d) > 31) return all;
      return `${month} ${englishOrdinal(Number(d))}, ${yearWords(Number(y))}`;
    });
  }
  if (rules.has('times')) {
    out = out.replace(/\b(\d{1,2}):(\d{2})\b/g, (_all, h: string, m: string) =>
      Number(m) === 0 ? `${englishNumber(Number(h))} ${Number(h) > 12 ? 'hundred' : "o'clock"}` : `${englishNumber(Number(h))} ${Number(m) < 10 ? 'oh ' : ''}${englishNumber(Number(m))}`);
  }
  if (rules.has('currency')) {
    out = out.replace(new RegExp(String.raw`(₹|Rs\.?|INR|USD|AED|\$|€|£)\s?(${num})`, 'g'), (_all, sym: string, amount: string) => money(sym.replace('.', ''), amount, indian));
  }
  if (rules.has('ordinals')) out = out.replace(/\b(\d+)(st|nd|rd|th)\b/g, (_all, n: string) => englishOrdinal(Number(n)));
  if (rules.has('units')) {
    out = out.replace(new RegExp(String.raw`(${num})\s?(km/h|km|kg|cm|mm|ml|GB|MB|min|hrs|%|g|m|l|h)(?![\p{L}])`, 'gu'), (_all, n: string, unit: string) => {
      const names = UNITS[unit]!;
      return `${decimal(n, indian)} ${Number(n.replace(/,/g, '')) === 1 ? names[0] : names[1]}`;
    });
  }
  if (rules.has('numbers')) out = out.replace(new RegExp(num, 'g'), (n) => decimal(n, indian));
  return out;
}

/** Normalises `text` for speech in `language` (BCP-47). */
export function normaliseForSpeech(text: string, language: string, rules: readonly NormalisationRule[] = allNormalisationRules): string {
  if (rules.length === 0) return text;
  const [lang = 'en', region = ''] = language.toLowerCase().split(/[-_]/);
  if (lang === 'en') return normaliseEnglish(text, region === 'in', new Set(rules));
  if (lang === 'hi' && rules.includes('currency')) {
    // Currency words; espeak-ng's Hindi voice reads ASCII digit strings as numbers itself.
    return text.replace(/(₹|Rs\.?)\s?(\d[\d,]*)/g, (_all, _s: string, n: string) => `${n.replace(/,/g, '')} रुपये`).replace(/[०-९]/g, (d) => String(d.charCodeAt(0) - 0x966));
  }
  return text;
}
