import type { InsightParameter } from '../../model/domain/insight-parameter.js';
import { extractValue, tokens } from '../../platform/llm/extract.js';
import type { InsightValue, TranscriptLine } from '../calls/call-types.js';
import type { ExtractionRequest, ExtractionResult, InsightExtractor } from './insight-extractor.js';
import { coerceInsightValue } from './insight-values.js';

/**
 * The extractor that needs no model: for each parameter it finds the agent line that asked
 * about it (keyword overlap with the parameter's name and description) and reads the value from
 * the caller's answer with the same typed extraction the offline agent uses. Number, Date and
 * Enum fall back to the first mention anywhere the caller spoke; a "summary"-like Text parameter
 * gets the caller's own words. It cannot paraphrase or infer (see docs/insights.md).
 */
const stop = new Set(['the', 'and', 'for', 'with', 'did', 'does', 'was', 'were', 'what', 'which', 'when', 'caller', 'customer', 'user', 'call', 'agent', 'they', 'their', 'you', 'your', 'is', 'are', 'any', 'about', 'has', 'have']);
const summaryWords = ['summary', 'summarise', 'summarize', 'notes', 'feedback', 'comment', 'comments', 'remarks'];

export class OfflineInsightExtractor implements InsightExtractor {
  readonly name = 'offline';

  async extract(request: ExtractionRequest): Promise<ExtractionResult> {
    const values: Record<string, InsightValue | null> = {};
    const issues: string[] = [];
    for (const parameter of request.parameters) {
      const coerced = coerceInsightValue(parameter, this.raw(parameter, request.transcript, request.today), request.today);
      values[parameter.name] = coerced.value;
      if (coerced.issue) issues.push(coerced.issue);
    }
    return { values, issues };
  }

  private raw(parameter: InsightParameter, transcript: readonly TranscriptLine[], today: string): InsightValue | undefined {
    const spec = { kind: parameter.type, options: parameter.options };
    const answer = answerTo(parameter, transcript);
    if (answer !== undefined) {
      const value = extractValue(spec, answer, today);
      if (value !== undefined) return value;
    }
    const callerLines = transcript.filter((l) => l.speaker === 'caller' && !l.dtmf).map((l) => l.text);
    if (parameter.type === 'number' || parameter.type === 'date' || parameter.type === 'enum') {
      for (const line of callerLines) {
        const value = extractValue(spec, line, today);
        if (value !== undefined) return value;
      }
    }
    if (parameter.type === 'text' && keywordsOf(parameter).some((k) => summaryWords.includes(k))) {
      return callerLines.join(' ').trim() || undefined;
    }
    return undefined;
  }
}

function keywordsOf(parameter: InsightParameter): string[] {
  const name = parameter.name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/_/g, ' ');
  return [...new Set(tokens(`${name} ${parameter.description}`).filter((w) => w.length >= 3 && !stop.has(w)))];
}

/** What the caller said right after the agent line that best matches the parameter. */
function answerTo(parameter: InsightParameter, transcript: readonly TranscriptLine[]): string | undefined {
  const keywords = keywordsOf(parameter);
  let best: { index: number; score: number } | undefined;
  transcript.forEach((line, index) => {
    if (line.speaker !== 'agent') return;
    const words = tokens(line.text);
    const score = keywords.filter((k) => words.some((w) => sameStem(w, k))).length;
    if (score > 0 && (!best || score >= best.score)) best = { index, score };
  });
  if (!best) return undefined;
  const replies: string[] = [];
  for (const line of transcript.slice(best.index + 1)) {
    if (line.speaker === 'agent') break;
    replies.push(line.text);
  }
  return replies.length > 0 ? replies.join(' ') : undefined;
}

function sameStem(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return long.startsWith(short) && short.length >= Math.min(4, long.length);
}
