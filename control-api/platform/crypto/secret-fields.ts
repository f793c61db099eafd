import { maskedSecret } from './secret.js';
import type { SecretBox } from './secret-box.js';

/**
 * Secret fields inside a resource spec, addressed by dotted paths (`provider.authToken`). The
 * helpers copy the spec; a path that does not exist in a given variant is skipped.
 */
type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function getPath(root: unknown, path: string): unknown {
  let node: unknown = root;
  for (const part of path.split('.')) {
    if (!isObject(node)) return undefined;
    node = node[part];
  }
  return node;
}

function setPath(root: Json, path: string, value: unknown): void {
  const parts = path.split('.');
  let node: Json = root;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (!isObject(next)) return;
    node = next;
  }
  const last = parts[parts.length - 1] as string;
  if (value === undefined) delete node[last];
  else node[last] = value;
}

const clone = <T>(value: T): T => structuredClone(value);

/** The encryption context of one secret field: ties a ciphertext to its row and field. */
export const secretContext = (tenantId: string, kind: string, path: string): string => `${tenantId}/${kind}/${path}`;

export interface SecretFieldsOptions {
  readonly box: SecretBox;
  readonly tenantId: string;
  readonly kind: string;
  readonly paths: readonly string[];
}

/**
 * Spec as stored: clear secrets sealed; a masked or absent secret takes the previously stored
 * ciphertext (when there is one and it belongs to the same variant), so updates keep secrets.
 */
export function sealSecrets<T>(spec: T, previousStored: unknown, options: SecretFieldsOptions): T {
  const out = clone(spec) as unknown as Json;
  for (const path of options.paths) {
    const parent = getPath(out, path.split('.').slice(0, -1).join('.') || '');
    if (path.includes('.') && !isObject(parent)) continue;
    const value = getPath(out, path);
    if (value === undefined || value === maskedSecret) {
      const previous = getPath(previousStored, path);
      setPath(out, path, options.box.isSealed(previous) && sameVariant(out, previousStored, path) ? previous : undefined);
    } else if (typeof value === 'string') {
      setPath(out, path, options.box.seal(value, secretContext(options.tenantId, options.kind, path)));
    }
  }
  return out as unknown as T;
}

/** A secret only carries over within the same provider/scheme variant. */
function sameVariant(next: Json, previous: unknown, path: string): boolean {
  const parentPath = path.split('.').slice(0, -1).join('.');
  if (!parentPath) return true;
  const a = getPath(next, parentPath);
  const b = getPath(previous, parentPath);
  if (!isObject(a) || !isObject(b)) return false;
  for (const discriminator of ['type', 'scheme']) {
    if (discriminator in a || discriminator in b) return a[discriminator] === b[discriminator];
  }
  return true;
}

/** Spec for reading: every present secret replaced by the mask. */
export function maskSecrets<T>(stored: T, paths: readonly string[]): T {
  const out = clone(stored) as unknown as Json;
  for (const path of paths) {
    if (getPath(out, path) !== undefined) setPath(out, path, maskedSecret);
  }
  return out as unknown as T;
}

/** Spec with clear secrets, for the components that must use them (dialler, API block). */
export function openSecrets<T>(stored: T, options: SecretFieldsOptions): T {
  const out = clone(stored) as unknown as Json;
  for (const path of options.paths) {
    const value = getPath(out, path);
    if (options.box.isSealed(value)) setPath(out, path, options.box.open(value, secretContext(options.tenantId, options.kind, path)));
  }
  return out as unknown as T;
}

/** Paths whose secret is required but neither given nor kept from the stored spec. */
export function missingSecrets(sealed: unknown, required: readonly string[]): string[] {
  return required.filter((path) => {
    const parentPath = path.split('.').slice(0, -1).join('.');
    if (parentPath && !isObject(getPath(sealed, parentPath))) return false;
    return getPath(sealed, path) === undefined;
  });
}

/**
 * True when writing `incoming` over `stored` would leave every secret as it is: masked/absent
 * keeps it, a clear value must decrypt-match (compared in constant time, never revealed).
 */
export function secretsUnchanged(stored: unknown, incoming: unknown, options: SecretFieldsOptions): boolean {
  for (const path of options.paths) {
    const next = getPath(incoming, path);
    const previous = getPath(stored, path);
    if (next === undefined || next === maskedSecret) continue;
    if (typeof next !== 'string' || !options.box.isSealed(previous)) return false;
    if (!options.box.matches(previous, next, secretContext(options.tenantId, options.kind, path))) return false;
  }
  return true;
}

/** Removes secret fields, so two specs can be compared on everything else. */
export function withoutSecrets<T>(spec: T, paths: readonly string[]): T {
  const out = clone(spec) as unknown as Json;
  for (const path of paths) setPath(out, path, undefined);
  return out as unknown as T;
}
