import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { documentText, openApiFiles, servedDocuments, type OpenApiName } from '../../bin/openapi-documents.js';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../..');
// Offline: no usage telemetry and no update check (redocly.yaml also says telemetry: off).
const offline = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' };

describe('the committed OpenAPI documents (docs/openapi)', function () {
  this.timeout(120_000);

  it('are exactly what the control and sandbox apps serve (else run: npm run openapi)', async () => {
    const served = await servedDocuments();
    for (const [name, file] of Object.entries(openApiFiles) as Array<[OpenApiName, string]>) {
      const committed = readFileSync(path.join(repoRoot, file), 'utf8');
      assert.ok(committed === documentText(served[name]), `${file} differs from what the platform serves: run \`npm run openapi\` and commit the result`);
    }
  });

  it('declare their tags with descriptions, servers and a license', () => {
    for (const file of Object.values(openApiFiles)) {
      const doc = JSON.parse(readFileSync(path.join(repoRoot, file), 'utf8')) as {
        info: { license?: { name: string } };
        servers?: unknown[];
        tags?: Array<{ name: string; description?: string }>;
        paths: Record<string, Record<string, { tags?: string[]; summary?: string }>>;
      };
      assert.equal(doc.info.license?.name, 'Apache-2.0', file);
      assert.ok((doc.servers ?? []).length > 0, file);
      const declared = new Map((doc.tags ?? []).map((t) => [t.name, t.description ?? '']));
      for (const [route, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          assert.ok(op.summary, `${file} ${method} ${route} has a summary`);
          assert.ok((op.tags ?? []).length > 0, `${file} ${method} ${route} has a tag`);
          for (const tag of op.tags ?? []) assert.ok(declared.get(tag), `${file}: tag ${tag} is declared with a description`);
        }
      }
    }
  });

  for (const file of Object.values(openApiFiles)) {
    it(`${file} passes Redocly CLI lint (recommended rules) with no error and no warning`, async () => {
      const { stdout } = await run(path.join(repoRoot, 'node_modules/.bin/redocly'), ['lint', file, '--format=json'], { cwd: repoRoot, env: offline, maxBuffer: 16 * 1024 * 1024 });
      const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number; ignored: number }; problems: unknown[] };
      assert.deepEqual(report.problems, []);
      assert.equal(report.totals.errors, 0);
      assert.equal(report.totals.warnings, 0);
      // The one reasoned exception of .redocly.lint-ignore.yaml: the document's own GET has no 4xx.
      assert.equal(report.totals.ignored, 1);
    });
  }

  it('generate client types (openapi-typescript) in which a PATCH type-checks and a wrong one does not', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vap-openapi-ts-'));
    try {
      const ast = await openapiTS(pathToFileURL(path.join(repoRoot, openApiFiles.management)));
      writeFileSync(path.join(dir, 'management.ts'), astToString(ast));
      writeFileSync(
        path.join(dir, 'patch-call.ts'),
        `import type { paths } from './management.js';

type PatchPath = { [P in keyof paths]: paths[P] extends { patch: { requestBody: unknown } } ? P : never }[keyof paths];
type PatchBody<P extends PatchPath> = paths[P]['patch']['requestBody']['content']['application/merge-patch+json'];
type Patched<P extends PatchPath> = paths[P]['patch']['responses'][200]['content']['application/json'];
declare function patch<P extends PatchPath>(path: P, params: { clientId: string; id?: string }, body: PatchBody<P>): Promise<Patched<P>>;

export async function examples(): Promise<boolean> {
  const number = await patch('/v1/tenants/{clientId}/phone-numbers/{id}', { clientId: 'acme', id: 'n' }, { enabled: false, endCallOnSilenceMinutes: null });
  await patch('/v1/tenants/{clientId}/campaigns/{id}', { clientId: 'acme', id: 'c' }, { published: true });
  await patch('/v1/tenants/{clientId}', { clientId: 'acme' }, { settings: { webhookUrl: 'https://hooks.example.com/calls' } });
  // @ts-expect-error a misspelt field is not part of the patch
  await patch('/v1/tenants/{clientId}/phone-numbers/{id}', { clientId: 'acme', id: 'n' }, { enabeld: false });
  // @ts-expect-error a required field cannot be removed
  await patch('/v1/tenants/{clientId}/phone-numbers/{id}', { clientId: 'acme', id: 'n' }, { number: null });
  // @ts-expect-error enabled is a boolean
  await patch('/v1/tenants/{clientId}/phone-numbers/{id}', { clientId: 'acme', id: 'n' }, { enabled: 'no' });
  return number.spec.enabled;
}
`,
      );
      const program = ts.createProgram([path.join(dir, 'patch-call.ts')], {
        strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, types: [], skipLibCheck: true,
      });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
      assert.deepEqual(problems, []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
