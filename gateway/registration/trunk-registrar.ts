import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { PollingLoop } from '../../core/polling-loop.js';
import type { DirectoryTrunk } from '../../core/ports/call-directory.js';
import type { TrunkRegistration, TrunkRegistrations } from '../../core/ports/trunk-registrations.js';
import type { RegisteredContacts } from '../inbound/registered-steps.js';
import { flowTo } from '../outbound/sip-originator.js';
import { SipResolver, defaultPort, type SipTargetResolver } from '../sip/resolve/sip-resolver.js';
import type { Flow } from '../sip/transport/types.js';
import type { SipStack } from '../sip/ua/sip-stack.js';
import { RegisterClient, type RegistrationSnapshot } from './register-client.js';
import { watchRegistrations } from './registration-metrics.js';

export interface TrunkRegistrarOptions {
  readonly registrations: TrunkRegistrations;
  readonly clock: Clock;
  readonly logger: Logger;
  /** RFC 3263 for registrar names (a SipResolver on the system's DNS by default). */
  readonly resolver?: SipTargetResolver;
  /** How often the trunk list is read again (created, changed and deleted trunks), default 30 s. */
  readonly pollIntervalMs?: number;
  /** RFC 5626 sec. 4.5 backoff bounds (defaults 30 s and 1800 s). */
  readonly backoffBaseSeconds?: number;
  readonly backoffMaxSeconds?: number;
}

interface Entry {
  readonly registration: TrunkRegistration;
  readonly client: RegisterClient;
  readonly trunk: DirectoryTrunk;
}

/**
 * Keeps one RegisterClient per registering trunk: reads the trunk list from the control plane
 * (TrunkRegistrations port) at start and every `pollIntervalMs`, starts a client for a new trunk,
 * restarts one whose settings or credentials changed (the revision), un-registers one whose trunk
 * is gone, and un-registers them all on drain. It also answers which trunk a Contact user belongs
 * to (registered-steps.ts), and records each client's state through the port and on /metrics.
 */
export class TrunkRegistrar implements RegisteredContacts {
  private readonly entries = new Map<string, Entry>();
  private readonly byContact = new Map<string, DirectoryTrunk>();
  private stack: SipStack | undefined;
  /** This node's SIP address as a Contact host and port (`203.0.113.5:5060`): the key of its registration rows. */
  private node = '';
  private loop: PollingLoop | undefined;
  private resolver: SipTargetResolver | undefined;
  private unwatch: (() => void) | undefined;

  constructor(private readonly o: TrunkRegistrarOptions) {}

  trunkForContact(user: string): DirectoryTrunk | undefined {
    return this.byContact.get(user);
  }

  /** Every registration's state, for /metrics. */
  snapshots(): Array<{ readonly trunkId: string; readonly tenantId: string; readonly snapshot: RegistrationSnapshot }> {
    return [...this.entries.values()].map((e) => ({ trunkId: e.registration.trunkId, tenantId: e.registration.tenantId, snapshot: e.client.snapshot() }));
  }

  start(stack: SipStack, node: string): void {
    this.stack = stack;
    this.node = node;
    this.unwatch = watchRegistrations(this);
    this.loop = new PollingLoop({
      name: 'trunk registrations',
      clock: this.o.clock,
      logger: this.o.logger,
      intervalMs: this.o.pollIntervalMs ?? 30_000,
      round: () => this.sync(),
    });
    this.loop.start();
  }

  /** Reads the trunk list once more now (tests, and after an apply). */
  wake(): void {
    this.loop?.wake();
  }

  /** Drain and shutdown: no more polling; every binding removed (Expires: 0, RFC 3261 sec. 10.2.2) within `timeoutMs`. */
  async stop(timeoutMs = 5_000): Promise<void> {
    await this.loop?.stop();
    this.loop = undefined;
    await Promise.all([...this.entries.values()].map((e) => e.client.stop(timeoutMs)));
    this.entries.clear();
    this.byContact.clear();
    this.unwatch?.();
  }

  private async sync(): Promise<void> {
    const stack = this.stack;
    if (!stack) return;
    const wanted = await this.o.registrations.list();
    const seen = new Set<string>();
    for (const r of wanted) {
      seen.add(r.trunkId);
      const known = this.entries.get(r.trunkId);
      if (known?.registration.revision === r.revision) {
        // Name, extension or SRTP mode changed: calls to the Contact see it, the binding stays.
        this.byContact.set(r.contactUser, directoryTrunk(r));
        continue;
      }
      if (known) {
        this.o.logger.info({ trunkId: r.trunkId }, 'trunk registration settings changed: registering again');
        this.forget(known);
        // The old binding has the same Contact: the new client's REGISTER replaces it (RFC 3261 sec. 10.3).
        void known.client.stop(0);
      }
      this.begin(stack, r);
    }
    for (const e of [...this.entries.values()]) {
      if (seen.has(e.registration.trunkId)) continue;
      this.o.logger.info({ trunkId: e.registration.trunkId }, 'trunk no longer registers: removing its binding');
      this.forget(e);
      void e.client.stop();
    }
  }

  private forget(e: Entry): void {
    this.entries.delete(e.registration.trunkId);
    this.byContact.delete(e.registration.contactUser);
  }

  private begin(stack: SipStack, r: TrunkRegistration): void {
    const log = this.o.logger.child({ trunkId: r.trunkId, tenantId: r.tenantId, registrar: r.registrar });
    const contact = `sip:${r.contactUser}@${this.node}`;
    let reports = Promise.resolve();
    const client = new RegisterClient({
      stack,
      clock: this.o.clock,
      logger: log,
      target: { domain: r.domain, user: r.user, transport: r.transport, ...(r.credentials ? { credentials: r.credentials } : {}) },
      policy: {
        expiresSeconds: r.expiresSeconds,
        credentials: r.credentials !== undefined,
        contactUser: r.contactUser,
        backoffBaseSeconds: this.o.backoffBaseSeconds ?? 30,
        backoffMaxSeconds: this.o.backoffMaxSeconds ?? 1800,
      },
      targets: () => this.targets(stack, r),
      // Reports go one after another, so the store never ends on an older state than the client's.
      onChange: (snap) => {
        reports = reports.then(() => this.o.registrations
          .report({
            trunkId: r.trunkId,
            tenantId: r.tenantId,
            contact,
            state: snap.state,
            expiresAt: snap.expiresAt === undefined ? undefined : new Date(snap.expiresAt),
            retryAt: snap.retryAt === undefined ? undefined : new Date(snap.retryAt),
            lastError: snap.lastError,
          })
          .catch((error: unknown) => log.warn({ err: error }, 'trunk registration state not recorded')));
      },
    });
    const trunk = directoryTrunk(r);
    this.entries.set(r.trunkId, { registration: r, client, trunk });
    this.byContact.set(r.contactUser, trunk);
    client.start();
  }

  /** The registrar's targets, asked again for every REGISTER (RFC 3263; cached per TTL by the resolver). */
  private async targets(stack: SipStack, r: TrunkRegistration): Promise<Flow[]> {
    const resolver = (this.resolver ??= this.o.resolver ?? new SipResolver());
    const targets = await resolver.resolve(r.registrar, {
      ...(r.port !== undefined && r.port !== defaultPort(r.transport) ? { port: r.port } : {}),
      transport: r.transport,
    });
    return targets.map((t) => flowTo(stack, t, r.registrar));
  }
}

/** The trunk as inbound routing knows it. */
const directoryTrunk = (r: TrunkRegistration): DirectoryTrunk => ({ id: r.trunkId, tenantId: r.tenantId, name: r.name, extension: r.extension, srtp: r.srtp });
