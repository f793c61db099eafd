import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { acceptMessage } from '../../control-api/features/campaigns/accept-message.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import type { CampaignSpec } from '../../control-api/model/domain/campaign.js';
import { campaignDoc, numberDoc, recipeDoc, trunkDoc } from './resource-documents.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { migrateToLatest } from '../../control-api/platform/store/migrate.js';

/**
 * The platform as a child process that dials campaign calls (gateway + worker roles, the
 * production composition), for the kill -9 test and bench: a store seeded with N calls due at
 * once, each to its own callee, over a custom trunk to a loopback callee.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface DialingSeed {
  readonly calls: number;
  /** The callee's UDP port. */
  readonly calleePort: number;
  /** 32-byte key the trunk password is sealed with; the child gets it as SECRET_KEY. */
  readonly secretKey: Buffer;
  /**
   * Retries of `failed` only, 1 minute apart. The callee answers busy, which is then final: a
   * second call to a callee can only be the retry of an attempt lost with a killed worker.
   */
  readonly retries: number;
}

/** Migrates the store and seeds a tenant, a trunk to the callee, a campaign and the due messages. */
export async function seedDialing(store: Store, seed: DialingSeed, now: number): Promise<void> {
  const db = store.db;
  await migrateToLatest(db);
  const defs = createResourceDefinitions({ secretBox: createSecretBox(seed.secretKey) });
  const tenant = await db.insertInto('tenants').values({ client_id: 'acme', name: 'Acme' }).returning('id').executeTakeFirstOrThrow();
  await defs.recipe.repository.create(db, tenant.id, recipeDoc('Flow') as never);
  await defs.sipTrunk.repository.create(db, tenant.id, trunkDoc('callee', {
    inbound: { terminationAddresses: ['127.0.0.99'], dids: [] },
    outbound: { address: '127.0.0.1', port: seed.calleePort, transport: 'udp', username: 'acme-out', password: 'trunk-secret-1' },
  }) as never);
  await defs.phoneNumber.repository.create(db, tenant.id, numberDoc('+914455500001', 'Flow', { provider: { type: 'customSipTrunk', trunk: 'callee' } }) as never);
  const campaign = await defs.campaign.repository.create(db, tenant.id, campaignDoc('Kill -9', '+914455500001', 'Flow', {
    published: true,
    maxRetries: seed.retries,
    ...(seed.retries > 0 ? { retryIntervalMinutes: 1, retryScenarios: ['failed'] } : {}),
  }) as CampaignSpec);
  for (let i = 0; i < seed.calls; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, seed.calls - i) }, (_, k) =>
        acceptMessage(db, tenant.id, { campaignId: campaign.id, to: `+9198${String(10_000_000 + i + k)}`, variables: {}, scheduledAt: now, bypassCallingWindow: true }, { now }),
      ),
    );
  }
}

/** Environment for the child: loopback SIP on ephemeral ports, RTP ports for every call, the store. */
export function dialingEnv(options: { dataDir: string; secretKey: Buffer; calls: number; url?: string; leaseMs: number; rtpPortMin: number; extra?: Record<string, string> }): Record<string, string> {
  return {
    ROLES: 'gateway,worker',
    DATA_DIR: options.dataDir,
    SECRET_KEY: options.secretKey.toString('hex'),
    SIP_HOST: '127.0.0.1',
    SIP_PORT: '0',
    SIP_TLS_PORT: '0',
    SIP_WS_PORT: '0', SIP_WSS_PORT: '0',
    PROVIDERS_HOST: '127.0.0.1',
    PROVIDERS_PORT: '0',
    SIP_PUBLIC_ADDRESS: '127.0.0.1',
    RTP_BIND_ADDRESS: '127.0.0.1',
    RTP_PORT_MIN: String(options.rtpPortMin),
    RTP_PORT_MAX: String(options.rtpPortMin + 4 * options.calls + 200),
    SCHEDULER_LEASE_MS: String(options.leaseMs),
    ...(options.url ? { DATABASE_URL: options.url } : {}),
    ...options.extra,
  };
}

export interface PlatformChild {
  readonly child: ChildProcess;
  /** Resolves once the platform logged that it started; rejects if it exits first. */
  readonly up: Promise<void>;
  readonly exited: Promise<number | null>;
  /** Warnings and errors it logged (JSON lines). */
  readonly warnings: string[];
}

/** Starts `bin/platform.ts` with `env`; `nodeArgs` go before the script (e.g. --cpu-prof). */
export function startPlatformChild(env: Record<string, string>, nodeArgs: readonly string[] = []): PlatformChild {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'bin/platform.ts'], { cwd: root, env: { ...process.env, ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const warnings: string[] = [];
  const up = new Promise<void>((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (line.includes('"msg":"platform started"')) resolve();
        if (/"level":"(warn|error|fatal)"/.test(line)) warnings.push(line);
      }
    });
    void exited.then((code) => reject(new Error(`the platform exited (${code}) before it started`)));
  });
  up.catch(() => undefined);
  return { child, up, exited, warnings };
}
