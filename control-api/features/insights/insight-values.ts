import { insightValueSchema, maxInsightTextValueLength, type InsightParameter } from '../../model/domain/insight-parameter.js';
import { extractBoolean, extractDate, normalize } from '../../platform/llm/extract.js';
import type { InsightValue, InsightValues, TranscriptLine } from '../calls/call-types.js';

/**
 * Turning whatever an extractor produced into a value of the parameter's declared type (spec:
 * Text max 300 characters, Boolean, Number, Date in standard format, Enum from the options).
 * Forgiving about form ("true" for true, "15/03/2026" for a date, "Paid" for "paid"), strict about
 * meaning: a value that still does not fit becomes null with the reason, never a wrong value.
 */
export interface CoercedValue {
  readonly value: InsightValue | null;
  readonly issue?: string;
}

export function coerceInsightValue(parameter: InsightParameter, raw: unknown, today: string): CoercedValue {
  if (raw === null || raw === undefined || (typeof raw === 'string' && raw.trim() === '')) return { value: null };
  const candidate = candidateOf(parameter, raw, today);
  if (candidate === undefined) return { value: null, issue: `'${parameter.name}': ${JSON.stringify(raw).slice(0, 80)} is not a valid ${parameter.type} value` };
  const checked = insightValueSchema(parameter).safeParse(candidate);
  if (!checked.success) return { value: null, issue: checked.error.issues[0]?.message ?? `'${parameter.name}' is invalid` };
  return { value: checked.data };
}

function candidateOf(parameter: InsightParameter, raw: unknown, today: string): InsightValue | undefined {
  switch (parameter.type) {
    case 'text': {
      const text = (typeof raw === 'string' ? raw : JSON.stringify(raw)).trim();
      // Cut by code points, so a Devanagari or Arabic value is never split inside a surrogate pair.
      return [...text].slice(0, maxInsightTextValueLength).join('');
    }
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      return typeof raw === 'string' ? extractBoolean(raw.replace(/^false$/i, 'no').replace(/^true$/i, 'yes')) : undefined;
    case 'number': {
      if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
      if (typeof raw !== 'string') return undefined;
      const value = Number(raw.replace(/[,\s]/g, ''));
      return Number.isFinite(value) ? value : undefined;
    }
    case 'date': {
      if (typeof raw !== 'string') return undefined;
      const iso = /^(\d{4}-\d{2}-\d{2})(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(raw.trim());
      return iso?.[1] ?? extractDate(raw, today);
    }
    case 'enum': {
      const options = parameter.options ?? [];
      const said = normalize(String(raw));
      return options.find((o) => o === raw) ?? options.find((o) => normalize(o) === said);
    }
  }
}

/** Values as the `analysis_success` webhook and the report show them: strings, empty when unknown. */
export function insightText(value: InsightValue | null | undefined): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : String(value);
}

export function userDefined(parameters: readonly InsightParameter[], values: InsightValues): Record<string, string> {
  return Object.fromEntries(parameters.map((p) => [p.name, insightText(values[p.name])]));
}

/** The transcript as a model (or a person) reads it, with Smart Interruption cuts marked. */
export function transcriptText(lines: readonly TranscriptLine[]): string {
  return lines
    .map((line) => {
      const who = line.speaker === 'agent' ? 'Agent' : 'Caller';
      const dtmf = line.dtmf ? ' (keypad)' : '';
      const cut = line.interrupted ? ` [Interrupted${line.unspoken ? `; not spoken: "${line.unspoken}"` : ''}]` : '';
      // Words the flow did not act on are evidence of what was said, not of what was answered.
      const ignored = line.ignored ? ' [not taken as an answer]' : '';
      return `${who}${dtmf}: ${line.text}${cut}${ignored}`;
    })
    .join('\n');
}
