import { counter, histogram } from '../../../core/metrics.js';

/**
 * Language-model latency and errors by provider kind (`openai-compatible`; the model name is left
 * out: tenants choose it freely, and label values must stay few). A request is one `chat` call,
 * retries included, as the caller waits for it; aborted requests (barge-in, hang-up) count as neither.
 */
const latency = histogram('llm_latency_seconds', 'Language model: from the request to the whole answer (retries included), by provider', ['provider'], [0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60]);
const firstToken = histogram('llm_first_token_seconds', 'Language model, streamed answers: from the request to the first text, by provider', ['provider'], [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15]);
const errors = counter('llm_errors_total', 'Language model requests that failed after their retries, by provider', ['provider']);

export interface LlmTiming {
  /** The first streamed text arrived. */
  firstText(): void;
  succeeded(): void;
  failed(aborted: boolean): void;
}

export function timeLlmRequest(provider: string): LlmTiming {
  const start = performance.now();
  const seconds = (): number => (performance.now() - start) / 1000;
  let first = true;
  return {
    firstText() {
      if (!first) return;
      first = false;
      firstToken.observe({ provider }, seconds());
    },
    succeeded() {
      latency.observe({ provider }, seconds());
    },
    failed(aborted) {
      if (!aborted) errors.inc({ provider });
    },
  };
}
