import type { Kysely } from 'kysely';
import { z } from 'zod';
import { AppError, type FieldIssue } from '../../../core/errors.js';
import type { Database } from '../../platform/store/schema.js';
import { safeParseReporting } from '../../platform/validation.js';
import { toAppError, zodIssues } from '../../platform/http/error-response.js';
import { orderKinds, type ApplyKind } from './apply-kinds.js';
import type { ParsedDocument } from './parse-documents.js';

export const applyActions = ['created', 'updated', 'unchanged'] as const;

export const applyResultSchema = z.object({
  index: z.number().int(),
  source: z.string().optional(),
  kind: z.string(),
  tenant: z.string().optional(),
  key: z.string(),
  action: z.enum(applyActions),
  /** Absent for a creation in a dry run (nothing was written). */
  id: z.string().optional(),
});

export const applyReportSchema = z.object({
  dryRun: z.boolean(),
  changed: z.boolean(),
  summary: z.object({ created: z.number().int(), updated: z.number().int(), unchanged: z.number().int() }),
  results: z.array(applyResultSchema),
});

export type ApplyResult = z.infer<typeof applyResultSchema>;
export type ApplyReport = z.infer<typeof applyReportSchema>;

export interface ApplyScope {
  /** When set, every document must belong to this tenant (a tenant token's apply). */
  readonly onlyTenantId?: string;
}

export interface ApplyOptions {
  readonly dryRun: boolean;
  readonly scope?: ApplyScope;
  /** Told after each document (`done` of `total`), so a CLI can show progress on a large set. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** Resolves a client ID to a tenant id; the Tenant kind's own `find` is the natural choice. */
export type TenantLookup = (db: Kysely<Database>, clientId: string) => Promise<string | undefined>;

class DryRunRollback extends Error {
  constructor(readonly report: ApplyReport) {
    super('dry run: rolled back');
  }
}

interface Planned {
  readonly doc: ParsedDocument;
  readonly kind: ApplyKind;
  readonly spec: unknown;
  readonly key: string;
}

// Named by the same 0-based index as the issue paths (`documents[3]`); the source says where it came from.
const describe = (p: Pick<Planned, 'doc' | 'key'>): string =>
  `documents[${p.doc.index}] (${p.doc.envelope.kind} "${p.key}"${p.doc.envelope.tenant ? ` of tenant "${p.doc.envelope.tenant}"` : ''}${p.doc.source ? `, ${p.doc.source}` : ''})`;

/** Validates every spec against its kind and rejects duplicates; all problems reported together. */
function plan(documents: readonly ParsedDocument[], kinds: readonly ApplyKind[], scope: ApplyScope | undefined): Planned[] {
  const byKind = new Map(kinds.map((k) => [k.kind, k]));
  const issues: FieldIssue[] = [];
  const forbidden: FieldIssue[] = [];
  const planned: Planned[] = [];
  const seen = new Map<string, number>();
  for (const doc of documents) {
    const { envelope } = doc;
    const at = `documents[${doc.index}]`;
    const kind = byKind.get(envelope.kind);
    if (!kind) {
      issues.push({ path: `${at}.kind`, message: `unknown kind "${envelope.kind}" (known: ${kinds.map((k) => k.kind).join(', ')})` });
      continue;
    }
    if (kind.tenantScoped && !envelope.tenant) {
      issues.push({ path: `${at}.tenant`, message: `${envelope.kind} documents need "tenant: <clientId>"` });
      continue;
    }
    if (!kind.tenantScoped && envelope.tenant) {
      issues.push({ path: `${at}.tenant`, message: `${envelope.kind} documents are not inside a tenant: remove "tenant"` });
      continue;
    }
    if (!kind.tenantScoped && scope?.onlyTenantId) {
      forbidden.push({ path: `${at}.kind`, message: `only the operator credential may apply ${envelope.kind} documents` });
      continue;
    }
    const result = safeParseReporting(kind.schema, envelope.spec);
    if (!result.success) {
      issues.push(...zodIssues(result.error, `${at}.spec`));
      continue;
    }
    const key = kind.naturalKey(result.data);
    const identity = `${envelope.kind}\u0000${envelope.tenant ?? ''}\u0000${key}`;
    const first = seen.get(identity);
    if (first !== undefined) {
      issues.push({ path: at, message: `${envelope.kind} "${key}" appears twice (also document ${first})` });
      continue;
    }
    seen.set(identity, doc.index);
    planned.push({ doc, kind, spec: result.data, key });
  }
  // The credential, not the documents, is what is wrong: 403 as for the same action through the API.
  if (forbidden.length > 0) {
    throw new AppError('permission_denied', `${forbidden[0]!.path}: ${forbidden[0]!.message}`, { issues: forbidden });
  }
  if (issues.length > 0) {
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    throw new AppError('invalid_argument', `invalid documents: ${issues[0]!.path}: ${issues[0]!.message}${more}`, { issues });
  }
  const order = orderKinds(kinds);
  return planned.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind) || a.doc.index - b.doc.index);
}

/** Re-raises a repository error with the document it came from, keeping its code and status. */
function inDocument(error: unknown, p: Planned): AppError {
  const e = toAppError(error);
  const issues = e.issues.map((i) => ({ path: `documents[${p.doc.index}].spec${i.path ? `.${i.path}` : ''}`, message: i.message }));
  return new AppError(e.code, `${describe(p)}: ${e.message}`, {
    issues: issues.length > 0 ? issues : [{ path: `documents[${p.doc.index}]`, message: e.message }],
    retryable: e.retryable,
    cause: error,
  });
}

/**
 * Applies documents idempotently in one transaction (all or nothing): each is matched by natural
 * key and created, updated, or left alone when `isUnchanged`. A dry run does exactly the same work
 * and rolls it back, so it reports what a real run would, including references between documents.
 */
export async function applyDocuments(
  db: Kysely<Database>,
  kinds: readonly ApplyKind[],
  findTenant: TenantLookup,
  documents: readonly ParsedDocument[],
  options: ApplyOptions,
): Promise<ApplyReport> {
  const planned = plan(documents, kinds, options.scope);
  const run = async (trx: Kysely<Database>): Promise<ApplyReport> => {
    const results: ApplyResult[] = [];
    const tenantIds = new Map<string, string>();
    for (const p of planned) {
      const clientId = p.doc.envelope.tenant;
      let tenantId: string | undefined;
      if (clientId) {
        tenantId = tenantIds.get(clientId) ?? (await findTenant(trx, clientId));
        if (!tenantId || (options.scope?.onlyTenantId && tenantId !== options.scope.onlyTenantId)) {
          throw inDocument(new AppError('not_found', `tenant "${clientId}" not found (apply a Tenant document first or in the same run)`), p);
        }
        tenantIds.set(clientId, tenantId);
      }
      try {
        const stored = await p.kind.find(trx, tenantId, p.key);
        let action: ApplyResult['action'];
        let id: string | undefined;
        if (!stored) {
          const created = await p.kind.create(trx, tenantId, p.spec);
          action = 'created';
          id = options.dryRun ? undefined : created.id;
        } else if (await p.kind.isUnchanged(trx, stored, p.spec)) {
          action = 'unchanged';
          id = stored.id;
        } else {
          await p.kind.update(trx, tenantId, stored.id, p.spec);
          action = 'updated';
          id = stored.id;
        }
        results.push({
          index: p.doc.index,
          ...(p.doc.source ? { source: p.doc.source } : {}),
          kind: p.kind.kind,
          ...(clientId ? { tenant: clientId } : {}),
          key: p.key,
          action,
          ...(id ? { id } : {}),
        });
      } catch (error) {
        throw inDocument(error, p);
      }
      options.onProgress?.(results.length, planned.length);
    }
    results.sort((a, b) => a.index - b.index);
    const count = (action: ApplyResult['action']): number => results.filter((r) => r.action === action).length;
    const summary = { created: count('created'), updated: count('updated'), unchanged: count('unchanged') };
    return { dryRun: options.dryRun, changed: summary.created + summary.updated > 0, summary, results };
  };
  try {
    // Repositories write through the caller's handle and never open a transaction of their own
    // (one that needs several statements joins a caller's: `db.isTransaction ? fn(db) : ...`), so
    // the whole apply commits or rolls back as one.
    return await db.transaction().execute(async (trx) => {
      const report = await run(trx);
      if (options.dryRun) throw new DryRunRollback(report);
      return report;
    });
  } catch (error) {
    if (error instanceof DryRunRollback) return error.report;
    throw error;
  }
}
