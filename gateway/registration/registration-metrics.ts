import { sampledCounter, sampledGauge, type Sample } from '../../core/metrics.js';
import type { RegistrationSnapshot } from './register-client.js';

/** What a running TrunkRegistrar shows at scrape time. */
export interface RegistrationsView {
  snapshots(): ReadonlyArray<{ readonly trunkId: string; readonly tenantId: string; readonly snapshot: RegistrationSnapshot }>;
}

const views = new Set<RegistrationsView>();

export function watchRegistrations(view: RegistrationsView): () => void {
  views.add(view);
  return () => views.delete(view);
}

/** The states a registration shows (register-state.ts), every one sampled so a dashboard sees 0s too. */
const shownStates = ['registering', 'registered', 'refreshing', 'backing-off', 'failed', 'unregistering'] as const;

function* all(): Generator<{ trunkId: string; tenantId: string; snapshot: RegistrationSnapshot }> {
  for (const v of views) yield* v.snapshots();
}

// Read from the clients at scrape time: nothing is counted per REGISTER. Tenant and trunk ids are
// bounded by configuration.
sampledGauge('sip_registration_state', 'Trunk registrations with their carriers (RFC 3261 sec. 10.2): 1 for the state each is in, by tenant, trunk and state', ['tenant', 'trunk', 'state'], () => {
  const samples: Sample[] = [];
  for (const r of all()) for (const state of shownStates) samples.push([{ tenant: r.tenantId, trunk: r.trunkId, state }, r.snapshot.state === state ? 1 : 0]);
  return samples;
});

sampledGauge('sip_registration_expiry_seconds', 'Seconds until the registrar drops the binding unless refreshed (registered trunks only)', ['tenant', 'trunk'], () => {
  const samples: Sample[] = [];
  const now = Date.now();
  for (const r of all()) if (r.snapshot.expiresAt !== undefined) samples.push([{ tenant: r.tenantId, trunk: r.trunkId }, Math.max(0, (r.snapshot.expiresAt - now) / 1000)]);
  return samples;
});

sampledCounter('sip_registrations_granted_total', 'REGISTERs the registrar accepted (bindings added or refreshed) since the client started, by tenant and trunk', ['tenant', 'trunk'], () => {
  const samples: Sample[] = [];
  for (const r of all()) samples.push([{ tenant: r.tenantId, trunk: r.trunkId }, r.snapshot.successes]);
  return samples;
});
