import { englishNumber, englishOrdinal, ONES, yearWords, type NumberStyle } from './english-words.js';

/**
 * Dates and clock times in spoken English. The order of day and month follows the variety:
 * American English says "December third, twenty twenty-six", British and Indian English "the
 * third of December twenty twenty-six". The year is spoken whenever the text writes one (the
 * normaliser has no clock, so it cannot tell "this year" from another and never drops it).
 */
export interface DateStyle extends NumberStyle {
  /** "the third of December" (true) or "December third" (false). */
  readonly dayFirst: boolean;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const MONTH_NAMES = String.raw`(Jan(?:uary|\.)?|Feb(?:ruary|\.)?|Mar(?:ch|\.)?|Apr(?:il|\.)?|May|June?|July?|Aug(?:ust|\.)?|Sep(?:t(?:ember|\.)?|\.)?|Oct(?:ober|\.)?|Nov(?:ember|\.)?|Dec(?:ember|\.)?)`;

function monthIndex(name: string): number {
  return MONTHS.findIndex((m) => m.slice(0, 3) === name.slice(0, 3));
}

function validDay(year: number | undefined, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year === undefined || (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0));
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

/** `before` is the text up to the date, so "on the 2026-12-03" does not become "the the third". */
function spokenDate(month: number, day: number, year: number | undefined, style: DateStyle, before: string): string {
  const name = MONTHS[month - 1]!;
  if (style.dayFirst) {
    const article = /\bthe\s*$/i.test(before) ? '' : 'the ';
    return `${article}${englishOrdinal(day)} of ${name}${year === undefined ? '' : ` ${yearWords(year, style)}`}`;
  }
  return `${name} ${englishOrdinal(day)}${year === undefined ? '' : `, ${yearWords(year, style)}`}`;
}

export function normaliseDates(text: string, style: DateStyle): string {
  // ISO 8601 calendar dates (what APIs and templates produce).
  let out = text.replace(/\b(\d{4})-(\d{2})-(\d{2})\b/g, (all, y: string, m: string, d: string, at: number, whole: string) =>
    validDay(Number(y), Number(m), Number(d)) ? spokenDate(Number(m), Number(d), Number(y), style, whole.slice(0, at)) : all);
  // 03/12/2026 or 03.12.2026: day first outside the US; a first part above 12 can only be the day.
  out = out.replace(/\b(\d{1,2})([/.])(\d{1,2})\2(\d{4})\b/g, (all, a: string, _sep: string, b: string, y: string, at: number, whole: string) => {
    const [first, second, year] = [Number(a), Number(b), Number(y)];
    const dayFirst = first > 12 ? true : second > 12 ? false : style.dayFirst;
    const [day, month] = dayFirst ? [first, second] : [second, first];
    return validDay(year, month, day) ? spokenDate(month, day, year, style, whole.slice(0, at)) : all;
  });
  // "December 3, 2026", "Dec 3rd": month name first.
  out = out.replace(new RegExp(String.raw`\b${MONTH_NAMES}\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?`, 'g'), (all, m: string, d: string, y: string | undefined, at: number, whole: string) => {
    const month = monthIndex(m) + 1;
    const year = y === undefined ? undefined : Number(y);
    return validDay(year, month, Number(d)) ? spokenDate(month, Number(d), year, style, whole.slice(0, at)) : all;
  });
  // "3 December 2026", "3rd of Dec".
  out = out.replace(new RegExp(String.raw`\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?${MONTH_NAMES}(?![\p{L}])(?:,?\s+(\d{4})\b)?`, 'gu'), (all, d: string, m: string, y: string | undefined, at: number, whole: string) => {
    const month = monthIndex(m) + 1;
    const year = y === undefined ? undefined : Number(y);
    return validDay(year, month, Number(d)) ? spokenDate(month, Number(d), year, style, whole.slice(0, at)) : all;
  });
  return out;
}

function minutesWords(m: number): string {
  if (m === 0) return '';
  return m < 10 ? ` oh ${ONES[m]}` : ` ${englishNumber(m)}`;
}

/**
 * Clock times. With a.m./p.m. written: "11 AM" -> "eleven A M" (letters, so no engine reads
 * "am" as the verb). 24-hour times are said the 12-hour way: "14:00" -> "two P M", "00:30" ->
 * "twelve thirty A M", "09:15" (the leading zero marks the 24-hour clock) -> "nine fifteen A M";
 * other times keep the hour as written: "10:30" -> "ten thirty", "10:00" -> "ten o'clock",
 * "12:00" -> "twelve noon".
 */
export function normaliseTimes(text: string): string {
  let out = text.replace(/\b(\d{1,2})(?:[:.]([0-5]\d))?\s?([AaPp])(?:\.\s?[Mm]\b\.?|\s?[Mm]\b)/g, (all, h: string, m: string | undefined, ap: string, at: number, whole: string) => {
    const hour = Number(h);
    if (hour < 1 || hour > 12) return all;
    // "at 11 a.m." ends the sentence: keep its full stop.
    const end = all.endsWith('.') && /^\s*$|^\s+\p{Lu}/u.test(whole.slice(at + all.length)) ? '.' : '';
    return `${englishNumber(hour)}${minutesWords(Number(m ?? 0))} ${ap.toUpperCase()} M${end}`;
  });
  out = out.replace(/\b([01]?\d|2[0-3]):([0-5]\d)\b(?!:\d)(?:\s?(?:hrs|hours)\b)?/g, (_all, h: string, m: string) => {
    const hour = Number(h);
    const minute = Number(m);
    if (hour > 12) return `${englishNumber(hour - 12)}${minutesWords(minute)} P M`;
    if (hour === 0) return `twelve${minutesWords(minute)} A M`;
    if (h.length === 2 && h.startsWith('0')) return `${englishNumber(hour)}${minutesWords(minute)} A M`;
    if (minute === 0) return hour === 12 ? 'twelve noon' : `${englishNumber(hour)} o'clock`;
    return `${englishNumber(hour)}${minutesWords(minute)}`;
  });
  return out;
}
