// Rewrites test/setup/file-durations.json (the order scripts/test-suite.mjs starts files in) from
// the per-file wall times a `TEST_FILE_STATS=<file> npm test` run collected. A file measured
// more than once keeps its latest figure; files under a second are left out (they count as short).
//   node scripts/file-durations.mjs <stats.jsonl>
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const statsFile = process.argv[2];
if (!statsFile) {
  console.error('usage: node scripts/file-durations.mjs <stats.jsonl from TEST_FILE_STATS>');
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const latest = new Map();
for (const line of readFileSync(statsFile, 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const row = JSON.parse(line);
  latest.set(row.file, row.wallMs);
}
const entries = [...latest].filter(([, ms]) => ms >= 1000).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
const target = path.join(root, 'test/setup/file-durations.json');
writeFileSync(target, `${JSON.stringify(Object.fromEntries(entries), null, 1)}\n`);
console.log(`${entries.length} files with their wall time written to ${path.relative(root, target)}`);
