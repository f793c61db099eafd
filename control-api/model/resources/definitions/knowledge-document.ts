import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { knowledgeDocumentSchema, type KnowledgeDocumentSpec } from '../../domain/knowledge-document.js';
import { defineKind } from './define-kind.js';
import { targets } from './references.js';

export function knowledgeDocumentDefinition(box: SecretBox) {
  return defineKind<KnowledgeDocumentSpec>(targets.knowledgeDocument, box, {
    schema: knowledgeDocumentSchema,
    naturalKey: (spec) => spec.name,
    async columns(_db, _tenantId, spec) {
      return { tags: spec.tags };
    },
  });
}
