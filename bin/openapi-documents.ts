import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../core/config/load-config.js';
import { silentLogger } from '../core/logger.js';
import { createControlApp } from '../control-api/api/control-app.js';
import { serve } from '../control-api/platform/http/serve.js';
import { createSandboxApp } from '../control-api/api/sandbox/sandbox-app.js';
import { openStore } from '../control-api/platform/store/database.js';

/**
 * The OpenAPI documents the platform serves, committed under docs/openapi/ so clients can be
 * generated without a running platform:
 *
 *   npm run openapi            fetch them from the real apps and write the files
 *   npm run openapi -- --check exit 1 naming every file that differs (test/system/openapi-documents.test.ts)
 *
 * The documents are fetched over HTTP from the control and sandbox apps as `npm start` builds
 * them (default configuration, an in-memory database that serving them never touches).
 */
const repoRoot = path.resolve(import.meta.dirname, '..');

export const openApiFiles = {
  management: 'docs/openapi/management.json',
  sandbox: 'docs/openapi/sandbox.json',
} as const;

export type OpenApiName = keyof typeof openApiFiles;

/** A document as committed: two-space JSON and a final newline. */
export const documentText = (document: unknown): string => `${JSON.stringify(document, null, 2)}\n`;

/** Every served document, by name, as fetched from the running apps. */
export async function servedDocuments(): Promise<Record<OpenApiName, unknown>> {
  const store = await openStore({ pgliteDir: 'memory://' });
  const config = loadConfig({ env: {} });
  // As the platform serves it: with its drain routes (a process's drain, never started here).
  const idle = { draining: false, liveCalls: 0, drainTimeoutMs: config.drainTimeoutMs };
  const drain = { start: () => idle, status: () => idle };
  const control = await serve(createControlApp({ store, logger: silentLogger, config, operatorToken: 'openapi-documents-only-0123456789', secretKey: Buffer.alloc(32), drain }), '127.0.0.1', 0);
  const sandbox = await serve(createSandboxApp({ store, logger: silentLogger, staticTokens: [] }), '127.0.0.1', 0);
  try {
    const fetchJson = async (url: string): Promise<unknown> => {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
      return response.json();
    };
    return { management: await fetchJson(`${control.url}/v1/openapi.json`), sandbox: await fetchJson(`${sandbox.url}/openapi.json`) };
  } finally {
    await control.close(0);
    await sandbox.close(0);
    await store.close();
  }
}

/** Committed files whose content differs from what is served now (relative paths). */
export async function staleDocuments(): Promise<string[]> {
  const served = await servedDocuments();
  const stale: string[] = [];
  for (const [name, file] of Object.entries(openApiFiles) as Array<[OpenApiName, string]>) {
    let committed: string | undefined;
    try {
      committed = readFileSync(path.join(repoRoot, file), 'utf8');
    } catch {
      committed = undefined;
    }
    if (committed !== documentText(served[name])) stale.push(file);
  }
  return stale;
}

async function main(check: boolean): Promise<number> {
  if (check) {
    const stale = await staleDocuments();
    if (stale.length === 0) return 0;
    process.stderr.write(`OpenAPI documents differ from what the platform serves (run npm run openapi):\n${stale.map((f) => `  ${f}\n`).join('')}`);
    return 1;
  }
  const served = await servedDocuments();
  for (const [name, file] of Object.entries(openApiFiles) as Array<[OpenApiName, string]>) {
    mkdirSync(path.dirname(path.join(repoRoot, file)), { recursive: true });
    writeFileSync(path.join(repoRoot, file), documentText(served[name]));
    process.stderr.write(`wrote ${file}\n`);
  }
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  main(process.argv.includes('--check')).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
