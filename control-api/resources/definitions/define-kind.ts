import type { SecretBox } from '../../crypto/secret-box.js';
import type { ResourceDefinition } from '../resource-definition.js';
import { createJsonResourceRepository, type JsonResourceConfig, type JsonResourceRepository } from './json-resource-repository.js';

export interface JsonResourceDefinition<Spec> extends ResourceDefinition<Spec> {
  readonly repository: JsonResourceRepository<Spec>;
}

/** A definition whose repository is the shared jsonb repository configured for the kind. */
export function defineKind<Spec>(plural: string, config: JsonResourceConfig<Spec>, box: SecretBox): JsonResourceDefinition<Spec> {
  return {
    kind: config.kind,
    plural,
    schema: config.schema,
    naturalKey: (spec) => config.naturalKey(spec),
    repository: createJsonResourceRepository(config, box),
  };
}
