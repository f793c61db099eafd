import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import { StoreTrunkRegistrations } from '../../control-api/features/gateway-adapters/store-trunk-registrations.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { TrunkRegistrar } from '../../gateway/registration/trunk-registrar.js';
import { daemon, freePort, udpAsk, until, type Daemon } from '../helpers/edge-cluster.js';
import { numberDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import { expectSippSuccess, runSipp, waitFor } from '../helpers/sipp.js';
import { startGatewayFixture, type GatewayFixture } from './gateway-harness.js';

const config = path.join(path.dirname(fileURLToPath(import.meta.url)), 'kamailio-registrar.cfg');
/** The registrar's own loopback address: nothing else in the suite uses it, and no trunk lists it. */
const registrarAddress = '127.0.0.31';

/** Debian's Kamailio as the carrier's registrar and proxy (kamailio-registrar.cfg); ready once it answers OPTIONS. */
async function startRegistrar(port: number, workDir: string): Promise<Daemon> {
  const d = daemon('kamailio', [
    '-DD', '-E', '-f', config, '-Y', workDir, '-m', '32', '-M', '8',
    '-l', `udp:${registrarAddress}:${port}`,
    '-A', 'PASSWORD="reg-secret-2"', '-A', 'AUTH_USER="acme-kam"', '-A', 'MAX_EXPIRES=10',
  ], { detached: true });
  const probe = (n: number): Buffer =>
    Buffer.from(
      `OPTIONS sip:${registrarAddress}:${port} SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bK-ready-${n};rport\r\nMax-Forwards: 70\r\n` +
        `From: <sip:ready@127.0.0.1>;tag=r${n}\r\nTo: <sip:${registrarAddress}>\r\nCall-ID: ready-${n}@127.0.0.1\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n`,
    );
  let n = 0;
  await until('kamailio registrar', async () => (await udpAsk(registrarAddress, port, probe(++n), '127.0.0.1', 300))?.toString().startsWith('SIP/2.0 200') === true, d, 20_000);
  return d;
}

/**
 * A trunk registering with Kamailio's registrar (usrloc in memory, digest from a plaintext
 * password): the binding Kamailio grants (10 s, less than asked) is refreshed, a call for the
 * address-of-record reaches the trunk's number through Kamailio's lookup, a restart of the
 * registrar (every binding lost) is survived by the next refresh, and stop removes the binding.
 */
describe('gateway: a trunk registers with Kamailio (registrar, usrloc, auth)', function () {
  this.timeout(120_000);
  const box = testBox();
  const did = '+914440000011';
  let fx: GatewayFixture;
  let registrar: TrunkRegistrar;
  let kamailio: Daemon | undefined;
  let port: number;
  let workDir: string;

  before(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'kamailio-registrar-'));
    port = await freePort(registrarAddress);
    kamailio = await startRegistrar(port, workDir);
    fx = await startGatewayFixture({}, (store) => {
      registrar = new TrunkRegistrar({
        registrations: new StoreTrunkRegistrations({ db: store.db, secretBox: box, secretKey: randomBytes(32) }),
        clock: systemClock,
        logger: pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' }),
        pollIntervalMs: 3_600_000,
        backoffBaseSeconds: 1,
        backoffMaxSeconds: 2,
      });
      return { registered: registrar };
    });
    const defs = createResourceDefinitions({ secretBox: box });
    await defs.sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc('kamailio-carrier', {
      inbound: { terminationAddresses: [], dids: [did] },
      outbound: { username: 'acme-kam', password: 'reg-secret-2' },
      registration: { registrar: registrarAddress, port, domain: 'carrier.test', expiresSeconds: 60 },
    }) as never);
    await defs.phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(did, 'Flow', { provider: { type: 'customSipTrunk', trunk: 'kamailio-carrier' } }) as never);
  });
  after(async () => {
    await registrar?.stop(0);
    await fx?.close();
    await kamailio?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  const snapshot = () => registrar.snapshots()[0]?.snapshot;
  /** A call for the AOR `acme-kam` sent to Kamailio, which looks up the binding and relays it (record-routed). */
  const callThroughRegistrar = () =>
    runSipp({ target: `${registrarAddress}:${port}`, localIp: '127.0.0.32', scenario: 'uac-invite-via-proxy-expect-200-gateway-bye.xml', service: 'acme-kam', keys: { caller: 'gw-hangup', to_user: did } });

  it('registers, is refreshed before the 10 s Kamailio granted run out, and takes the call Kamailio relays to the Contact', async () => {
    registrar.start(fx.gateway.stack, fx.target);
    await waitFor(() => snapshot()?.state === 'registered', 15_000);
    const granted = (snapshot()?.expiresAt ?? 0) - Date.now();
    assert.ok(granted > 0 && granted <= 10_000, `Kamailio's max_expires (10 s) was taken, not the 60 s asked: ${granted} ms`);
    const first = snapshot()?.successes ?? 0;
    await waitFor(() => (snapshot()?.successes ?? 0) > first, 15_000);
    assert.equal(snapshot()?.state, 'registered');

    const before = fx.handler.calls.length;
    expectSippSuccess(await callThroughRegistrar());
    const info = fx.handler.calls[before]?.call.info;
    assert.equal(info?.dialled, did);
    assert.equal(info?.remoteAddress, registrarAddress, 'the call came from the registrar, which no trunk lists');
  });

  it('survives a restart of the registrar: the next refresh binds the Contact again', async () => {
    await kamailio?.stop();
    kamailio = await startRegistrar(port, workDir);
    // The new Kamailio knows no binding until our refresh comes.
    const since = snapshot()?.successes ?? 0;
    await waitFor(() => (snapshot()?.successes ?? 0) > since && snapshot()?.state === 'registered', 30_000);
    const before = fx.handler.calls.length;
    expectSippSuccess(await callThroughRegistrar());
    assert.equal(fx.handler.calls[before]?.call.info.dialled, did);
  });

  it('removes the binding on stop (Expires: 0): the registrar then has no Contact for the AOR', async () => {
    await registrar.stop(5_000);
    expectSippSuccess(await runSipp({ target: `${registrarAddress}:${port}`, localIp: '127.0.0.32', scenario: 'uac-invite-expect-404.xml', service: 'acme-kam' }));
  });
});
