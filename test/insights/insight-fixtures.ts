import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import type { InsightParameter } from '../../control-api/model/domain/insight-parameter.js';
import { recipeSchema, type RecipeInput } from '../../control-api/model/recipes/recipe-schema.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { createTenantsRepository } from '../../control-api/model/tenants/tenants-repository.js';
import { secretKey } from '../helpers/management-app.js';

/** Tenants, recipes, numbers and campaigns for post-call tests, plus a webhook receiver. */
export const webhookSecret = 'whsec_insights_test_0123456789';

export const tenantsRepository = () => createTenantsRepository(createSecretBox(secretKey));

export async function createTenant(store: Store, clientId: string, webhookUrl?: string, timezone = 'Asia/Kolkata'): Promise<string> {
  const created = await tenantsRepository().create(store.db, {
    clientId,
    name: `${clientId} Ltd`,
    timezone,
    settings: { ...(webhookUrl ? { webhookUrl, webhookSecret } : {}), ssrfAllowlist: ['127.0.0.1'] },
  });
  return created.id;
}

export const loanInsights: InsightParameter[] = [
  { name: 'agreed_to_pay', description: 'Did the caller agree to pay the due amount?', type: 'boolean' },
  { name: 'amount', description: 'Amount in rupees the caller promised to pay', type: 'number' },
  { name: 'payment_date', description: 'Date the caller will pay', type: 'date' },
  { name: 'status', description: 'Outcome of the collection call', type: 'enum', options: ['paid', 'promise_to_pay', 'dispute'] },
  { name: 'summary', description: 'Summary of the call in one or two sentences', type: 'text' },
];

export function loanRecipe(insights: InsightParameter[] = loanInsights): RecipeInput {
  return {
    name: 'Loan reminder',
    startBlockId: 'hello',
    blocks: [
      { id: 'hello', type: 'message', settings: { text: 'Namaste {{name}}, this is Acme Finance about your loan payment.' } },
      {
        id: 'agree',
        type: 'ask',
        settings: {
          prompt: 'Ask whether the caller will pay.\nOpening: Will you pay the due amount?\nReprompt: Please say yes or no.',
          variables: [{ name: 'will_pay', type: 'boolean', description: 'caller agrees to pay' }],
        },
      },
      {
        id: 'amount',
        type: 'ask',
        settings: {
          prompt: 'Ask the amount.\nOpening: How much can you pay?\nReprompt: Please tell me an amount in rupees.',
          variables: [{ name: 'amount', type: 'number', description: 'amount in rupees' }],
        },
      },
      { id: 'bye', type: 'close', settings: { closingScript: 'Thank you, goodbye.', disposition: 'promise_to_pay' } },
    ],
    connections: [
      { from: 'hello', exit: 'next', to: 'agree' },
      { from: 'agree', exit: 'next', to: 'amount' },
      { from: 'amount', exit: 'next', to: 'bye' },
    ],
    globalSettings: { insights },
  };
}

export interface Provisioned {
  readonly recipeId: string;
  readonly numberId: string;
  readonly campaignId: string;
}

/** A recipe, a number on it and a campaign dialling from it, inserted as the domain tables hold them. */
export async function provision(store: Store, tenantId: string, e164: string, recipe: RecipeInput = loanRecipe(), campaignName = 'Loan reminders'): Promise<Provisioned> {
  const spec = recipeSchema.parse(recipe);
  const { db } = store;
  const r = await db.insertInto('recipes').values({ tenant_id: tenantId, name: spec.name, spec: JSON.stringify(spec) }).returning('id').executeTakeFirstOrThrow();
  const n = await db
    .insertInto('phone_numbers')
    .values({ tenant_id: tenantId, e164, recipe_id: r.id, sip_trunk_id: null, provider: 'nativeStack', enabled: true, spec: JSON.stringify({ phoneNumber: e164 }) })
    .returning('id')
    .executeTakeFirstOrThrow();
  const c = await db
    .insertInto('campaigns')
    .values({ tenant_id: tenantId, name: campaignName, recipe_id: r.id, phone_number_id: n.id, published: true, spec: JSON.stringify({ name: campaignName }) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { recipeId: r.id, numberId: n.id, campaignId: c.id };
}

export interface ReceivedWebhook {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly status: number;
}

/** A real HTTP server on 127.0.0.1 that records each POST and answers with the queued statuses (then 200). */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly statuses: number[] = [];
  private server: Server | undefined;

  answer(...statuses: number[]): void {
    this.statuses.push(...statuses);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const status = this.statuses.shift() ?? 200;
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
        res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}/hooks/analysis`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Polls `check` until it returns a value (not undefined) or the time is up. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
