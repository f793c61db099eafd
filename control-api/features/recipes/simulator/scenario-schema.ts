import { z } from 'zod';

/**
 * Scripted simulation file (YAML): caller turns and what the run must produce. Users write these
 * to unit-test their agents; `npm run cli -- simulate <recipe> --script <file>` runs them.
 */
const scalar = z.union([z.string(), z.number(), z.boolean()]);

export const callerTurnSchema = z.union([
  z.string().min(1),
  z.object({ say: z.string().min(1) }).strict(),
  z.object({ dtmf: z.string().regex(/^[0-9*#A-D]+$/, { error: 'dtmf must be digits, *, # or A-D' }) }).strict(),
  z.object({ silence: z.literal(true) }).strict(),
  z.object({ hangup: z.literal(true) }).strict(),
]);
export type CallerTurnInput = z.infer<typeof callerTurnSchema>;

export const httpMockSchema = z.object({
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
  /** Absolute URL, or a path (+ query) matched against any host. */
  url: z.string().min(1),
  status: z.number().int().min(100).max(599).default(200),
  json: z.unknown().optional(),
  body: z.string().optional(),
});
export type HttpMock = z.infer<typeof httpMockSchema>;

export const knowledgeDocSchema = z.object({
  name: z.string().min(1),
  title: z.string().default(''),
  tags: z.array(z.string()).default([]),
  content: z.string().min(1),
});
export type KnowledgeDoc = z.infer<typeof knowledgeDocSchema>;

export const expectationSchema = z
  .object({
    /** Block ids entered, in order, exactly. */
    path: z.array(z.string()).optional(),
    /** Variables that must hold these values at the end (others may exist). */
    variables: z.record(z.string(), scalar.nullable()).optional(),
    disposition: z.string().optional(),
    end: z.enum(['closed', 'transferred', 'callerHangup', 'exitNotConnected', 'error', 'stepLimit']).optional(),
    transferTarget: z.string().optional(),
    /** Substrings of agent lines, in order; checked with the offline engine only (LLM wording varies). */
    agentSays: z.array(z.string()).optional(),
    /** Substrings no agent line may contain (any engine): leaks, wrong scripts. */
    agentNeverSays: z.array(z.string()).optional(),
    /** Webhooks the run must have sent (payload: subset match). */
    webhooks: z.array(z.object({ url: z.string(), payload: z.record(z.string(), z.unknown()).optional() })).optional(),
  })
  .strict();
export type Expectation = z.infer<typeof expectationSchema>;

export const scenarioSchema = z.object({
  name: z.string().min(1),
  variables: z.record(z.string(), scalar).default({}),
  turns: z.array(callerTurnSchema).default([]),
  transfer: z.union([z.object({ ok: z.literal(true) }), z.object({ ok: z.literal(false), reason: z.string() })]).default({ ok: true }),
  http: z.array(httpMockSchema).default([]),
  engines: z.array(z.enum(['offline', 'llm'])).default(['offline', 'llm']),
  expect: expectationSchema.default({}),
});
export type Scenario = z.infer<typeof scenarioSchema>;

export const scenarioFileSchema = z.object({
  /** Recipe file, relative to this file. */
  recipe: z.string().min(1),
  call: z
    .object({
      callerNumber: z.string().default('+919800000000'),
      calledNumber: z.string().default('+918000000000'),
      timezone: z.string().default('UTC'),
      /** ISO instant the simulated call happens at (makes dates deterministic). */
      now: z.string().datetime({ offset: true }).optional(),
      tenantName: z.string().default('Simulation'),
      language: z.string().optional(),
    })
    .default({ callerNumber: '+919800000000', calledNumber: '+918000000000', timezone: 'UTC', tenantName: 'Simulation' }),
  variables: z.record(z.string(), scalar).default({}),
  authProfiles: z
    .record(z.string(), z.union([
      z.object({ type: z.literal('basic'), username: z.string(), password: z.string() }),
      z.object({ type: z.literal('bearer'), token: z.string() }),
      z.object({ type: z.literal('apiKey'), in: z.enum(['header', 'query']).default('header'), name: z.string(), value: z.string() }),
    ]))
    .default({}),
  knowledge: z.array(knowledgeDocSchema).default([]),
  http: z.array(httpMockSchema).default([]),
  scenarios: z.array(scenarioSchema).min(1),
});
export type ScenarioFile = z.infer<typeof scenarioFileSchema>;
