import assert from 'node:assert/strict';
import type { z } from 'zod';

/** "path: message" of every issue, so a test states the exact rejection it expects. */
export function issuesOf(schema: z.ZodType, input: unknown): string[] {
  const result = schema.safeParse(input);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

export function accepts(schema: z.ZodType, input: unknown): void {
  assert.deepEqual(issuesOf(schema, input), []);
}

export function rejectsWith(schema: z.ZodType, input: unknown, expected: string): void {
  assert.deepEqual(issuesOf(schema, input), [expected]);
}
