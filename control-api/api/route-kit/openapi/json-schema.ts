import { z } from 'zod';

export type JsonSchema = { readonly [key: string]: unknown };

export interface ComponentSchemas {
  /** The schema itself, with `$defs` references pointing into `components.schemas`. */
  readonly schema: JsonSchema;
  /** Hoisted definitions (recursive parts such as block graphs) to add to `components.schemas`. */
  readonly extra: Readonly<Record<string, JsonSchema>>;
}

function rewriteRefs(value: unknown, rename: (def: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => rewriteRefs(v, rename));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === '$ref' && typeof child === 'string' && child.startsWith('#/$defs/')) {
      out[key] = `#/components/schemas/${rename(child.slice('#/$defs/'.length))}`;
    } else {
      out[key] = rewriteRefs(child, rename);
    }
  }
  return out;
}

/**
 * JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) of a zod schema, shaped to live in an
 * OpenAPI document: no `$schema`, and local `$defs` hoisted under a unique component name because
 * inside the document `#` means the document, not the schema. `io: 'input'` describes what a
 * client may send (defaults optional), `'output'` what the server returns (defaults filled in).
 */
export function componentSchema(schema: z.ZodType, io: 'input' | 'output', componentName: string): ComponentSchemas {
  const raw = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema: _dialect, $defs, ...rest } = raw;
  const rename = (def: string): string => `${componentName}_${def.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
  const extra: Record<string, JsonSchema> = {};
  for (const [name, def] of Object.entries(($defs ?? {}) as Record<string, unknown>)) {
    extra[rename(name)] = rewriteRefs(def, rename) as JsonSchema;
  }
  return { schema: rewriteRefs(rest, rename) as JsonSchema, extra };
}

export type FilterKind = 'string' | 'number' | 'boolean' | 'list';

/**
 * Top-level spec fields a list may be filtered on: scalars (compared case-insensitively) and
 * arrays of scalars (the item must be present; a repeated parameter requires every value).
 */
export function filterableFields(schema: z.ZodType): Readonly<Record<string, FilterKind>> {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' }) as {
    properties?: Record<string, { type?: unknown; enum?: unknown; items?: { type?: unknown; enum?: unknown } }>;
  };
  const fields: Record<string, FilterKind> = {};
  for (const [name, prop] of Object.entries(json.properties ?? {})) {
    const kind = scalarKind(prop);
    if (kind) fields[name] = kind;
    else if (prop.type === 'array' && prop.items && scalarKind(prop.items)) fields[name] = 'list';
  }
  return fields;
}

function scalarKind(prop: { type?: unknown; enum?: unknown }): Exclude<FilterKind, 'list'> | undefined {
  if (prop.type === 'string') return 'string';
  if (prop.type === 'number' || prop.type === 'integer') return 'number';
  if (prop.type === 'boolean') return 'boolean';
  if (Array.isArray(prop.enum) && prop.enum.every((v) => typeof v === 'string')) return 'string';
  return undefined;
}
