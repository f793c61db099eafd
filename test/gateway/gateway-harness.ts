import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import type { ActiveCall, CallHandler } from '../../core/ports/call-handler.js';
import type { MediaDtmfEvent } from '../../core/ports/media.js';
import { StoreCallDirectory } from '../../control-api/features/gateway-adapters/store-call-directory.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { numberDoc, recipeDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import type { Store, StoreKind } from '../../control-api/platform/store/database.js';
import { SipGateway, type SipGatewayOptions } from '../../gateway/inbound/sip-gateway.js';
import { SipOriginator, type SipOriginatorOptions } from '../../gateway/outbound/sip-originator.js';
import { StoreTrunkRoutes } from '../../control-api/features/gateway-adapters/store-trunk-routes.js';
import type { SecretBox } from '../../control-api/platform/crypto/secret-box.js';
import { MediaService } from '../../media/media-service.js';
import { freshStore } from '../helpers/stores.js';


/** What the test CallHandler saw of one call. */
export interface SeenCall {
  readonly call: ActiveCall;
  framesIn: number;
  readonly dtmf: Array<MediaDtmfEvent & { via: string }>;
  endReason?: string;
}

/** Numbers the gateway tests provision (tenant "acme" unless noted). */
export const numbers = {
  trunkDid: '+914440000001',
  disabled: '+914440000002',
  otherTenant: '+14155550100',
  extension: '7001',
} as const;

/**
 * Records every call, counts the caller's audio frames and DTMF, and hangs up by itself after
 * `hangupAfterMs` when the caller's user part is `gw-hangup` (the "BYE from the gateway" case).
 */
export class RecordingCallHandler implements CallHandler {
  readonly calls: SeenCall[] = [];
  private waiters: Array<(c: SeenCall) => void> = [];

  constructor(private readonly hangupAfterMs = 1500) {}

  async handle(call: ActiveCall): Promise<void> {
    const seen: SeenCall = { call, framesIn: 0, dtmf: [] };
    this.calls.push(seen);
    for (const w of this.waiters.splice(0)) w(seen);
    call.on('dtmf', (e) => seen.dtmf.push(e));
    void call.ended.then((end) => (seen.endReason = end.reason));
    if (call.info.caller === 'gw-hangup') setTimeout(() => void call.hangup('test-hangup'), this.hangupAfterMs);
    for await (const frame of call.media.input) {
      if (call.signal.aborted) break;
      if (!frame.concealed) seen.framesIn++;
    }
  }

  last(): SeenCall | undefined {
    return this.calls[this.calls.length - 1];
  }
}

export interface GatewayFixture {
  readonly store: Store;
  readonly gateway: SipGateway;
  readonly handler: RecordingCallHandler;
  readonly media: MediaService;
  readonly target: string;
  readonly ids: { tenantId: string; otherTenantId: string };
  close(): Promise<void>;
}

/**
 * The gateway's outbound side as the platform composes it: the fixture's stack and media, trunks
 * and numbers from its store (trunk passwords opened with `box`), the system clock, silent logs.
 */
export function fixtureOriginator(fx: GatewayFixture, box: SecretBox, options: Partial<SipOriginatorOptions> = {}): SipOriginator {
  return new SipOriginator({
    stack: fx.gateway.stack,
    media: fx.media,
    trunks: new StoreTrunkRoutes({ db: fx.store.db, secretBox: box }),
    directory: new StoreCallDirectory({ db: fx.store.db }),
    registry: fx.gateway.registry,
    clock: systemClock,
    logger: pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' }),
    ...options,
  });
}

/** PostgreSQL (or PGlite) with two tenants, a trunk from 127.0.0.1, numbers; the gateway on 127.0.0.1 random ports. */
export async function startGatewayFixture(
  options: Partial<SipGatewayOptions> = {},
  /** Options that need the store (a directory or handler of the control plane). */
  withStore?: (store: Store) => Partial<SipGatewayOptions>,
  kind: StoreKind = 'postgres',
): Promise<GatewayFixture> {
  const store = await freshStore(kind);
  const db = store.db;
  const defs = createResourceDefinitions({ secretBox: testBox() });
  const rows = await db.insertInto('tenants').values([{ client_id: 'acme', name: 'Acme' }, { client_id: 'other', name: 'Other' }]).returning(['id', 'client_id']).execute();
  const tenantId = rows.find((r) => r.client_id === 'acme')?.id as string;
  const otherTenantId = rows.find((r) => r.client_id === 'other')?.id as string;
  await defs.recipe.repository.create(db, tenantId, recipeDoc('Flow') as never);
  await defs.recipe.repository.create(db, otherTenantId, recipeDoc('Flow') as never);
  await defs.sipTrunk.repository.create(db, tenantId, trunkDoc('carrier', {
    inbound: { terminationAddresses: ['127.0.0.1'], dids: [numbers.trunkDid], extension: numbers.extension },
  }) as never);
  await defs.phoneNumber.repository.create(db, tenantId, numberDoc(numbers.trunkDid, 'Flow', { provider: { type: 'customSipTrunk', trunk: 'carrier' } }) as never);
  await defs.phoneNumber.repository.create(db, tenantId, numberDoc(numbers.disabled, 'Flow', { provider: { type: 'customSipTrunk', trunk: 'carrier' }, enabled: false }) as never);
  await defs.phoneNumber.repository.create(db, otherTenantId, numberDoc(numbers.otherTenant, 'Flow') as never);

  const logger = pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' });
  const portMin = 40_000 + 2 * Math.floor(Math.random() * 5000);
  const media = new MediaService({ bindAddress: '127.0.0.1', portMin, portMax: portMin + 200, logger });
  const handler = new RecordingCallHandler();
  const gateway = await SipGateway.start({
    transports: { host: '127.0.0.1', port: 0, tcpPort: 0 },
    directory: new StoreCallDirectory({ db }),
    media,
    callHandler: handler,
    clock: systemClock,
    logger,
    publicAddress: '127.0.0.1',
    ringMs: 300,
    ...options,
    ...withStore?.(store),
  });
  return {
    store,
    gateway,
    handler,
    media,
    target: `127.0.0.1:${gateway.ports.UDP}`,
    ids: { tenantId, otherTenantId },
    close: async () => {
      await gateway.stop(500);
      await media.close();
      await store.close();
    },
  };
}
