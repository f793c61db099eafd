import { z } from 'zod';
import {
  checkUnique,
  httpUrl,
  identifier,
  isHttpUrl,
  languageTag,
  resourceName,
  tagList,
  text,
  requiredText,
  boundedInt,
} from '../domain/common.js';
import { insightParameterListSchema } from '../domain/insight-parameter.js';
import { askSettingsSchema, smartAiSettingsSchema } from './listening-schema.js';

export * from './listening-schema.js';

/**
 * A Recipe document: blocks (one settings shape per block type, spec "Recipe blocks and their
 * settings"), connections between block exits, and global settings. Structural rules over the
 * graph (required exits, dangling connections) live in recipe-graph.ts, so this file stays a
 * plain description of the shape the runtime can rely on.
 */

export const blockIdPattern = /^[A-Za-z0-9_-]{1,64}$/;
export const blockId = (field = 'id') =>
  z.string({ error: `${field} must be a string` }).regex(blockIdPattern, {
    error: `${field} must be 1 to 64 letters, digits, '_' or '-'`,
  });

/** Text spoken or sent to the LLM; may contain `{{variable_name}}`. */
const script = (field: string, max = 20_000) => text(field, max);

/**
 * Message for a union none of whose options matched: the first issue of the option `pick`
 * chooses for the input, with its relative path, e.g. "operator: operator must be one of ...".
 */
function explainUnion(issue: z.core.$ZodRawIssue, pick: (input: unknown) => number): string | undefined {
  if (issue.code !== 'invalid_union') return undefined;
  const inner = issue.errors[pick(issue.input)]?.[0];
  if (!inner) return undefined;
  return inner.path.length > 0 ? `${inner.path.join('.')}: ${inner.message}` : inner.message;
}

// --- Condition ------------------------------------------------------------------------------

export const conditionOperators = [
  'equals',
  'notEquals',
  'lessThan',
  'greaterThan',
  'contains',
  'notContains',
  'isEmpty',
  'isNotEmpty',
  'startsWith',
  'endsWith',
  'matchesRegex',
] as const;
export type ConditionOperator = (typeof conditionOperators)[number];
const unaryOperators: readonly ConditionOperator[] = ['isEmpty', 'isNotEmpty'];

export const conditionRuleSchema = z
  .object({
    variable: identifier('rule variable'),
    operator: z.enum(conditionOperators, { error: `operator must be one of ${conditionOperators.join(', ')}` }),
    /** Fixed comparison value ... */
    value: z.union([z.string().max(1_000), z.number(), z.boolean()], { error: 'value must be a string, number or boolean' }).optional(),
    /** ... or another variable (exactly one of the two, none for isEmpty / isNotEmpty). */
    valueVariable: identifier('valueVariable').optional(),
  })
  .superRefine((rule, ctx) => {
    const operands = (rule.value !== undefined ? 1 : 0) + (rule.valueVariable !== undefined ? 1 : 0);
    if (unaryOperators.includes(rule.operator)) {
      if (operands > 0) ctx.addIssue({ code: 'custom', path: ['value'], message: `operator ${rule.operator} takes no value` });
      return;
    }
    if (operands !== 1) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `operator ${rule.operator} needs exactly one of value or valueVariable` });
      return;
    }
    if (rule.operator === 'matchesRegex' && rule.value !== undefined) {
      try {
        new RegExp(String(rule.value), 'u');
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['value'], message: `value is not a valid regular expression: ${(error as Error).message}` });
      }
    }
  });
export type ConditionRule = z.infer<typeof conditionRuleSchema>;

export const combinators = ['and', 'or'] as const;
const combinator = z.enum(combinators, { error: "combinator must be 'and' or 'or'" }).default('and');

/** A parenthesised group inside a branch: `(a AND b) OR c`. Two levels cover what the builder offers. */
export const conditionGroupSchema = z.object({
  combinator,
  rules: z.array(conditionRuleSchema).min(1, { error: 'a rule group needs at least one rule' }).max(20, { error: 'a rule group has at most 20 rules' }),
});
export type ConditionGroup = z.infer<typeof conditionGroupSchema>;

/** One ordered branch; its name is the exit followed when it is the first to match. */
export const conditionBranchSchema = z.object({
  name: identifier('branch name').refine((n) => n !== 'else', { error: "branch name 'else' is reserved for the default path" }),
  combinator,
  rules: z
    .array(
      z.union([conditionRuleSchema, conditionGroupSchema], {
        // zod reports a failed union as "Invalid input"; name the failure of the shape the caller meant instead.
        error: (issue) => explainUnion(issue, (input) => (typeof input === 'object' && input !== null && 'rules' in input ? 1 : 0)),
      }),
    )
    .min(1, { error: 'a branch needs at least one rule' })
    .max(20, { error: 'a branch has at most 20 rules' }),
});
export type ConditionBranch = z.infer<typeof conditionBranchSchema>;

export const conditionSettingsSchema = z
  .object({
    branches: z.array(conditionBranchSchema).min(1, { error: 'a Condition block needs at least one branch' }).max(20, { error: 'a Condition block has at most 20 branches' }),
  })
  .superRefine((s, ctx) => checkUnique(s.branches, (b) => b.name, ctx, ['branches'], 'name', 'branch'));
export type ConditionSettings = z.infer<typeof conditionSettingsSchema>;

// --- Code, API, Webhook, Transfer, Close, Message -----------------------------------------

export const codeSettingsSchema = z.object({
  /** ES6 source defining `main(context, variables, plugins)` (spec: Code block). */
  source: requiredText('source', 100_000).refine((s) => /\bfunction\s+main\s*\(|\bmain\s*=\s*(async\s*)?(function\b|\()/.test(s), {
    error: 'source must define a function named main(context, variables, plugins)',
  }),
  timeoutMs: boundedInt('timeoutMs', 10, 10_000, 'milliseconds').default(2_000),
});
export type CodeSettings = z.infer<typeof codeSettingsSchema>;

export const httpMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export const responseMappingSchema = z.object({
  /** Dotted path into the JSON response, e.g. `data.items.0.id`. */
  path: requiredText('responseMappings path', 200),
  variable: identifier('responseMappings variable'),
});

const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, { error: 'header name must be a valid HTTP token' });
const headers = z
  .record(headerName, text('header value', 4_000), {
    error: (issue) => (issue.code === 'invalid_key' ? 'header name must be a valid HTTP token (RFC 9110 sec. 5.1)' : undefined),
  })
  .default({});

export const apiSettingsSchema = z.object({
  method: z.enum(httpMethods, { error: `method must be one of ${httpMethods.join(', ')}` }),
  /** Full URL, or a path starting with '/' resolved against globalSettings.baseUrl. */
  url: requiredText('url', 2_048).refine((u) => isHttpUrl(u) || u.startsWith('/'), {
    error: "url must be an absolute http(s) URL or a path starting with '/'",
  }),
  /** Name of an AuthProfile resource. */
  authProfile: resourceName('authProfile').optional(),
  headers,
  body: text('body', 100_000).optional(),
  responseMappings: z.array(responseMappingSchema).max(50, { error: 'responseMappings must have at most 50 entries' }).default([]),
  timeoutMs: boundedInt('timeoutMs', 100, 30_000, 'milliseconds').default(5_000),
});
export type ApiSettings = z.infer<typeof apiSettingsSchema>;

export const webhookSettingsSchema = z.object({
  url: httpUrl('url'),
  headers,
  /** JSON object sent as the body; string values may contain `{{variable_name}}`. */
  payload: z.record(z.string(), z.unknown(), { error: 'payload must be a JSON object' }).default({}),
});
export type WebhookSettings = z.infer<typeof webhookSettingsSchema>;

/** `sip:`/`sips:` URI (RFC 3261 sec. 19.1) or an E.164 PSTN number. */
export const transferTargetPattern = /^(sips?:[^\s@]+@[^\s@]+|sips?:[A-Za-z0-9.-]+(:\d+)?|\+[1-9][0-9]{7,14})$/;

export const transferSettingsSchema = z.object({
  target: z.string({ error: 'target must be a string' }).regex(transferTargetPattern, {
    error: 'target must be a SIP URI (sip:user@host) or a PSTN number in E.164 form (+14155550100)',
  }),
  bridgeMessage: script('bridgeMessage', 2_000).default(''),
});
export type TransferSettings = z.infer<typeof transferSettingsSchema>;

export const closeSettingsSchema = z.object({
  closingScript: script('closingScript', 5_000).default(''),
  disposition: text('disposition', 100).default(''),
});
export type CloseSettings = z.infer<typeof closeSettingsSchema>;

export const messageSettingsSchema = z.object({
  text: requiredText('text', 5_000),
});
export type MessageSettings = z.infer<typeof messageSettingsSchema>;

// --- Blocks ---------------------------------------------------------------------------------

const blockBase = {
  id: blockId('block id'),
  /** Display label in the builder; not used for routing. */
  label: text('label', 200).optional(),
};

export const blockSchema = z.discriminatedUnion(
  'type',
  [
    z.object({ ...blockBase, type: z.literal('message'), settings: messageSettingsSchema }),
    z.object({ ...blockBase, type: z.literal('smartAi'), settings: smartAiSettingsSchema }),
    z.object({ ...blockBase, type: z.literal('ask'), settings: askSettingsSchema }),
    z.object({ ...blockBase, type: z.literal('condition'), settings: conditionSettingsSchema }),
    z.object({ ...blockBase, type: z.literal('code'), settings: codeSettingsSchema }),
    z.object({ ...blockBase, type: z.literal('api'), settings: apiSettingsSchema }),
    z.object({ ...blockBase, type: z.literal('webhook'), settings: webhookSettingsSchema }),
    z.object({ ...blockBase, type: z.literal('transfer'), settings: transferSettingsSchema }),
    z.object({ ...blockBase, type: z.literal('close'), settings: closeSettingsSchema }),
  ],
  { error: 'block type must be one of message, smartAi, ask, condition, code, api, webhook, transfer, close' },
);
export type Block = z.infer<typeof blockSchema>;
export type BlockType = Block['type'];
export const blockTypes: readonly BlockType[] = ['message', 'smartAi', 'ask', 'condition', 'code', 'api', 'webhook', 'transfer', 'close'];
export type BlockOf<T extends BlockType> = Extract<Block, { type: T }>;

export const connectionSchema = z.object({
  from: blockId('connection from'),
  exit: z.string({ error: 'connection exit must be a string' }).min(1, { error: 'connection exit is required' }).max(64),
  to: blockId('connection to'),
});
export type Connection = z.infer<typeof connectionSchema>;

// --- Global settings ------------------------------------------------------------------------

export const voicemailActions = ['disconnect', 'leaveMessage'] as const;

export const voicemailSchema = z
  .object({
    action: z.enum(voicemailActions, { error: "voicemail.action must be 'disconnect' or 'leaveMessage'" }).default('disconnect'),
    /** Script per language tag, e.g. `{ "en": "...", "hi-IN": "..." }`. */
    messages: z
      .record(languageTag('voicemail message language'), requiredText('voicemail message', 2_000), {
        error: (issue) =>
          issue.code === 'invalid_key' ? "voicemail message language must be a BCP 47 language tag such as 'en', 'hi-IN' or 'ar'" : undefined,
      })
      .default({}),
  })
  .superRefine((v, ctx) => {
    if (v.action === 'leaveMessage' && Object.keys(v.messages).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['messages'], message: 'voicemail action leaveMessage needs a message in at least one language' });
    }
  });

export const globalSettingsSchema = z.object({
  /** Tone, style, dialect, code-switching. */
  persona: script('persona', 10_000).default(''),
  /** Knowledge boundary, behavioural constraints, safety. */
  confines: script('confines', 10_000).default(''),
  voicemail: voicemailSchema.default({ action: 'disconnect', messages: {} }),
  knowledgeBase: z
    .object({
      enabled: z.boolean({ error: 'knowledgeBase.enabled must be true or false' }).default(false),
      /** Empty means the whole library. */
      documentTags: tagList('knowledgeBase.documentTags').default([]),
    })
    .default({ enabled: false, documentTags: [] }),
  /** Base for API blocks whose url is a relative path. */
  baseUrl: httpUrl('baseUrl').optional(),
  smartInterruption: z.boolean({ error: 'smartInterruption must be true or false' }).default(false),
  cautionOnNoisyLines: z.boolean({ error: 'cautionOnNoisyLines must be true or false' }).default(false),
  insights: insightParameterListSchema.default([]),
});
export type GlobalSettings = z.infer<typeof globalSettingsSchema>;

// --- Recipe ---------------------------------------------------------------------------------

export const recipeSchema = z
  .object({
    name: resourceName('name'),
    description: text('description', 1_000).default(''),
    startBlockId: blockId('startBlockId'),
    blocks: z.array(blockSchema).min(1, { error: 'a recipe needs at least one block' }).max(500, { error: 'a recipe has at most 500 blocks' }),
    connections: z.array(connectionSchema).max(5_000, { error: 'a recipe has at most 5000 connections' }).default([]),
    globalSettings: globalSettingsSchema.default(() => globalSettingsSchema.parse({})),
  })
  .superRefine((recipe, ctx) => {
    checkUnique(recipe.blocks, (b) => b.id, ctx, ['blocks'], 'id', 'block id');
    recipe.blocks.forEach((block, index) => {
      if (block.type === 'api' && block.settings.url.startsWith('/') && !recipe.globalSettings.baseUrl) {
        ctx.addIssue({
          code: 'custom',
          path: ['blocks', index, 'settings', 'url'],
          message: `API block '${block.id}' uses the relative url '${block.settings.url}' but globalSettings.baseUrl is not set`,
        });
      }
    });
  });
export type Recipe = z.infer<typeof recipeSchema>;
export type RecipeInput = z.input<typeof recipeSchema>;
