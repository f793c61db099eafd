import { z } from 'zod';
import { checkUnique, identifier, requiredText } from './common.js';

/**
 * Post-call insight parameters (spec: "Insight parameter" table and Limits). They live in a
 * Recipe's global settings, so "per agent" means per Recipe: at most 10.
 */
export const insightTypes = ['text', 'boolean', 'number', 'date', 'enum'] as const;
export type InsightType = (typeof insightTypes)[number];

export const maxInsightParameters = 10;
export const maxInsightDescriptionLength = 300;
/** A Text insight value is cut to this length when extracted (spec Limits). */
export const maxInsightTextValueLength = 300;

export const insightParameterSchema = z
  .object({
    /** System name; becomes the report column `analysis.<name>` and the webhook key. */
    name: identifier('insight name'),
    description: requiredText('insight description', maxInsightDescriptionLength).refine((d) => d.trim().length > 0, {
      error: 'insight description must not be blank',
    }),
    type: z.enum(insightTypes, { error: `insight type must be one of ${insightTypes.join(', ')}` }),
    options: z
      .array(requiredText('insight option', 100))
      .max(50, { error: 'insight options must have at most 50 entries' })
      .optional(),
  })
  .superRefine((p, ctx) => {
    if (p.type === 'enum') {
      if (!p.options || p.options.length === 0) {
        ctx.addIssue({ code: 'custom', path: ['options'], message: `enum insight '${p.name}' needs at least one option` });
      } else if (new Set(p.options).size !== p.options.length) {
        ctx.addIssue({ code: 'custom', path: ['options'], message: `enum insight '${p.name}' lists an option twice` });
      }
    } else if (p.options !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: `options are only allowed on enum insights ('${p.name}' is ${p.type})` });
    }
  });
export type InsightParameter = z.infer<typeof insightParameterSchema>;

export const insightParameterListSchema = z
  .array(insightParameterSchema)
  .max(maxInsightParameters, { error: `an agent has at most ${maxInsightParameters} insight parameters` })
  .superRefine((list, ctx) => checkUnique(list, (p) => p.name, ctx, [], 'name', 'insight'));

/**
 * Schema for one extracted value of `parameter` (spec: Text max 300 characters, Boolean,
 * Number, Date in standard format, Enum from the options), used when analysis results are stored.
 */
export function insightValueSchema(parameter: InsightParameter): z.ZodType<string | number | boolean> {
  const field = `insight '${parameter.name}'`;
  switch (parameter.type) {
    case 'text':
      return z.string({ error: `${field} must be text` }).max(maxInsightTextValueLength, {
        error: `${field} must be at most ${maxInsightTextValueLength} characters`,
      });
    case 'boolean':
      return z.boolean({ error: `${field} must be true or false` });
    case 'number':
      return z.number({ error: `${field} must be a number` }).refine(Number.isFinite, { error: `${field} must be a finite number` });
    case 'date':
      return z.iso.date({ error: `${field} must be a date as YYYY-MM-DD` });
    case 'enum':
      return z.string({ error: `${field} must be one of its options` }).refine((v) => (parameter.options ?? []).includes(v), {
        error: `${field} must be one of: ${(parameter.options ?? []).join(', ')}`,
      });
  }
}
