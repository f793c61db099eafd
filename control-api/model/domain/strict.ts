import { z } from 'zod';

/**
 * A copy of `schema` in which every object, however deeply nested, refuses keys it does not
 * declare (zod's `unrecognized_keys` issue) instead of silently dropping them. Used where
 * clients write: a misspelt `favorite` or `endCallOnSilence` must be a 400 naming the field,
 * not a 201 that quietly keeps the default. Stored specs are still read with the lenient
 * originals, so a field retired from a schema never makes old rows unreadable.
 *
 * Checks (`refine`, `superRefine`), defaults, transforms and custom messages are kept: only the
 * object definitions are cloned with `catchall: never`. Objects with their own catchall and
 * intersections (whose operands legitimately share keys) are left as they are.
 */
export function strictDeep<T extends z.ZodType>(schema: T): T {
  return strictOf(schema, new Map()) as T;
}

type AnySchema = z.core.$ZodType;
type Def = AnySchema['_zod']['def'] & Record<string, unknown>;

const clone = (schema: AnySchema, def: Def): AnySchema => z.core.util.clone(schema, def, { parent: true });

function strictOf(schema: AnySchema, seen: Map<AnySchema, AnySchema>): AnySchema {
  const done = seen.get(schema);
  if (done) return done;
  const def = schema._zod.def as Def;
  const inner = (s: unknown): AnySchema => strictOf(s as AnySchema, seen);
  switch (def.type) {
    case 'object': {
      if (def['catchall'] !== undefined) return schema;
      const shape = def['shape'] as Record<string, AnySchema>;
      const strictShape: Record<string, AnySchema> = {};
      // Recursive shapes are declared with getters; keep them lazy so the recursion terminates.
      for (const key of Object.keys(shape)) {
        Object.defineProperty(strictShape, key, { enumerable: true, configurable: true, get: () => inner(shape[key]) });
      }
      const copy = clone(schema, z.core.util.mergeDefs(def, { shape: strictShape, catchall: z.never() }) as Def);
      seen.set(schema, copy);
      return copy;
    }
    case 'array':
      return remember(schema, seen, () => clone(schema, z.core.util.mergeDefs(def, { element: inner(def['element']) }) as Def));
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return remember(schema, seen, () => clone(schema, z.core.util.mergeDefs(def, { innerType: inner(def['innerType']) }) as Def));
    case 'pipe':
      return remember(schema, seen, () => clone(schema, z.core.util.mergeDefs(def, { in: inner(def['in']), out: inner(def['out']) }) as Def));
    case 'union':
      return remember(schema, seen, () =>
        clone(schema, z.core.util.mergeDefs(def, { options: (def['options'] as AnySchema[]).map(inner) }) as Def),
      );
    case 'record':
      return remember(schema, seen, () => clone(schema, z.core.util.mergeDefs(def, { valueType: inner(def['valueType']) }) as Def));
    case 'tuple':
      return remember(schema, seen, () =>
        clone(
          schema,
          z.core.util.mergeDefs(def, {
            items: (def['items'] as AnySchema[]).map(inner),
            ...(def['rest'] ? { rest: inner(def['rest']) } : {}),
          }) as Def,
        ),
      );
    case 'lazy': {
      const getter = def['getter'] as () => AnySchema;
      return remember(schema, seen, () => clone(schema, z.core.util.mergeDefs(def, { getter: () => inner(getter()) }) as Def));
    }
    default:
      return schema;
  }
}

function remember(schema: AnySchema, seen: Map<AnySchema, AnySchema>, make: () => AnySchema): AnySchema {
  const copy = make();
  seen.set(schema, copy);
  return copy;
}
