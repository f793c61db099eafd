/** Messages between the Code block sandbox pool and its workers. */
export interface SandboxJob {
  readonly id: number;
  readonly source: string;
  readonly context: Readonly<Record<string, unknown>>;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly timeoutMs: number;
  readonly memoryLimitBytes: number;
  readonly now: number;
  readonly today: string;
}

export type SandboxReply =
  | { readonly id: number; readonly ok: true; readonly returned: unknown; readonly variables: Record<string, unknown>; readonly logs: readonly string[] }
  | { readonly id: number; readonly ok: false; readonly kind: 'syntax' | 'runtime' | 'timeout' | 'memory'; readonly error: string };
