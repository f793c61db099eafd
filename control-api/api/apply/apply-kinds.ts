import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { tenantRequestSchema, type TenantSpec, type TenantUpdate } from '../../model/domain/tenant.js';
import type { TenantAdmin } from '../../model/tenants/tenant-admin.js';
import type { ResourceDefinition, StoredResource } from '../../model/resources/resource-definition.js';
import type { Database } from '../../platform/store/schema.js';

/**
 * What `apply` needs of a kind, tenant-scoped or not: validate, key, find, create, update, compare.
 * Tenant-scoped kinds come straight from their `ResourceDefinition`; the Tenant kind itself is
 * adapted from the tenants repository (`tenantScoped: false`).
 */
export interface ApplyKind {
  readonly kind: string;
  readonly tenantScoped: boolean;
  readonly schema: z.ZodType;
  naturalKey(spec: unknown): string;
  find(db: Kysely<Database>, tenantId: string | undefined, key: string): Promise<StoredResource | undefined>;
  create(db: Kysely<Database>, tenantId: string | undefined, spec: unknown): Promise<StoredResource>;
  update(db: Kysely<Database>, tenantId: string | undefined, id: string, spec: unknown): Promise<StoredResource>;
  isUnchanged(db: Kysely<Database>, stored: StoredResource, spec: unknown): Promise<boolean>;
}

const tenantRequired = (kind: string): never => {
  throw new Error(`${kind} is tenant-scoped: a tenant id is required`);
};

export function applyKindOf(definition: ResourceDefinition): ApplyKind {
  return {
    kind: definition.kind,
    tenantScoped: true,
    schema: definition.schema,
    naturalKey: (spec) => definition.naturalKey(spec),
    find: (db, tenantId, key) => definition.repository.findByNaturalKey(db, tenantId ?? tenantRequired(definition.kind), key),
    create: (db, tenantId, spec) => definition.repository.create(db, tenantId ?? tenantRequired(definition.kind), spec),
    update: (db, tenantId, id, spec) => definition.repository.update(db, tenantId ?? tenantRequired(definition.kind), id, spec),
    isUnchanged: (db, stored, spec) => definition.repository.isUnchanged(db, stored, spec),
  };
}

/**
 * Dependency order, so a reference by natural key always points at something applied earlier in
 * the same run: tenants first, campaigns (which name numbers and recipes) last. Kinds not listed
 * follow in registry order.
 */
export const applyOrder: readonly string[] = [
  'Tenant',
  'BusinessHours',
  'SipTrunk',
  'AuthProfile',
  'SpeechProfile',
  'PronunciationEntry',
  'KnowledgeDocument',
  'Recipe',
  'PhoneNumber',
  'Campaign',
];

export function orderKinds(kinds: readonly ApplyKind[]): ApplyKind[] {
  const rank = (k: ApplyKind): number => {
    const i = applyOrder.indexOf(k.kind);
    return i >= 0 ? i : applyOrder.length + kinds.indexOf(k);
  };
  return [...kinds].sort((a, b) => rank(a) - rank(b));
}

/** The Tenant kind: natural key `clientId`, not inside any tenant. */
export function tenantApplyKind(tenants: TenantAdmin): ApplyKind {
  const withoutClientId = (spec: TenantSpec): TenantUpdate => {
    const { clientId: _key, ...rest } = spec;
    return rest;
  };
  return {
    kind: 'Tenant',
    tenantScoped: false,
    schema: tenantRequestSchema,
    naturalKey: (spec) => (spec as TenantSpec).clientId,
    find: (db, _tenantId, key) => tenants.findByClientId(db, key),
    create: (db, _tenantId, spec) => tenants.create(db, spec as TenantSpec),
    update: (db, _tenantId, id, spec) => tenants.update(db, id, withoutClientId(spec as TenantSpec)),
    isUnchanged: (db, stored, spec) => tenants.isUnchanged(db, stored as StoredResource<TenantSpec>, spec as TenantSpec),
  };
}

/** Every kind `apply` understands, in dependency order. */
export function allApplyKinds(definitions: readonly ResourceDefinition[], tenants: TenantAdmin): ApplyKind[] {
  return orderKinds([tenantApplyKind(tenants), ...definitions.map(applyKindOf)]);
}
