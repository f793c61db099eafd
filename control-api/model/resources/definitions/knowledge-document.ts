import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { knowledgeDocumentSchema, type KnowledgeDocumentSpec } from '../../domain/knowledge-document.js';
import { defineKind } from './define-kind.js';

export function knowledgeDocumentDefinition(box: SecretBox) {
  return defineKind<KnowledgeDocumentSpec>(
    'knowledge-documents',
    {
      kind: 'KnowledgeDocument',
      noun: 'knowledge document',
      table: 'knowledge_documents',
      keyColumn: 'name',
      schema: knowledgeDocumentSchema,
      naturalKey: (spec) => spec.name,
      async columns(_db, _tenantId, spec) {
        return { tags: spec.tags };
      },
    },
    box,
  );
}
