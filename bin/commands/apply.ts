import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../../core/config/load-config.js';
import { isAppError } from '../../core/errors.js';
import { platformKinds } from '../../control-api/api/control-app.js';
import type { ApplyReport } from '../../control-api/api/apply/apply-documents.js';
import { createApplyService } from '../../control-api/api/apply/apply-service.js';
import { splitYaml, type SourceDocument } from '../../control-api/api/apply/parse-documents.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { resolveLocalSecrets } from '../local-secrets.js';
import { openCliStore, StoreBusyError, storeBusyExitCode } from './cli-store.js';
import type { CliCommand } from './command.js';
import { callApi, RemoteError, remoteTarget, remoteUsage, RemoteUsageError, type RemoteIssue, type RemoteTarget } from './remote-api.js';

const usage = `usage: npm run cli -- apply -f <file.yaml|directory> [-f ...] [--dry-run] [--output text|json]
                              [--config <file> | --server <url> --token <token>]

Applies resource documents (apiVersion: vap/v1) idempotently: each is created, updated or left
unchanged by its natural key, all in one transaction. A directory applies every *.yaml / *.yml in
it, in name order. --dry-run validates and reports without writing.
Without --server it writes to the configured database; with the embedded database (no
DATABASE_URL) stop the platform first (PGlite allows one process per data directory), or apply
through the running platform with --server. Tenant documents need the operator token.

${remoteUsage}
`;

class UsageError extends Error {}

export interface ApplyCommandIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const processIo: ApplyCommandIo = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };

function yamlFiles(target: string): string[] {
  let stat;
  try {
    stat = statSync(target);
  } catch {
    throw new UsageError(`-f ${target}: no such file or directory`);
  }
  if (!stat.isDirectory()) return [target];
  const files = readdirSync(target)
    .filter((f) => /\.ya?ml$/i.test(f))
    .sort()
    .map((f) => path.join(target, f));
  if (files.length === 0) throw new UsageError(`-f ${target}: no *.yaml files in the directory`);
  return files;
}

export function readDocuments(targets: readonly string[]): SourceDocument[] {
  const documents: SourceDocument[] = [];
  for (const file of targets.flatMap(yamlFiles)) {
    documents.push(...splitYaml(readFileSync(file, 'utf8'), path.relative(process.cwd(), file) || file, documents.length));
  }
  return documents;
}

export function formatReport(report: ApplyReport): string {
  const lines = report.results.map((r) => {
    const name = r.tenant ? `${r.tenant}/${r.key}` : r.key;
    return `${r.action.padEnd(9)} ${r.kind.padEnd(18)} ${name}${r.source ? `  (${r.source})` : ''}`;
  });
  const { created, updated, unchanged } = report.summary;
  lines.push(`${created} created, ${updated} updated, ${unchanged} unchanged${report.dryRun ? ' (dry run: nothing was written)' : ''}`);
  return `${lines.join('\n')}\n`;
}

/** Sets of this many documents or more show progress on stderr; a small apply stays quiet. */
export const progressThreshold = 50;

/**
 * Progress of a large apply on stderr (stdout keeps only the report, so `-o json` stays
 * parseable): a line at every tenth of the documents, then one while the transaction commits.
 */
export function applyProgress(total: number, io: ApplyCommandIo): ((done: number) => void) | undefined {
  if (total < progressThreshold) return undefined;
  let shown = 0;
  return (done) => {
    const tenth = Math.floor((done * 10) / total);
    if (tenth <= shown) return;
    shown = tenth;
    io.stderr(`apply: ${done}/${total} documents (${tenth * 10}%)${done === total ? ', committing' : ''}\n`);
  };
}

export async function runApplyCommand(args: readonly string[], io: ApplyCommandIo = processIo): Promise<number> {
  let store: Store | undefined;
  try {
    const { values } = parseArgs({
      args: [...args],
      strict: true,
      options: {
        file: { type: 'string', short: 'f', multiple: true },
        'dry-run': { type: 'boolean' },
        output: { type: 'string', short: 'o' },
        config: { type: 'string', short: 'c' },
        server: { type: 'string' },
        token: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help) {
      io.stdout(usage);
      return 0;
    }
    if (!values.file || values.file.length === 0) throw new UsageError('-f <file|directory> is required');
    const output = values.output ?? 'text';
    if (output !== 'text' && output !== 'json') throw new UsageError('--output: expected text or json');
    const target = remoteTarget(values, io.env ?? process.env);
    if (target && values.config) throw new UsageError('--config and --server exclude each other: --server applies through the running platform');
    const documents = readDocuments(values.file);
    if (target) {
      // One request, one transaction on the server: all we can tell is that it is under way.
      if (documents.length >= progressThreshold) io.stderr(`apply: sending ${documents.length} documents to ${target.server} (one transaction)...\n`);
      const report = await applyRemotely(target, documents, values['dry-run'] === true);
      io.stdout(output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
      return 0;
    }

    const config = loadConfig({ ...(io.env ? { env: io.env } : {}), ...(values.config ? { file: values.config } : {}) });
    const { secretKey } = resolveLocalSecrets(config.dataDir, config.security);
    store = await openCliStore(config);
    const kinds = platformKinds(secretKey);
    const progress = applyProgress(documents.length, io);
    const report = await createApplyService(store.db, kinds.definitions, kinds.tenants).apply(documents, { dryRun: values['dry-run'] === true, ...(progress ? { onProgress: progress } : {}) });
    io.stdout(output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
    return 0;
  } catch (error) {
    if (error instanceof StoreBusyError) {
      io.stderr(`apply: ${error.message}\n`);
      return storeBusyExitCode;
    }
    if (error instanceof RemoteError) {
      io.stderr(`apply: ${error.message}\n${error.issues.map((i) => `  ${i.path}: ${i.message}\n`).join('')}${error.issues.length > 0 ? 'nothing was written\n' : ''}`);
      return error.exitCode;
    }
    if (error instanceof UsageError || error instanceof RemoteUsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.stderr(`apply: ${(error as Error).message}\n\n${usage}`);
      return 64; // EX_USAGE
    }
    if (error instanceof ConfigError) {
      io.stderr(`${error.message}\n`);
      return 78; // EX_CONFIG
    }
    if (isAppError(error)) {
      const issues = error.issues.map((i) => `  ${i.path}: ${i.message}\n`).join('');
      io.stderr(`apply failed (${error.code}): ${error.message}\n${issues}nothing was written\n`);
      return error.httpStatus < 500 ? 65 : 1; // EX_DATAERR for a problem in the documents
    }
    throw error;
  } finally {
    await store?.close();
  }
}

/**
 * `POST /v1/apply` with the documents as JSON. The server knows them by position only, so the
 * report and every issue get their file and document number back from here.
 */
async function applyRemotely(target: RemoteTarget, documents: readonly SourceDocument[], dryRun: boolean): Promise<ApplyReport> {
  const sourceOf = (path: string): string | undefined => {
    const index = /^documents\[(\d+)\]/.exec(path)?.[1];
    return index === undefined ? undefined : documents[Number(index)]?.source;
  };
  try {
    const { body } = await callApi(target, 'POST', '/v1/apply', { body: { documents: documents.map((d) => d.body) }, ...(dryRun ? { query: { dryRun: 'true' } } : {}) });
    const report = body as ApplyReport;
    return { ...report, results: report.results.map((r) => ({ ...r, source: r.source ?? documents[r.index]?.source })) };
  } catch (error) {
    if (!(error instanceof RemoteError) || error.issues.length === 0) throw error;
    const issues: RemoteIssue[] = error.issues.map((i) => {
      const source = sourceOf(i.path);
      return source ? { path: `${i.path} (${source})`, message: i.message } : i;
    });
    throw new RemoteError(error.message, error.exitCode, issues, error.status);
  }
}

export const applyCommand: CliCommand = {
  summary: 'apply resource documents (YAML) to the database: create or update by natural key',
  run: (args) => runApplyCommand(args),
};
