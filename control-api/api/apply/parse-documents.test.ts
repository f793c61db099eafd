import assert from 'node:assert/strict';
import { AppError } from '../../../core/errors.js';
import { jsonDocuments, parseEnvelopes, splitYaml } from './parse-documents.js';

const expectError = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof AppError);
    return error;
  }
  assert.fail('expected an error');
};

describe('apply documents parsing', () => {
  it('splits multi-document YAML, skips empty documents and numbers the rest across files', () => {
    const first = splitYaml('---\napiVersion: vap/v1\nkind: A\nspec: {}\n---\n# only a comment\n---\napiVersion: vap/v1\nkind: B\nspec: {}\n', 'a.yaml');
    assert.deepEqual(first.map((d) => [d.index, d.source]), [[0, 'a.yaml document 1'], [1, 'a.yaml document 3']]);
    const next = splitYaml('apiVersion: vap/v1\nkind: C\nspec: {}\n', 'b.yaml', first.length);
    assert.equal(next[0]!.index, 2);
  });

  it('reports YAML syntax errors and duplicate keys as malformed, naming the document', () => {
    const broken = expectError(() => splitYaml('kind: A\n---\nkind: [\n', 'x.yaml'));
    assert.equal(broken.code, 'malformed');
    assert.match(broken.message, /^x\.yaml document 2: YAML error/);
    assert.equal(expectError(() => splitYaml('kind: A\nkind: B\n')).code, 'malformed');
  });

  it('refuses alias bombs instead of expanding them', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]', 'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]'].join('\n');
    const error = expectError(() => splitYaml(bomb, 'bomb.yaml'));
    assert.equal(error.code, 'malformed');
    assert.match(error.message, /^bomb\.yaml document 1: .*alias/i);
  });

  it('accepts JSON as one document, a list, or {documents}', () => {
    const doc = { apiVersion: 'vap/v1', kind: 'A', spec: {} };
    assert.equal(jsonDocuments(doc).length, 1);
    assert.equal(jsonDocuments([doc, doc]).length, 2);
    assert.equal(jsonDocuments({ documents: [doc, doc, doc] }).length, 3);
  });

  it('validates envelopes, reporting every problem with its document index', () => {
    const error = expectError(() =>
      parseEnvelopes([
        { index: 0, body: { apiVersion: 'vap/v1', kind: 'A', spec: {} } },
        { index: 1, body: { apiVersion: 'v1', kind: 'A', spec: [] } },
        { index: 2, body: 'text' },
        { index: 3, body: { apiVersion: 'vap/v1', kind: 'A', spec: {}, metadata: {} } },
      ]),
    );
    assert.equal(error.code, 'invalid_argument');
    assert.deepEqual(error.issues.map((i) => i.path), ['documents[1].apiVersion', 'documents[1].spec', 'documents[2]', 'documents[3].metadata']);
    assert.equal(expectError(() => parseEnvelopes([])).code, 'invalid_argument');
  });
});
