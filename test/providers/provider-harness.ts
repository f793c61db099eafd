import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import type { TranscriptLine } from '../../control-api/features/calls/call-types.js';
import type { SecretBox } from '../../control-api/platform/crypto/secret-box.js';
import type { PhoneNumberInput } from '../../control-api/model/domain/phone-number.js';
import { RecipeCallHandler } from '../../control-api/features/gateway-adapters/recipe-call-handler.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import { ProviderTelephony } from '../../control-api/features/providers/provider-telephony.js';
import { QuickJsCodeRunner } from '../../control-api/features/recipes/code-sandbox/quickjs-code-runner.js';
import { platformServices } from '../../control-api/features/recipes/platform-services.js';
import type { RecipeInput } from '../../control-api/model/recipes/recipe-schema.js';
import { numberDoc, testBox } from '../helpers/resource-documents.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { sealedNumbers } from '../../control-api/model/resources/definitions/lookups.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { PacingScheduler } from '../../media/rtp/pacing-scheduler.js';
import { frameLevelDb } from '../../media/voice/vad.js';
import { freshStore } from '../helpers/stores.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

/**
 * The provider side of the platform as the gateway role composes it, on PostgreSQL: the provider
 * listener on a loopback port, the real recipe runtime and offline voice pipeline (espeak-ng,
 * pocketsphinx) behind it, calls recorded; the fake providers point at it.
 */
export interface ProviderPlatform {
  readonly store: Store;
  readonly box: SecretBox;
  readonly tenantId: string;
  readonly telephony: ProviderTelephony;
  readonly server: RunningServer;
  readonly handler: RecipeCallHandler;
  readonly logger: Logger;
  addRecipe(recipe: RecipeInput): Promise<void>;
  addNumber(number: string, recipe: string, provider: PhoneNumberInput['provider'], extra?: Partial<PhoneNumberInput>): Promise<void>;
  close(): Promise<void>;
}

export async function startProviderPlatform(apiBaseUrls: { providerA: string; providerB?: string; providerC?: string }, options: { reconnectGraceMs?: number } = {}): Promise<ProviderPlatform> {
  const store = await freshStore('postgres');
  const box = testBox();
  const dir = await mkdtemp(path.join(tmpdir(), 'vap-providers-'));
  const logger = pino({ level: process.env.PROVIDER_TEST_LOG ?? 'silent' });
  const tenant = await store.db.insertInto('tenants').values({ client_id: 'acme', name: 'Acme', settings: JSON.stringify({ ssrfAllowlist: ['127.0.0.1'] }) }).returning('id').executeTakeFirstOrThrow();
  const code = new QuickJsCodeRunner({ workers: 1 });
  const handler: RecipeCallHandler = new RecipeCallHandler({
    db: store.db,
    recorder: new CallRecorder({ db: store.db, onConversationEnded: queueCallAnalysis() }),
    services: platformServices({ db: store.db, box, code, logger }),
    logger,
    recordingsDir: path.join(dir, 'recordings'),
    turn: { endpointSilenceMs: 600 },
    // As the gateway role wires it: a provider call's Transfer block goes to its provider.
    transfer: { transfer: (callId, target, signal) => telephony.transfer(callId, target, signal) },
  });
  const scheduler = new PacingScheduler();
  const telephony: ProviderTelephony = new ProviderTelephony({
    numbers: sealedNumbers(store.db),
    box,
    logger,
    clock: systemClock,
    scheduler,
    handler,
    advertisedHost: '127.0.0.1',
    apiBaseUrls: { providerC: 'http://127.0.0.1:9', ...apiBaseUrls },
    streamStartTimeoutMs: 5_000,
    reconnectGraceMs: options.reconnectGraceMs ?? 5_000,
    mediaTimeoutMs: 30_000,
    maxCallsPerNumber: 3,
    maxCallsPerTenant: 10,
  });
  const server = await telephony.listen('127.0.0.1', 0);
  const defs = createResourceDefinitions({ secretBox: box });
  return {
    store,
    box,
    tenantId: tenant.id,
    telephony,
    server,
    handler,
    logger,
    addRecipe: async (recipe) => void (await defs.recipe.repository.create(store.db, tenant.id, recipe as never)),
    addNumber: async (number, recipe, provider, extra = {}) => void (await defs.phoneNumber.repository.create(store.db, tenant.id, numberDoc(number, recipe, { provider, language: 'en-US', ...extra }) as never)),
    close: async () => {
      await telephony.stop(1_000);
      await server.close(500);
      await code.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type CallRow = { id: string; status: string; end_reason: string | null; disposition: string | null; direction: string; variables: unknown; outcome: string | null; phone_number: string | null; remote_number: string | null; message_id: string | null; analysis_status: string; recording_ref: string | null };

/** The record of the call with this remote number once it has ended (it is completed right after the hang-up). */
export async function endedCall(store: Store, remote: string, timeoutMs = 30_000): Promise<CallRow & { lines: TranscriptLine[] }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = (await store.db.selectFrom('calls').selectAll().where('remote_number', '=', remote).orderBy('started_at', 'desc').executeTakeFirst()) as CallRow | undefined;
    if (row?.status === 'ended') {
      const t = await store.db.selectFrom('call_transcripts').select('entries').where('call_id', '=', row.id).executeTakeFirst();
      return { ...row, lines: (t?.entries ?? []) as TranscriptLine[] };
    }
    if (Date.now() > deadline) throw new Error(`no ended call record for ${remote}: ${JSON.stringify(row)}`);
    await sleep(100);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Milliseconds of agent audio (above -40 dBFS) in a list of heard frames. */
export const voicedMs = (frames: readonly Int16Array[]): number => frames.filter((f) => frameLevelDb(f) > -40).length * 20;

/**
 * Waits until the agent has spoken at least `minVoicedMs` since `fromFrame` and then been quiet
 * for `quietMs` (the caller hears the end of the agent's turn).
 */
export async function agentFinished(heard: () => readonly Int16Array[], fromFrame: number, minVoicedMs: number, quietMs = 700, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const frames = heard();
    const since = frames.slice(fromFrame);
    const lastVoiced = since.map((f) => frameLevelDb(f) > -40).lastIndexOf(true);
    if (voicedMs(since) >= minVoicedMs && lastVoiced >= 0 && (since.length - 1 - lastVoiced) * 20 >= quietMs) return frames.length;
    if (Date.now() > deadline) throw new Error(`the agent did not finish a turn (voiced ${voicedMs(since)} ms of ${since.length * 20} ms heard)`);
    await sleep(50);
  }
}

/** The record's lines as `speaker: text`, for failure messages. */
export const shown = (lines: readonly TranscriptLine[]): string => lines.map((l) => `${l.speaker}${l.ignored ? `(ignored: ${l.ignored})` : ''}${l.interrupted ? '(interrupted)' : ''}: ${l.text}`).join('\n');
