import type { InsightParameter } from '../../model/domain/insight-parameter.js';
import type { InsightValues, TranscriptLine } from '../calls/call-types.js';

/** Extracts a call's insight parameters from its transcript. */
export interface ExtractionRequest {
  readonly parameters: readonly InsightParameter[];
  readonly transcript: readonly TranscriptLine[];
  /** The call's date in the tenant's timezone (YYYY-MM-DD), so "tomorrow" resolves. */
  readonly today: string;
  readonly language?: string;
  /** The call's tenant, so an extractor can use the tenant's own model. */
  readonly tenantId?: string;
  readonly signal: AbortSignal;
}

export interface ExtractionResult {
  /** One entry per parameter; null where the transcript gave no valid value. */
  readonly values: InsightValues;
  /** Values the extractor produced but that did not fit their type (kept for diagnosis). */
  readonly issues: readonly string[];
}

export interface InsightExtractor {
  readonly name: string;
  /** Throws ProviderError (retryable or not) when the backend fails. */
  extract(request: ExtractionRequest): Promise<ExtractionResult>;
}
