// Module resolution hooks (node:module register) for register.mjs: refuse what the production
// image does not have. The devDependencies are read from package-lock.json (`dev: true`), so a
// package that only a devDependency pulls in is refused too.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));

/** The lock key (`node_modules/a/node_modules/b`) of the package a file belongs to, or undefined. */
function packageKey(file) {
  const rel = path.relative(root, file).split(path.sep);
  const at = rel.lastIndexOf('node_modules');
  if (at < 0 || rel[0] !== 'node_modules') return undefined;
  const nameParts = rel[at + 1]?.startsWith('@') ? 2 : 1;
  return rel.slice(0, at + 1 + nameParts).join('/');
}

function refuse(message) {
  const error = new Error(message);
  error.code = 'ERR_MODULE_NOT_FOUND';
  return error;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const url = resolved.url;
  const key = url.startsWith('file:') ? packageKey(fileURLToPath(url)) : undefined;
  if (key !== undefined) {
    if (lock.packages[key]?.dev === true) {
      throw refuse(`${key.slice(key.lastIndexOf('node_modules/') + 13)} is a devDependency, absent from the production image, imported from ${context.parentURL ?? 'the command line'}`);
    }
  } else if (url.startsWith('file:') && /\.[cm]?ts$/.test(url)) {
    throw refuse(`${url} is TypeScript: production runs the compiled JavaScript in dist/ (imported from ${context.parentURL ?? 'the command line'})`);
  }
  return resolved;
}
