import { AppError, type FieldIssue } from '../../../core/errors.js';
import { formatPath } from '../validation.js';

/**
 * What a parsed request body (JSON or YAML) must not hold, checked once where bodies enter:
 *
 * - Text PostgreSQL cannot store. `text` refuses U+0000 (SQLSTATE 22021) and `jsonb` refuses the
 *   `\u0000` escape (22P05); a lone UTF-16 surrogate has no UTF-8 form, so `jsonb` refuses its
 *   `\ud800` escape and `text` would silently get U+FFFD instead.
 * - Nesting deeper than any document of ours needs: schema validation, merge patch and
 *   serialisation all recurse, and 100,000 levels overflow the call stack (a 500 before).
 *
 * Either is a 400 naming the field, never a 500 from the database or the runtime.
 */
export type TextFlaw = 'U+0000' | 'lone surrogate';
export type JsonFlaw = TextFlaw | 'too deep';

/** Deepest container nesting accepted (the root object or array is level 1). */
export const MAX_JSON_DEPTH = 64;

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function textFlaw(text: string): TextFlaw | undefined {
  if (text.includes('\u0000')) return 'U+0000';
  if (loneSurrogate.test(text)) return 'lone surrogate';
  return undefined;
}

export function flawMessage(flaw: JsonFlaw, what = 'text'): string {
  if (flaw === 'too deep') return `${what} nests deeper than ${MAX_JSON_DEPTH} levels`;
  return flaw === 'U+0000' ? `${what} must not contain U+0000 (NUL)` : `${what} must be well-formed Unicode (it holds a lone UTF-16 surrogate)`;
}

export interface FoundFlaw {
  /** Path of the offending value; for a flawed key, the path of that key's entry. */
  readonly path: ReadonlyArray<string | number>;
  readonly flaw: JsonFlaw;
  readonly inKey: boolean;
}

/**
 * The first flaw in a parsed value, depth first. Walks with an explicit stack, so the walk itself
 * cannot overflow whatever the nesting.
 */
export function findJsonFlaw(value: unknown): FoundFlaw | undefined {
  const stack: Array<{ value: unknown; path: ReadonlyArray<string | number> }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: node, path } = stack.pop()!;
    if (typeof node === 'string') {
      const flaw = textFlaw(node);
      if (flaw) return { path, flaw, inKey: false };
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    if (path.length >= MAX_JSON_DEPTH) return { path, flaw: 'too deep', inKey: false };
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i -= 1) stack.push({ value: node[i], path: [...path, i] });
      continue;
    }
    const entries = Object.entries(node);
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [key, child] = entries[i]!;
      const flaw = textFlaw(key);
      if (flaw) return { path: [...path, key], flaw, inKey: true };
      stack.push({ value: child, path: [...path, key] });
    }
  }
  return undefined;
}

/** A name or path segment as shown in messages: U+0000 and surrogates escaped, never raw. */
export const printable = <T extends string | number>(segment: T): T =>
  (typeof segment === 'number' ? segment : segment.replaceAll('\u0000', '\\u0000').replace(/[\uD800-\uDFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)) as T;

/** The field issue for a flaw, with `prefix` in front of its path (`documents[0]`). */
export function jsonFlawIssue(found: FoundFlaw, prefix = ''): FieldIssue {
  const path = formatPath(found.path.map(printable), prefix);
  return { path, message: flawMessage(found.flaw, found.inKey ? 'a field name' : path || 'the body') };
}

/** Throws `invalid_argument` (issues and `meta.argument` name the field) for the first flaw. */
export function assertAcceptableJson(body: unknown, what = 'request body'): void {
  const found = findJsonFlaw(body);
  if (!found) return;
  const issue = jsonFlawIssue(found);
  throw new AppError('invalid_argument', `invalid ${what}: ${issue.message}`, { issues: [issue], meta: { argument: issue.path } });
}
