import type { Kysely } from 'kysely';
import type { TenantAdmin } from '../../model/tenants/tenant-admin.js';
import type { ResourceDefinition } from '../../model/resources/resource-definition.js';
import type { Database } from '../../platform/store/schema.js';
import { allApplyKinds } from './apply-kinds.js';
import { applyDocuments, type ApplyOptions, type ApplyReport } from './apply-documents.js';
import { parseEnvelopes, type SourceDocument } from './parse-documents.js';

export interface ApplyService {
  apply(documents: readonly SourceDocument[], options: ApplyOptions): Promise<ApplyReport>;
}

/** One entry point for the API and the CLI, so both apply exactly the same way. */
export function createApplyService(db: Kysely<Database>, definitions: readonly ResourceDefinition[], tenants: TenantAdmin): ApplyService {
  const kinds = allApplyKinds(definitions, tenants);
  const findTenant = async (trx: Kysely<Database>, clientId: string): Promise<string | undefined> => (await tenants.findByClientId(trx, clientId))?.id;
  return {
    apply(documents, options) {
      return applyDocuments(db, kinds, findTenant, parseEnvelopes(documents), options);
    },
  };
}
