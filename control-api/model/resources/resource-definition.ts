import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Database } from '../../platform/store/schema.js';

/**
 * The contract between the domain model (one definition per resource kind) and the generic
 * machinery that serves every kind the same way: the management REST API, the OpenAPI document
 * and declarative `apply`. A new resource kind is a new definition, never a new special case.
 *
 * References between resources are by natural key (recipe name, phone number in E.164, trunk
 * name, ...), so a tenant's whole configuration reads well in git and applies idempotently.
 */
export interface ResourceDefinition<Spec = unknown> {
  /** YAML `kind`, singular PascalCase: `PhoneNumber`. */
  readonly kind: string;
  /** URL segment, plural kebab-case: `phone-numbers`. */
  readonly plural: string;
  /** Validates a create/replace body (and an apply document's `spec`) with precise messages. */
  readonly schema: z.ZodType<Spec>;
  /** Natural key of a spec (unique per tenant): what `apply` matches on. */
  naturalKey(spec: Spec): string;
  readonly repository: ResourceRepository<Spec>;
  /**
   * The kind's own list filters, when exact per-field matching is not what users mean (speech
   * profiles: `language=en` finds `en-IN`, `gender=all`). Absent: every top-level scalar or list
   * field of the spec is a filter, matched case-insensitively.
   */
  readonly listFilter?: ListFilter<Spec>;
  /**
   * The kind has platform-provided resources every tenant sees (built-in speech profiles): its
   * resources carry `builtIn`, and changing or deleting a built-in one is 403 `permission_denied`.
   */
  readonly hasBuiltIns?: boolean;
}

/** One query parameter of a kind's own list filter (also what the OpenAPI document shows). */
export interface ListFilterParameter {
  readonly type: 'string' | 'number' | 'boolean' | 'list';
  readonly description: string;
  readonly enum?: readonly string[];
}

export interface ListFilter<Spec> {
  /** Every filter parameter the list accepts, besides `limit` and `cursor`. */
  readonly parameters: Readonly<Record<string, ListFilterParameter>>;
  /**
   * A predicate for the given parameters (only names from `parameters`, booleans already checked
   * to be `true`/`false`); throws `invalid_argument` naming the parameter for a bad value.
   */
  compile(values: ReadonlyMap<string, readonly string[]>): (spec: Spec) => boolean;
}

export interface StoredResource<Spec = unknown> {
  readonly id: string;
  readonly tenantId: string;
  /** Secrets are write-only: they come back masked, never in clear nor as ciphertext. */
  readonly spec: Spec;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** Set by kinds with built-ins (`hasBuiltIns`): true for the platform's own, false for the tenant's. */
  readonly builtIn?: boolean;
}

export interface Page {
  /** 1..200 */
  readonly limit: number;
  /** Opaque cursor from the previous page's `nextCursor`. */
  readonly cursor?: string;
}

export interface PageResult<T> {
  readonly items: readonly T[];
  readonly nextCursor?: string;
}

/** Per-kind persistence; every method is scoped to one tenant. Errors are `AppError`s. */
export interface ResourceRepository<Spec = unknown> {
  list(db: Kysely<Database>, tenantId: string, page: Page): Promise<PageResult<StoredResource<Spec>>>;
  get(db: Kysely<Database>, tenantId: string, id: string): Promise<StoredResource<Spec> | undefined>;
  findByNaturalKey(db: Kysely<Database>, tenantId: string, key: string): Promise<StoredResource<Spec> | undefined>;
  /** `already_exists` on a natural-key clash; `invalid_argument` on a dangling reference. */
  create(db: Kysely<Database>, tenantId: string, spec: Spec): Promise<StoredResource<Spec>>;
  /** Full replace. A secret left masked or absent keeps its stored value. */
  update(db: Kysely<Database>, tenantId: string, id: string, spec: Spec): Promise<StoredResource<Spec>>;
  /** `not_found` when absent; `failed_precondition` naming the users when still referenced. */
  delete(db: Kysely<Database>, tenantId: string, id: string): Promise<void>;
  /**
   * True when applying `spec` over `stored` would change nothing (secrets compared without
   * revealing them), so a second apply of the same document reports no change.
   */
  isUnchanged(db: Kysely<Database>, stored: StoredResource<Spec>, spec: Spec): Promise<boolean>;
}
