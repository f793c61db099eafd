import type { Random } from './random.js';
import { sampleRegex } from './regex-sample.js';

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it) as far as the sampler reads it. */
export interface Schema {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | Schema;
  readonly propertyNames?: Schema;
  readonly items?: Schema;
  readonly prefixItems?: readonly Schema[];
  readonly anyOf?: readonly Schema[];
  readonly oneOf?: readonly Schema[];
  readonly allOf?: readonly Schema[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly default?: unknown;
  readonly examples?: readonly unknown[];
  readonly pattern?: string;
  readonly format?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
}

/** Values the fuzzer knows exist (names, ids) offered for fields of the same name. */
export type FieldHints = Readonly<Record<string, () => unknown>>;

export interface SampleContext {
  readonly root: unknown;
  readonly random: Random;
  readonly hints?: FieldHints;
}

/** Resolves `#/a/b/c` against the document (JSON Pointer, RFC 6901). */
export function resolveRef(root: unknown, ref: string): Schema {
  if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref}`);
  let node = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = (node as Record<string, unknown>)[key];
    if (node === undefined) throw new Error(`unresolved $ref ${ref}`);
  }
  return node as Schema;
}

export function deref(schema: Schema, root: unknown): Schema {
  let s = schema;
  for (let i = 0; s.$ref && i < 20; i += 1) s = { ...resolveRef(root, s.$ref), ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== '$ref')) };
  return s;
}

function sampleString(s: Schema, random: Random): string {
  if (s.format === 'uuid') return random.uuid();
  if (s.format === 'date-time') return new Date(Date.UTC(2026, random.int(0, 11), random.int(1, 28), random.int(0, 23), random.int(0, 59))).toISOString();
  if (s.format === 'date') return `2026-${String(random.int(1, 12)).padStart(2, '0')}-${String(random.int(1, 28)).padStart(2, '0')}`;
  if (s.format === 'uri' || s.format === 'url') return `https://example.com/${random.word()}`;
  if (s.format === 'email') return `${random.word()}@example.com`;
  if (s.pattern) return sampleRegex(s.pattern, random);
  const min = s.minLength ?? 1;
  const max = Math.max(min, Math.min(s.maxLength ?? 16, min + 16));
  let out = `${random.word(1, 4)} ${random.word()}`;
  while (out.length < min) out += random.word();
  return out.slice(0, max);
}

function sampleNumber(s: Schema, random: Random, integer: boolean): number {
  const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0);
  const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : lo + 100);
  const value = lo + random.next() * Math.min(hi - lo, 1000);
  return integer ? Math.max(Math.ceil(lo), Math.min(Math.floor(hi), Math.round(value))) : value;
}

/**
 * A value that satisfies `schema` as often as a simple sampler can (patterns, enums, required
 * fields, bounds); beyond `depth` 6 optional parts are left out so recursive schemas end.
 */
export function sampleSchema(schema: Schema, ctx: SampleContext, depth = 0, field?: string): unknown {
  const { random } = ctx;
  const s = deref(schema, ctx.root);
  if (field && ctx.hints?.[field] && random.chance(0.85)) return ctx.hints[field]();
  if (s.const !== undefined) return s.const;
  if (s.enum) return random.pick(s.enum);
  if (s.examples?.length && random.chance(0.5)) return random.pick(s.examples);
  if (s.allOf) return Object.assign({}, ...s.allOf.map((part) => sampleSchema(part, ctx, depth + 1, field)) as object[]);
  const choices = s.oneOf ?? s.anyOf;
  if (choices) {
    const usable = depth > 6 ? choices.filter((c) => deref(c, ctx.root).type !== 'object' && deref(c, ctx.root).type !== 'array') : choices;
    return sampleSchema(random.pick(usable.length > 0 ? usable : choices), ctx, depth + 1, field);
  }
  const types = s.type === undefined ? (s.properties ? ['object'] : ['string']) : Array.isArray(s.type) ? s.type : [s.type];
  const nonNull = types.filter((t) => t !== 'null');
  const type = nonNull.length > 0 ? random.pick(nonNull) : 'null';
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return random.chance(0.5);
    case 'integer':
      return sampleNumber(s, random, true);
    case 'number':
      return sampleNumber(s, random, false);
    case 'string':
      return sampleString(s, random);
    case 'array': {
      const min = s.minItems ?? 0;
      const max = Math.min(s.maxItems ?? 3, min + (depth > 6 ? 0 : 3));
      const count = random.int(min, Math.max(min, max));
      const prefix = s.prefixItems ?? [];
      return Array.from({ length: Math.max(count, prefix.length) }, (_, i) => sampleSchema(prefix[i] ?? s.items ?? {}, ctx, depth + 1));
    }
    default: {
      const out: Record<string, unknown> = {};
      const required = new Set(s.required ?? []);
      for (const [key, prop] of Object.entries(s.properties ?? {})) {
        if (required.has(key) || (depth < 6 && random.chance(0.5))) out[key] = sampleSchema(prop, ctx, depth + 1, key);
      }
      if (typeof s.additionalProperties === 'object' && depth < 6 && random.chance(0.5)) {
        const key = s.propertyNames ? String(sampleSchema(s.propertyNames, ctx, depth + 1)) : random.word();
        out[key] = sampleSchema(s.additionalProperties, ctx, depth + 1);
      }
      return out;
    }
  }
}
