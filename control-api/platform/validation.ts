import type { z } from 'zod';
import { invalidArgument, type FieldIssue } from '../../core/errors.js';

/** Dotted path as the docs write it: `settings.retries[0].after` (`prefix` goes in front). */
export function formatPath(path: readonly PropertyKey[], prefix = ''): string {
  let out = prefix;
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

/**
 * zod issues as the platform's field issues: one per offending field, with its path and the
 * schema's own precise message. Two zod messages are rewritten because they would not make
 * sense to an API caller: an unknown key becomes one issue on that key ("unknown field"), and a
 * missing field ("expected string, received undefined", or a custom "must be a string") says it
 * is required. The latter needs the issue's input: parse with `{ reportInput: true }`.
 */
export function toFieldIssues(error: z.ZodError, prefix = ''): FieldIssue[] {
  return error.issues.flatMap((issue): FieldIssue[] => {
    if (issue.code === 'unrecognized_keys') {
      const variant = variantOf((issue as { input?: unknown }).input);
      return issue.keys.map((key) => {
        const path = formatPath([...issue.path, key], prefix);
        return { path, message: `${formatPath([...issue.path, key])} is not a known field${variant} (check its spelling)` };
      });
    }
    const path = formatPath(issue.path, prefix);
    if (issue.code === 'invalid_type' && 'input' in issue && issue.input === undefined && issue.path.length > 0) {
      return [{ path, message: `${formatPath(issue.path)} is required` }];
    }
    return [{ path, message: issue.message }];
  });
}

// Unions in the schemas are told apart by one of these fields; naming it helps when a field is
// valid for another variant (a provider's `authToken` sent with `type: providerB`).
const discriminators = ['type', 'mode', 'scheme'] as const;

function variantOf(input: unknown): string {
  if (typeof input !== 'object' || input === null) return '';
  for (const field of discriminators) {
    const value = (input as Record<string, unknown>)[field];
    if (typeof value === 'string') return ` for ${field} '${value}'`;
  }
  return '';
}

/** `schema.safeParse` that keeps each issue's input, so `toFieldIssues` can tell "missing" apart. */
export function safeParseReporting<S extends z.ZodType>(schema: S, input: unknown): z.ZodSafeParseResult<z.output<S>> {
  return schema.safeParse(input, { reportInput: true });
}

/**
 * Parses with `schema` or throws `invalid_argument` whose message is the first issue (so a
 * caller that shows one line still shows the precise reason) and whose issues list all of them.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = safeParseReporting(schema, input);
  if (result.success) return result.data;
  const issues = toFieldIssues(result.error);
  const first = issues[0];
  const where = first?.path && !first.message.startsWith(first.path) ? `${first.path}: ` : '';
  return fail(what, first ? `${where}${first.message}` : 'invalid', issues);
}

function fail(what: string, detail: string, issues: FieldIssue[]): never {
  throw invalidArgument(`invalid ${what}: ${detail}`, issues);
}
