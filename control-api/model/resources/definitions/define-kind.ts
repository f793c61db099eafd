import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { strictDeep } from '../../domain/strict.js';
import type { ResourceDefinition } from '../resource-definition.js';
import { createJsonResourceRepository, type JsonResourceConfig, type JsonResourceRepository } from './json-resource-repository.js';

export interface JsonResourceDefinition<Spec> extends ResourceDefinition<Spec> {
  readonly repository: JsonResourceRepository<Spec>;
}

/**
 * A definition whose repository is the shared jsonb repository configured for the kind. Its
 * `schema` (what clients write through the API and apply) refuses unknown fields; the repository
 * keeps the lenient schema for re-validating what it already accepted.
 */
export function defineKind<Spec>(plural: string, config: JsonResourceConfig<Spec>, box: SecretBox): JsonResourceDefinition<Spec> {
  return {
    kind: config.kind,
    plural,
    schema: strictDeep(config.schema),
    naturalKey: (spec) => config.naturalKey(spec),
    repository: createJsonResourceRepository(config, box),
  };
}
