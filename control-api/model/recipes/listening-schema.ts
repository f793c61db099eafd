import { z } from 'zod';
import { boundedInt, checkUnique, identifier, requiredText, tagList, text } from '../domain/common.js';
import { defaultDtmfCollection } from '../../../core/ports/conversation.js';

/**
 * The settings of the blocks that listen (SmartAI and Ask): intents, extracted variables, keypad
 * rules and the thresholds of hearing. Kept apart from recipe-schema.ts, which re-exports them.
 */

/** Text spoken or sent to the LLM; may contain `{{variable_name}}`. */
const script = (field: string, max = 20_000) => text(field, max);

/**
 * `digits` is a string of digits (an order number, an id, a phone number): captured from digit
 * words ("one two three") or the keypad, kept with its leading zeros, and read back digit by digit.
 */
export const variableTypes = ['text', 'boolean', 'number', 'date', 'enum', 'digits'] as const;
export type VariableType = (typeof variableTypes)[number];

const enumOptions = (field: string) =>
  z
    .array(requiredText(`${field} option`, 100), { error: `${field} must be a list of strings` })
    .max(50, { error: `${field} must have at most 50 options` });

/** A variable extracted from the conversation (spec: "Intents and variable extraction"). */
export const extractedVariableSchema = z
  .object({
    name: identifier('variable name'),
    type: z.enum(variableTypes, { error: `variable type must be one of ${variableTypes.join(', ')}` }),
    description: text('variable description', 300).default(''),
    options: enumOptions('variable options').optional(),
    /**
     * The question that asks for this value alone ("Which day would suit you?"): an Ask without
     * a question in its prompt speaks it, and so does a block whose reading back of the value
     * was denied. Absent: one is built from the type and the description.
     */
    question: text('variable question', 300).optional(),
    /**
     * How many digits a `digits` value has when it always has the same number (an order number of
     * 6): the offline recogniser then listens for exactly that many, instead of dropping or adding
     * one (docs/recipes.md).
     */
    length: boundedInt('variable length', 1, 32, 'digits').optional(),
  })
  .superRefine((v, ctx) => {
    if (v.type !== 'digits' && v.length !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['length'], message: `length is only allowed on digits variables ('${v.name}' is ${v.type})` });
    }
    if (v.type === 'enum' && (!v.options || v.options.length === 0)) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: `enum variable '${v.name}' needs at least one option` });
    }
    if (v.type !== 'enum' && v.options !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: `options are only allowed on enum variables ('${v.name}' is ${v.type})` });
    }
  });
export type ExtractedVariable = z.infer<typeof extractedVariableSchema>;

/** Exit names the LLM blocks reserve for themselves; an intent may not take them. */
export const reservedLlmExits = ['fallback', 'next'] as const;

export const intentSchema = z.object({
  name: identifier('intent name').refine((n) => !(reservedLlmExits as readonly string[]).includes(n), {
    error: `intent name must not be one of the reserved exits: ${reservedLlmExits.join(', ')}`,
  }),
  description: requiredText('intent description', 500),
  /**
   * Phrases a caller says for this intent ("can I reschedule", "move it to another day"). The
   * offline recogniser can only hear what some block expects, and the offline engine matches
   * them exactly; an LLM reads them as examples.
   */
  examples: z.array(requiredText('intent example', 200)).max(50, { error: 'intent examples must have at most 50 entries' }).default([]),
  /**
   * Whether leaving through this intent changes something (cancels, books, promises, transfers).
   * Absent means true: such an exit is taken only on a confident reading of the caller, else the
   * meaning is confirmed first. `false` marks an informational exit (docs/recipes.md).
   */
  action: z.boolean({ error: 'intent action must be true or false' }).optional(),
  /**
   * How the agent checks this meaning with the caller, as words said to them ("you want to
   * cancel the appointment": "Just to check: you want to cancel the appointment?"). May use the
   * block's variables (`{{new_date}}`), read as they would be stored. Absent: built from the
   * description.
   */
  confirmation: text('intent confirmation', 300).optional(),
  /**
   * The block's variables this intent stores (a promise: its amount and date). Only these are
   * kept when the block leaves through it; a turn that states all of them (and names no other
   * intent) means this intent. Absent: every variable the deciding turn stated.
   */
  captures: z.array(identifier('intent captures')).max(30, { error: 'intent captures must have at most 30 entries' }).optional(),
});
export type Intent = z.infer<typeof intentSchema>;

/** Keypad entry rules of a listening block (RFC 4733 digits). */
export const dtmfSettingsSchema = z.object({
  maxDigits: boundedInt('dtmf.maxDigits', 1, 64, 'digits').default(defaultDtmfCollection.maxDigits),
  terminator: z.enum(['#', '*', ''], { error: "dtmf.terminator must be '#', '*' or '' (none)" }).default(defaultDtmfCollection.terminator),
  interDigitTimeoutMs: boundedInt('dtmf.interDigitTimeoutMs', 500, 20_000, 'ms').default(defaultDtmfCollection.interDigitTimeoutMs),
});
export type DtmfSettings = z.infer<typeof dtmfSettingsSchema>;

const confidence = (field: string, fallback: number) =>
  z
    .number({ error: `${field} must be a number` })
    .min(0, { error: `${field} must be between 0 and 1` })
    .max(1, { error: `${field} must be between 0 and 1` })
    .default(fallback);

export const speechNormalizationRules = ['numbers', 'dates', 'times', 'currency', 'units', 'phoneNumbers', 'ordinals'] as const;

const llmSettingsShape = {
  prompt: requiredText('prompt', 20_000),
  additionalInstructions: script('additionalInstructions', 5_000).default(''),
  /** Turns before the block gives up and leaves through `fallback`. */
  retryLimit: boundedInt('retryLimit', 1, 20, 'turns').default(3),
  conversationHistory: z.boolean({ error: 'conversationHistory must be true or false' }).default(true),
  bargeIn: z.boolean({ error: 'bargeIn must be true or false' }).default(true),
  nudge: z.boolean({ error: 'nudge must be true or false' }).default(true),
  /** Silence before a nudge (with nudge off the block just listens on). Default: the platform's listen timeout (8 s). */
  nudgeAfterMs: boundedInt('nudgeAfterMs', 1_000, 120_000, 'ms').optional(),
  dtmf: dtmfSettingsSchema.default(defaultDtmfCollection),
  /**
   * Never a wrong branch on a doubtful hearing: below `confirmBelowConfidence` the block asks
   * "Did you say ...?" before acting on what it heard; below `rejectBelowConfidence` it treats
   * the words as not understood and reprompts (docs/recipes.md: confidence).
   */
  confirmBelowConfidence: confidence('confirmBelowConfidence', 0.6),
  rejectBelowConfidence: confidence('rejectBelowConfidence', 0.3),
  answerFlow: z
    .object({
      enabled: z.boolean({ error: 'answerFlow.enabled must be true or false' }).default(false),
      /** Empty means the whole knowledge library. */
      documentTags: tagList('answerFlow.documentTags').default([]),
      formattingInstructions: text('answerFlow.formattingInstructions', 2_000).default(''),
    })
    .default({ enabled: false, documentTags: [], formattingInstructions: '' }),
  speechNormalization: z
    .array(z.enum(speechNormalizationRules, { error: `speechNormalization rule must be one of ${speechNormalizationRules.join(', ')}` }))
    .default([]),
  expressiveness: z
    .number({ error: 'expressiveness must be a number' })
    .min(0, { error: 'expressiveness must be between 0 and 1' })
    .max(1, { error: 'expressiveness must be between 0 and 1' })
    .default(0.5),
  intents: z.array(intentSchema).max(30, { error: 'intents must have at most 30 entries' }).default([]),
  variables: z.array(extractedVariableSchema).max(30, { error: 'variables must have at most 30 entries' }).default([]),
  /** Variable that receives the detected intent's name (spec: "Intent passing"). */
  intentVariable: identifier('intentVariable').optional(),
};

const checkLlmSettings = (
  s: { intents: Intent[]; variables: ExtractedVariable[]; confirmBelowConfidence: number; rejectBelowConfidence: number; dtmf: DtmfSettings },
  ctx: z.RefinementCtx,
) => {
  // A keyed entry ends at maxDigits: below a digit string's length no entry could ever hold it.
  for (const v of s.variables) {
    if (v.type === 'digits' && v.length !== undefined && v.length > s.dtmf.maxDigits) {
      ctx.addIssue({ code: 'custom', path: ['dtmf', 'maxDigits'], message: `dtmf.maxDigits (${s.dtmf.maxDigits}) must be at least the length of '${v.name}' (${v.length}): a keyed entry ends at maxDigits` });
    }
  }
  checkUnique(s.intents, (i) => i.name, ctx, ['intents'], 'name', 'intent');
  checkUnique(s.variables, (v) => v.name, ctx, ['variables'], 'name', 'variable');
  const declared = new Set(s.variables.map((v) => v.name));
  s.intents.forEach((intent, i) =>
    (intent.captures ?? []).forEach((name, j) => {
      if (!declared.has(name)) ctx.addIssue({ code: 'custom', path: ['intents', i, 'captures', j], message: `intent '${intent.name}' captures '${name}', which is not one of the block's variables` });
    }),
  );
  if (s.rejectBelowConfidence > s.confirmBelowConfidence) {
    ctx.addIssue({ code: 'custom', path: ['rejectBelowConfidence'], message: 'rejectBelowConfidence must not be above confirmBelowConfidence' });
  }
};

export const smartAiSettingsSchema = z.object(llmSettingsShape).superRefine(checkLlmSettings);
export type SmartAiSettings = z.infer<typeof smartAiSettingsSchema>;

/** Ask captures a single piece of information, so it must name at least the variable it fills. */
export const askSettingsSchema = z.object(llmSettingsShape).superRefine((s, ctx) => {
  checkLlmSettings(s, ctx);
  if (s.variables.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['variables'], message: 'an Ask block must extract at least one variable' });
  }
});
export type AskSettings = z.infer<typeof askSettingsSchema>;
