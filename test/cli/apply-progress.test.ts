import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { applyProgress, progressThreshold, runApplyCommand } from '../../bin/commands/apply.js';
import { seedEmbeddedDatabase } from '../helpers/pglite-template.js';

/** A tenant, a recipe and `count` numbers of it, as one YAML stream. */
function documents(count: number): string {
  const head = [
    'apiVersion: vap/v1\nkind: Tenant\nspec: { clientId: bulk, name: Bulk, timezone: UTC, settings: { ssrfAllowlist: [] } }',
    'apiVersion: vap/v1\nkind: Recipe\ntenant: bulk\nspec: { name: hello, startBlockId: hi, blocks: [{ id: hi, type: message, settings: { text: Hello } }, { id: bye, type: close, settings: {} }], connections: [{ from: hi, exit: next, to: bye }] }',
  ];
  const numbers = Array.from({ length: count }, (_, i) => `apiVersion: vap/v1\nkind: PhoneNumber\ntenant: bulk\nspec: { number: "+9144${String(10_000_000 + i)}", recipe: hello, provider: { type: nativeStack } }`);
  return `${[...head, ...numbers].join('\n---\n')}\n`;
}

describe('CLI apply: progress on large sets', function () {
  this.timeout(180_000);
  let dir: string;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'vap-apply-progress-'));
    await seedEmbeddedDatabase(path.join(dir, 'data'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('says nothing under the threshold, and a line per tenth (then committing) at or above it', () => {
    const quiet: string[] = [];
    assert.equal(applyProgress(progressThreshold - 1, { stdout: () => undefined, stderr: (t) => quiet.push(t) }), undefined);
    const lines: string[] = [];
    const tick = applyProgress(300, { stdout: () => undefined, stderr: (t) => lines.push(t) });
    assert.ok(tick);
    for (let done = 1; done <= 300; done++) tick(done);
    assert.equal(lines.length, 10);
    assert.equal(lines[0], 'apply: 30/300 documents (10%)\n');
    assert.equal(lines[9], 'apply: 300/300 documents (100%), committing\n');
  });

  it('a local apply of 300 numbers reports progress on stderr while stdout keeps the report alone', async () => {
    const file = path.join(dir, 'bulk.yaml');
    writeFileSync(file, documents(300));
    let stdout = '';
    const progress: string[] = [];
    const code = await runApplyCommand(['-f', file, '-o', 'json'], {
      env: { DATA_DIR: path.join(dir, 'data'), DATABASE_URL: '', CONFIG_FILE: '' },
      stdout: (t) => (stdout += t),
      stderr: (t) => progress.push(t),
    });
    assert.equal(code, 0, progress.join(''));
    const report = JSON.parse(stdout) as { summary: { created: number } };
    assert.equal(report.summary.created, 302);
    assert.equal(progress.length, 10, progress.join(''));
    assert.match(progress[0] ?? '', /^apply: 31\/302 documents \(10%\)\n$/);
    assert.match(progress[9] ?? '', /^apply: 302\/302 documents \(100%\), committing\n$/);
  });
});
