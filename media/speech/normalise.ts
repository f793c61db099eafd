import { normaliseDates, normaliseTimes, type DateStyle } from './english-dates.js';
import { decimalWords, digitByDigit, englishNumber, englishOrdinal, type NumberStyle } from './english-words.js';
import { markdownToSpeech } from './markdown.js';

export { englishNumber, englishOrdinal } from './english-words.js';

/**
 * Speech normalisation: numbers, currency, dates, times, ids, phone numbers and units into words
 * per language, so every TTS engine says "five hundred rupees" for "₹500" the same way. English
 * is complete (with American, British and Indian variants); Hindi has currency words; other
 * languages keep digits (engines read them natively). Markdown is always removed first: no
 * engine should say "hash" or "asterisk" for a heading or an emphasis a model wrote.
 */
export type NormalisationRule = 'numbers' | 'dates' | 'times' | 'currency' | 'units' | 'phoneNumbers' | 'ordinals';
export const allNormalisationRules: readonly NormalisationRule[] = ['phoneNumbers', 'dates', 'times', 'currency', 'ordinals', 'units', 'numbers'];

/** A number as written: thousands groups ("12,500", Indian "1,00,000"), an optional decimal part. */
const NUM = String.raw`\d{1,3}(?:,\d{2,3})+(?![\d,])(?:\.\d+)?|\d+(?:\.\d+)?`;

const CURRENCIES: Record<string, [string, string, string, string]> = {
  '₹': ['rupee', 'rupees', 'paisa', 'paise'],
  Rs: ['rupee', 'rupees', 'paisa', 'paise'],
  INR: ['rupee', 'rupees', 'paisa', 'paise'],
  $: ['dollar', 'dollars', 'cent', 'cents'],
  USD: ['dollar', 'dollars', 'cent', 'cents'],
  '€': ['euro', 'euros', 'cent', 'cents'],
  EUR: ['euro', 'euros', 'cent', 'cents'],
  '£': ['pound', 'pounds', 'penny', 'pence'],
  GBP: ['pound', 'pounds', 'penny', 'pence'],
  AED: ['dirham', 'dirhams', 'fils', 'fils'],
};
const SCALE_WORDS: Record<string, string> = { lakh: 'lakh', lakhs: 'lakh', crore: 'crore', crores: 'crore', thousand: 'thousand', k: 'thousand', million: 'million', billion: 'billion' };

const UNITS: Record<string, [string, string]> = {
  km: ['kilometre', 'kilometres'], kg: ['kilogram', 'kilograms'], g: ['gram', 'grams'], m: ['metre', 'metres'],
  cm: ['centimetre', 'centimetres'], mm: ['millimetre', 'millimetres'], l: ['litre', 'litres'], ml: ['millilitre', 'millilitres'],
  '%': ['percent', 'percent'], 'km/h': ['kilometre per hour', 'kilometres per hour'], GB: ['gigabyte', 'gigabytes'], MB: ['megabyte', 'megabytes'],
  min: ['minute', 'minutes'], hrs: ['hour', 'hours'], h: ['hour', 'hours'],
};

function money(symbol: string, amount: string, scale: string | undefined, style: NumberStyle): string {
  const names = CURRENCIES[symbol] ?? CURRENCIES.$!;
  // "₹5 lakh", "$1.5 million": the scale word belongs to the number, the currency comes last.
  if (scale) return `${decimalWords(amount, style)} ${SCALE_WORDS[scale.toLowerCase()]} ${names[1]}`;
  const [int = '0', frac] = amount.replace(/,/g, '').split('.');
  const whole = Number(int);
  const minor = frac ? Number(frac.padEnd(2, '0').slice(0, 2)) : 0;
  const minorWords = `${englishNumber(minor, style)} ${minor === 1 ? names[2] : names[3]}`;
  if (whole === 0 && minor > 0) return minorWords;
  const wholeWords = `${englishNumber(whole, style)} ${whole === 1 ? names[0] : names[1]}`;
  return minor > 0 ? `${wholeWords} and ${minorWords}` : wholeWords;
}

function normaliseCurrency(text: string, style: NumberStyle): string {
  const scales = String.raw`(?:\s?(lakhs?|crores?|thousand|million|billion|k)\b)?`;
  // "Rs. 500/-" is how Indian bills write a whole amount; the "/-" is not spoken.
  return text
    .replace(new RegExp(String.raw`(₹|\bRs\.?|\bINR|\bUSD|\bEUR|\bGBP|\bAED|\$|€|£)\s?(${NUM})${scales}(?:/-)?`, 'g'), (_all, sym: string, amount: string, scale: string | undefined) =>
      money(sym.replace('.', ''), amount, scale, style))
    .replace(new RegExp(String.raw`\b(${NUM})\s?(INR|USD|EUR|GBP|AED)\b`, 'g'), (_all, amount: string, code: string) => money(code, amount, undefined, style));
}

/** International (+...), North American, Indian mobile and STD-code landline forms, long digit runs. */
const PHONE = new RegExp(
  [
    String.raw`\+\d{1,3}(?:[\s.-]?\(?\d{1,5}\)?){2,6}`,
    String.raw`\(\d{3}\)\s?\d{3}[\s.-]\d{4}\b`,
    String.raw`\b(?:1-)?\d{3}[.-]\d{3}[.-]\d{4}\b`,
    String.raw`\b\d{5}[\s-]\d{5}\b`,
    String.raw`\b0\d{2,4}[\s-]\d{6,8}\b`,
    String.raw`\b\d{10,15}\b`,
  ].join('|'),
  'g',
);

function normalisePhoneNumbers(text: string): string {
  return text.replace(PHONE, (all) => {
    const digits = all.replace(/\D/g, '');
    if (digits.length < 7 || digits.length > 15) return all;
    return `${all.startsWith('+') ? 'plus ' : ''}${digitByDigit(digits)}`;
  });
}

/** Letters of an id one by one ("L N"), unless the run is long enough to be a word ("ORDER"). */
function spellId(id: string): string {
  return (id.match(/[A-Z]+|\d+/g) ?? []).map((run) => (/\d/.test(run) ? digitByDigit(run) : run.length <= 3 ? [...run].join(' ') : run)).join(' ');
}

const ID_CONTEXT = String.raw`\b((?:order|booking|ticket|invoice|tracking|policy|account|customer|reference)\s+(?:number|no\.?|id)|reference|ref\.?|PNR|ticket|invoice|ID)(\s*(?:#|:)?\s*)(\d[\d-]{2,}\d)\b`;

/**
 * Identifiers are read character by character: "LN-1001" -> "L N one zero zero one", "#1042",
 * "0042" (a leading zero is never an amount) and digits after "order number", "PNR", "ID"...
 * A token counts as an id when an upper-case letter comes before a digit, so "20GB" and "4G" stay
 * amounts with a unit.
 */
function normaliseIds(text: string): string {
  return text
    .replace(/(?<![\p{L}\p{N}_-])[A-Z0-9]+(?:[-/][A-Z0-9]+)*(?![\p{L}\p{N}_])/gu, (token) => (/[A-Z].*\d/.test(token) ? spellId(token) : token))
    .replace(new RegExp(ID_CONTEXT, 'gi'), (_all, label: string, gap: string, digits: string) => `${label}${gap.replace('#', '').replace(/\s+/g, ' ') || ' '}${digitByDigit(digits)}`)
    .replace(/(?<![\p{L}\p{N}])#(\d+)\b/gu, (_all, digits: string) => digitByDigit(digits))
    .replace(/(?<![\d,.])\b0\d{2,}\b(?!\.\d)/g, (digits) => digitByDigit(digits));
}

/** en-US (and bare "en", Canada, the Philippines) say "December third" and no "and" in numbers. */
function englishStyle(region: string): DateStyle {
  const northAmerican = region === '' || region === 'us' || region === 'ca' || region === 'ph';
  return { indian: region === 'in', and: !northAmerican, dayFirst: !northAmerican };
}

function normaliseEnglish(text: string, style: DateStyle, rules: ReadonlySet<NormalisationRule>): string {
  // Order matters: every rule consumes what a later, more general one would misread
  // (a date's digits are not a phone number, an amount's digits are not an id).
  let out = text;
  if (rules.has('dates')) out = normaliseDates(out, style);
  if (rules.has('times')) out = normaliseTimes(out);
  if (rules.has('currency')) out = normaliseCurrency(out, style);
  if (rules.has('phoneNumbers')) out = normalisePhoneNumbers(out);
  if (rules.has('numbers')) out = normaliseIds(out);
  if (rules.has('ordinals')) out = out.replace(/\b(\d+)(st|nd|rd|th)\b/g, (_all, n: string) => englishOrdinal(Number(n), style));
  if (rules.has('units')) {
    out = out.replace(new RegExp(String.raw`(${NUM})\s?(km/h|km|kg|cm|mm|ml|GB|MB|min|hrs|%|g|m|l|h)(?![\p{L}])`, 'gu'), (_all, n: string, unit: string) => {
      const names = UNITS[unit]!;
      return `${decimalWords(n, style)} ${Number(n.replace(/,/g, '')) === 1 ? names[0] : names[1]}`;
    });
  }
  // "4G" -> "four G": a number glued to a letter gets a space, or the engine reads "fourG".
  if (rules.has('numbers')) out = out.replace(new RegExp(`(?:${NUM})(\\p{L})?`, 'gu'), (n, letter: string | undefined) => (letter ? `${decimalWords(n.slice(0, -letter.length), style)} ${letter}` : decimalWords(n, style)));
  return out;
}

/**
 * Each of `strings` in the text, one character at a time: digits as English words in English
 * ("123456" -> "one two three four five six", never "one lakh ..."), spaced otherwise (the
 * engine then reads each digit). An id's value, whatever the rules would make of it.
 */
function spell(text: string, strings: readonly string[], english: boolean): string {
  let out = text;
  for (const s of [...strings].filter((v) => v.trim()).sort((a, b) => b.length - a.length)) {
    const escaped = s.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const spelled = [...s.trim()].filter((c) => c.trim()).map((c) => (english && c >= '0' && c <= '9' ? digitByDigit(c) : c)).join(' ');
    out = out.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'gu'), spelled);
  }
  return out;
}

/**
 * Normalises `text` for speech in `language` (BCP-47); only the given rules run. `spellOut`
 * strings (ids, order numbers) are read character by character before any rule.
 */
export function normaliseForSpeech(text: string, language: string, rules: readonly NormalisationRule[] = allNormalisationRules, spellOut: readonly string[] = []): string {
  const [lang = 'en', region = ''] = language.toLowerCase().split(/[-_]/);
  const plain = spell(markdownToSpeech(text), spellOut, lang === 'en');
  if (rules.length === 0) return plain;
  if (lang === 'en') return normaliseEnglish(plain, englishStyle(region), new Set(rules));
  if (lang === 'hi' && rules.includes('currency')) {
    // Currency words; espeak-ng's Hindi voice reads ASCII digit strings as numbers itself.
    return plain.replace(/(₹|Rs\.?)\s?(\d[\d,]*)/g, (_all, _s: string, n: string) => `${n.replace(/,/g, '')} रुपये`).replace(/[०-९]/g, (d) => String(d.charCodeAt(0) - 0x966));
  }
  return plain;
}
