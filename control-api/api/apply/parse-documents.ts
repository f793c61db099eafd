import { Lexer, parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { AppError, type FieldIssue } from '../../../core/errors.js';
import { HttpError, zodIssues } from '../../platform/http/error-response.js';
import { findJsonFlaw, flawMessage, jsonFlawIssue, MAX_JSON_DEPTH } from '../../platform/http/acceptable-json.js';

export const apiVersion = 'vap/v1';

/** One resource document: `{apiVersion: vap/v1, kind, tenant, spec}` (`tenant` absent on `Tenant`). */
export const envelopeSchema = z
  .object({
    apiVersion: z.literal(apiVersion, { error: `apiVersion must be "${apiVersion}"` }),
    kind: z.string({ error: 'kind must be a string' }).min(1, { error: 'kind is required' }),
    tenant: z.string({ error: 'tenant must be the client ID of a tenant' }).min(1, { error: 'tenant must not be empty' }).optional(),
    spec: z.record(z.string(), z.unknown(), { error: 'spec must be a mapping' }),
  })
  .strict();

export type Envelope = z.infer<typeof envelopeSchema>;

export interface SourceDocument {
  /** Position in the whole apply (0-based), used in every message about it. */
  readonly index: number;
  /** File name and document number within it, when the documents came from files. */
  readonly source?: string;
  readonly body: unknown;
}

export interface ParsedDocument {
  readonly index: number;
  readonly source?: string;
  readonly envelope: Envelope;
}

const limitDocuments = 5_000;

/**
 * The YAML parser recurses per flow level (`[[[...`): 100,000 levels cost it seconds of CPU before
 * it gives up. Its lexer is linear and tokenises exactly as the parser will (quotes, comments), so
 * the flow depth is counted there first and a stream nested deeper than any document may be is
 * refused before parsing. Block nesting is bounded by indentation within the body limit and is
 * checked with the rest once parsed (parseEnvelopes).
 */
function refuseDeepFlow(text: string, source?: string): void {
  let depth = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '[' || token === '{') depth += 1;
    else if (token === ']' || token === '}') depth = Math.max(0, depth - 1);
    if (depth > MAX_JSON_DEPTH) {
      const message = flawMessage('too deep', source ?? 'the YAML stream');
      throw new AppError('invalid_argument', message, { issues: [{ path: 'documents', message }] });
    }
  }
}

/**
 * Splits a multi-document YAML stream (`---` separated). YAML syntax errors name the line; empty
 * documents (a trailing `---`, a comment-only file) are skipped. JSON is YAML, so it parses too.
 */
export function splitYaml(text: string, source?: string, firstIndex = 0): SourceDocument[] {
  refuseDeepFlow(text, source);
  const documents = parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true });
  const out: SourceDocument[] = [];
  const list = Array.isArray(documents) ? documents : [documents];
  list.forEach((doc, n) => {
    const where = source ? `${source} document ${n + 1}` : `document ${n + 1}`;
    const error = doc.errors[0];
    if (error) {
      throw new AppError('malformed', `${where}: YAML error: ${error.message.split('\n')[0]}`, {
        issues: [{ path: `documents[${firstIndex + out.length}]`, message: error.message.split('\n')[0] ?? 'YAML error' }],
      });
    }
    let body: unknown;
    try {
      // A bounded alias count stops "billion laughs" documents from expanding in memory.
      body = doc.toJS({ maxAliasCount: 100 });
    } catch (cause) {
      throw new AppError('malformed', `${where}: ${(cause as Error).message}`, { issues: [{ path: `documents[${firstIndex + out.length}]`, message: (cause as Error).message }] });
    }
    if (body === null || body === undefined) return;
    out.push({ index: firstIndex + out.length, source: where, body });
  });
  if (firstIndex + out.length > limitDocuments) throw new HttpError(413, 'resource_exhausted', `an apply holds at most ${limitDocuments} documents`);
  return out;
}

/** A JSON apply body: one document, a list of them, or `{documents: [...]}`. */
export function jsonDocuments(body: unknown): SourceDocument[] {
  const list = Array.isArray(body)
    ? body
    : body !== null && typeof body === 'object' && Array.isArray((body as { documents?: unknown }).documents)
      ? (body as { documents: unknown[] }).documents
      : [body];
  if (list.length > limitDocuments) throw new HttpError(413, 'resource_exhausted', `an apply holds at most ${limitDocuments} documents`);
  return list.map((item, index) => ({ index, body: item }));
}

/** Checks every envelope and reports all problems at once, each path starting `documents[i]`. */
export function parseEnvelopes(documents: readonly SourceDocument[]): ParsedDocument[] {
  const issues: FieldIssue[] = [];
  const parsed: ParsedDocument[] = [];
  for (const doc of documents) {
    // PostgreSQL cannot store U+0000 or a lone surrogate: refused here for the API and the CLI alike.
    const flaw = findJsonFlaw(doc.body);
    if (flaw) {
      const issue = jsonFlawIssue(flaw, `documents[${doc.index}]`);
      issues.push({ ...issue, message: `${doc.source ?? `document ${doc.index}`}: ${issue.message}` });
      continue;
    }
    const result = envelopeSchema.safeParse(doc.body);
    if (!result.success) {
      issues.push(...zodIssues(result.error, `documents[${doc.index}]`).map((i) => ({ ...i, message: `${doc.source ?? `document ${doc.index}`}: ${i.message}` })));
      continue;
    }
    parsed.push({ index: doc.index, ...(doc.source ? { source: doc.source } : {}), envelope: result.data });
  }
  if (issues.length > 0) throw new AppError('invalid_argument', `invalid documents: ${issues[0]!.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`, { issues });
  if (parsed.length === 0) throw new AppError('invalid_argument', 'nothing to apply: no documents');
  return parsed;
}
