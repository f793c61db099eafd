import type { JsonSchema } from './json-schema.js';

/**
 * The JSON Schema of a JSON Merge Patch (RFC 7396) of documents described by `schema` (the
 * request side, `io: input`), so a generated client can type a PATCH body:
 *
 * - an object's properties all become optional, and each is the patch of its own schema, since
 *   the server merges nested objects key by key (merge-patch.ts); `additionalProperties` and
 *   `propertyNames` stay, so a misspelt field is still refused;
 * - `null` is allowed exactly where it removes something the document may lack: a property that
 *   is not required (optional or defaulted: the default applies again) and an entry of a map;
 *   a required field cannot be removed, so it is not nullable;
 * - variants (`oneOf`/`anyOf`/`allOf`) are patched one by one, and `oneOf` becomes `anyOf`
 *   because partial variants may overlap (`{}` fits every one);
 * - arrays and scalars are replaced whole (RFC 7396 sec. 2), so they keep their full schema;
 * - `default` is dropped on patched properties: an absent key leaves the stored value as it is.
 *
 * The merged document is still validated like a PUT (400 naming the field), which this schema
 * cannot express (e.g. switching a provider `type` needs the new variant's required fields).
 */
const nullable = (schema: JsonSchema): JsonSchema => {
  if (schema['type'] === 'null') return schema;
  const variants = schema['anyOf'];
  if (Array.isArray(variants) && variants.some((v: JsonSchema) => v['type'] === 'null')) return schema;
  const { description, ...rest } = schema as { description?: unknown } & JsonSchema;
  return { ...(typeof description === 'string' ? { description } : {}), anyOf: [rest, { type: 'null' }] };
};

const isSchema = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value);

export function mergePatchSchema(schema: JsonSchema): JsonSchema {
  const out: Record<string, unknown> = { ...schema };
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
    const variants = schema[key];
    if (Array.isArray(variants)) {
      delete out[key];
      out[key === 'oneOf' ? 'anyOf' : key] = variants.map((v: unknown) => (isSchema(v) ? mergePatchSchema(v) : v));
    }
  }
  const isObject = schema['type'] === 'object' || isSchema(schema['properties']);
  if (!isObject) return out;
  const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
  delete out['required'];
  if (isSchema(schema['properties'])) {
    const properties: Record<string, JsonSchema> = {};
    for (const [name, property] of Object.entries(schema['properties'])) {
      if (!isSchema(property)) continue;
      const { default: _default, ...withoutDefault } = property;
      const patched = mergePatchSchema(withoutDefault);
      properties[name] = required.has(name) ? patched : nullable(patched);
    }
    out['properties'] = properties;
  }
  // A map (`{key: value}` records): each entry merges, and `null` removes it.
  if (isSchema(schema['additionalProperties'])) out['additionalProperties'] = nullable(mergePatchSchema(schema['additionalProperties']));
  return out;
}
