import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import type { CallCompletion, OriginateRequest, OriginateResult, Originator } from '../../core/ports/originator.js';
import type { SecretBox } from '../../control-api/platform/crypto/secret-box.js';
import type { BusinessHoursSpec } from '../../control-api/model/domain/business-hours.js';
import type { CampaignInput, CampaignSpec } from '../../control-api/model/domain/campaign.js';
import type { PhoneNumberSpec } from '../../control-api/model/domain/phone-number.js';
import type { Recipe } from '../../control-api/model/recipes/recipe-schema.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { campaignDoc, numberDoc, recipeDoc } from './resource-documents.js';
import type { Database } from '../../control-api/platform/store/schema.js';
import { issueToken } from '../../control-api/model/tenants/api-tokens.js';
import { createTenantsRepository } from '../../control-api/model/tenants/tenants-repository.js';

/** Seeding helpers and test doubles shared by the campaign tests (not used in production code). */

let numberSeq = 0;

export interface SeededTenant {
  readonly tenantId: string;
  readonly clientId: string;
  readonly token: string;
}

export async function seedTenant(
  db: Kysely<Database>,
  box: SecretBox,
  input: { clientId: string; timezone?: string; webhookSecret?: string; allowLoopback?: boolean },
): Promise<SeededTenant> {
  const tenants = createTenantsRepository(box);
  const created = await tenants.create(db, {
    clientId: input.clientId,
    name: input.clientId,
    timezone: input.timezone ?? 'UTC',
    settings: { ssrfAllowlist: input.allowLoopback ? ['127.0.0.1'] : [], ...(input.webhookSecret ? { webhookSecret: input.webhookSecret } : {}) },
  });
  const { token } = await issueToken(db, { tenantId: created.id, name: 'campaign', scopes: ['campaign'] });
  return { tenantId: created.id, clientId: input.clientId, token };
}

/** A published campaign with its own recipe and number; returns the campaign id. */
export async function seedCampaign(db: Kysely<Database>, box: SecretBox, tenantId: string, name: string, extra: Partial<CampaignInput> = {}): Promise<string> {
  const defs = createResourceDefinitions({ secretBox: box });
  const recipeName = `${name} recipe`;
  if (!(await defs.recipe.repository.findByNaturalKey(db, tenantId, recipeName))) {
    await defs.recipe.repository.create(db, tenantId, recipeDoc(recipeName) as Recipe);
  }
  const number = extra.phoneNumber ?? `+9144${String(4_000_000 + ++numberSeq + (process.pid % 1000) * 10_000).padStart(8, '0')}`;
  if (!(await defs.phoneNumber.repository.findByNaturalKey(db, tenantId, number))) {
    await defs.phoneNumber.repository.create(db, tenantId, numberDoc(number, recipeName) as PhoneNumberSpec);
  }
  const created = await defs.campaign.repository.create(db, tenantId, campaignDoc(name, number, recipeName, { published: true, ...extra, phoneNumber: number }) as CampaignSpec);
  return created.id;
}

export async function seedBusinessHours(db: Kysely<Database>, box: SecretBox, tenantId: string, profile: BusinessHoursSpec): Promise<void> {
  const defs = createResourceDefinitions({ secretBox: box });
  await defs.businessHours.repository.create(db, tenantId, profile);
}

type Script = (request: OriginateRequest) => OriginateResult | Promise<OriginateResult>;

/** Originator test double: answers each call with the next scripted result and records every request. */
export class ScriptedOriginator implements Originator {
  readonly requests: OriginateRequest[] = [];
  private readonly scripts: Script[] = [];
  private fallback: Script = () => ({ outcome: 'failed', reason: 'no script' });

  queue(...scripts: Script[]): this {
    this.scripts.push(...scripts);
    return this;
  }

  otherwise(script: Script): this {
    this.fallback = script;
    return this;
  }

  /** As the SIP originator does: the dial is recorded (`beforeInvite`) before the callee can ring. */
  async originate(request: OriginateRequest): Promise<OriginateResult> {
    this.requests.push(request);
    const script = this.scripts.shift() ?? this.fallback;
    try {
      await request.beforeInvite?.();
    } catch (error) {
      return { outcome: 'failed', reason: `not dialled: ${(error as Error).message}` };
    }
    return script(request);
  }
}

/** An answered call whose completion the test controls. */
export function answeredCall(callId = 'call-1'): { result: OriginateResult; hangUp: (completion?: Partial<CallCompletion>) => void } {
  let resolve: (c: CallCompletion) => void = () => undefined;
  const completion = new Promise<CallCompletion>((r) => (resolve = r));
  return {
    result: { outcome: 'answered', sipStatus: 200, callId, answeredAt: 0, completion },
    hangUp: (c = {}) => resolve({ endedAt: 0, durationMs: 42_000, reason: 'remote-bye', ...c }),
  };
}

export interface ReceivedCallback {
  readonly headers: IncomingHttpHeaders;
  readonly raw: string;
  readonly body: Record<string, unknown>;
}

/** A real HTTP server on 127.0.0.1 that records callbacks; `failNext(n)` answers 503 n times. */
export class CallbackReceiver {
  readonly received: ReceivedCallback[] = [];
  private server: Server | undefined;
  private failures = 0;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (this.failures > 0) {
          this.failures -= 1;
          res.writeHead(503).end();
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        this.received.push({ headers: req.headers, raw, body: JSON.parse(raw) as Record<string, unknown> });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/calls`;
  }

  failNext(n: number): void {
    this.failures = n;
  }

  statuses(messageId: string): string[] {
    return this.received
      .filter((r) => r.body.message_id === messageId)
      .sort((a, b) => Number(a.body.sequence) - Number(b.body.sequence))
      .map((r) => `${String(r.body.status)}#${String(r.body.attempt)}`);
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
