import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { strictDeep } from '../../domain/strict.js';
import type { ResourceDefinition } from '../resource-definition.js';
import type { KindIdentity } from './references.js';
import { createJsonResourceRepository, type JsonResourceConfig, type JsonResourceRepository } from './json-resource-repository.js';

export interface JsonResourceDefinition<Spec> extends ResourceDefinition<Spec> {
  readonly repository: JsonResourceRepository<Spec>;
}

/**
 * A definition whose repository is the shared jsonb repository configured for the kind. Its
 * `schema` (what clients write through the API and apply) refuses unknown fields; the repository
 * keeps the lenient schema for re-validating what it already accepted.
 */
export function defineKind<Spec>(identity: KindIdentity, box: SecretBox, rules: Omit<JsonResourceConfig<Spec>, keyof KindIdentity>): JsonResourceDefinition<Spec> {
  const config: JsonResourceConfig<Spec> = { ...identity, ...rules };
  return {
    kind: identity.kind,
    plural: identity.plural,
    schema: strictDeep(config.schema),
    naturalKey: (spec) => config.naturalKey(spec),
    repository: createJsonResourceRepository(config, box),
  };
}
