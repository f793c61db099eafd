import type { z } from 'zod';
import { invalidArgument, type FieldIssue } from '../../core/errors.js';

/** zod issues as the platform's field issues: dotted path + the schema's own precise message. */
export function toFieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
}

/**
 * Parses with `schema` or throws `invalid_argument` whose message is the first issue (so a
 * caller that shows one line still shows the precise reason) and whose issues list all of them.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = toFieldIssues(result.error);
  const first = issues[0];
  const where = first?.path ? `${first.path}: ` : '';
  return fail(what, first ? `${where}${first.message}` : 'invalid', issues);
}

function fail(what: string, detail: string, issues: FieldIssue[]): never {
  throw invalidArgument(`invalid ${what}: ${detail}`, issues);
}
