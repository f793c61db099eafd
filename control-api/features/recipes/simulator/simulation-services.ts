import { sql } from 'kysely';
import { AppError } from '../../../../core/errors.js';
import { openStore, type Store } from '../../../platform/store/database.js';
import { migrateToLatest } from '../../../platform/store/migrate.js';
import { bareClusterSeed } from '../../../platform/store/pglite-seed.js';
import { PgKnowledgeSearch } from '../knowledge/pg-knowledge-search.js';
import type { HttpRequest, HttpResponse, OutboundHttp, WebhookSender } from '../../../platform/net/outbound-http.js';
import type { KnowledgeSearch } from '../runtime/services.js';
import type { HttpMock, KnowledgeDoc } from './scenario-schema.js';

/** Outbound HTTP answered from the scenario's mocks, so scripted tests never touch a network. */
export class MockHttp implements OutboundHttp {
  readonly requests: HttpRequest[] = [];

  constructor(private readonly mocks: readonly HttpMock[]) {}

  async request(_tenantId: string, request: HttpRequest): Promise<HttpResponse> {
    this.requests.push(request);
    const url = new URL(request.url);
    const mock = this.mocks.find((m) => m.method === request.method && (m.url === request.url || (m.url.startsWith('/') && m.url === `${url.pathname}${url.search}`)));
    if (!mock) throw new AppError('unavailable', `no HTTP mock for ${request.method} ${url.pathname}`);
    const body = mock.body ?? (mock.json === undefined ? '' : JSON.stringify(mock.json));
    return { status: mock.status, headers: { 'content-type': 'application/json' }, body };
  }
}

export interface SentWebhook {
  readonly url: string;
  readonly payload: unknown;
}

/** Records webhooks instead of sending them. */
export class RecordingWebhooks implements WebhookSender {
  readonly sent: SentWebhook[] = [];

  async send(_tenantId: string, url: string, payload: unknown): Promise<number> {
    this.sent.push({ url, payload });
    return 200;
  }
}

export interface SimulationKnowledge {
  readonly search: KnowledgeSearch;
  readonly tenantId: string;
  close(): Promise<void>;
}

/**
 * The scenario's documents in an in-memory PGlite, searched by the same PostgreSQL full-text
 * code the platform uses, so a simulated AnswerFlow retrieves what production would.
 */
export async function simulationKnowledge(docs: readonly KnowledgeDoc[]): Promise<SimulationKnowledge> {
  const store: Store = await openStore({ pgliteDir: 'memory://', seed: await bareClusterSeed() });
  await migrateToLatest(store.db);
  const tenant = await store.db.insertInto('tenants').values({ client_id: 'simulation', name: 'Simulation' }).returning('id').executeTakeFirstOrThrow();
  for (const doc of docs) {
    await sql`insert into knowledge_documents (tenant_id, name, tags, spec)
      values (${tenant.id}::uuid, ${doc.name}, ${sql.val(doc.tags)}::text[], ${JSON.stringify({ ...doc, contentType: 'text/plain' })}::jsonb)`.execute(store.db);
  }
  return { search: new PgKnowledgeSearch(store.db), tenantId: tenant.id, close: () => store.close() };
}
