import type { Logger } from '../../../../core/logger.js';
import type { AgentEngine } from '../../../platform/llm/agent-engine.js';
import type { OutboundHttp, WebhookSender } from '../../../platform/net/outbound-http.js';

/**
 * What blocks need from the rest of the platform, injected so blocks stay unit-testable with
 * fakes and the runtime does not depend on tables owned by other parts.
 */
export interface KnowledgePassage {
  readonly documentId: string;
  readonly title: string;
  /** Headings above the passage ("Orders > Refunds"), kept out of `text`. */
  readonly section?: string;
  /** Plain sentences, markdown removed: safe to speak and to put in a prompt. */
  readonly text: string;
  readonly rank: number;
}

export interface KnowledgeSearch {
  /** Full-text search over the tenant's documents; empty `tags` means the whole library. */
  search(tenantId: string, query: string, tags: readonly string[], limit: number): Promise<readonly KnowledgePassage[]>;
  /**
   * The words the library's passages use most (function words left out), most frequent first:
   * what a caller's question can be heard as when the recogniser only knows expected words.
   */
  vocabulary?(tenantId: string, tags: readonly string[], limit: number): Promise<readonly string[]>;
}

export type AuthProfile =
  | { readonly type: 'basic'; readonly username: string; readonly password: string }
  | { readonly type: 'bearer'; readonly token: string }
  | { readonly type: 'apiKey'; readonly in: 'header' | 'query'; readonly name: string; readonly value: string };

export interface AuthProfileResolver {
  resolve(tenantId: string, name: string): Promise<AuthProfile | undefined>;
}

export interface CodeRunRequest {
  readonly source: string;
  readonly context: Readonly<Record<string, unknown>>;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** The run's clock (ms since epoch) and the caller's local date: the date plugin reads these, never the host clock. */
  readonly now: number;
  readonly today: string;
}

export type CodeRunResult =
  | { readonly ok: true; readonly variables: Record<string, unknown>; readonly returned: unknown; readonly logs: readonly string[] }
  | { readonly ok: false; readonly error: string; readonly kind: 'syntax' | 'runtime' | 'timeout' | 'memory' | 'cancelled' };

export interface CodeRunner {
  run(request: CodeRunRequest): Promise<CodeRunResult>;
}

export interface RuntimeServices {
  readonly engine: AgentEngine;
  readonly http: OutboundHttp;
  readonly code: CodeRunner;
  readonly webhooks: WebhookSender;
  readonly knowledge?: KnowledgeSearch;
  readonly authProfiles?: AuthProfileResolver;
  readonly logger: Logger;
  /** How long a conversational block waits for speech before treating it as silence. */
  readonly silenceTimeoutMs: number;
}
