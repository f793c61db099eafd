import { z } from 'zod';
import { resourceName, tagList, text } from './common.js';

/** Knowledge library document for AnswerFlow / the global knowledge base; tags scope retrieval. */
export const knowledgeContentTypes = ['text/plain', 'text/markdown'] as const;
export const maxKnowledgeDocumentChars = 1_000_000;

export const knowledgeDocumentSchema = z.object({
  name: resourceName('name'),
  title: text('title', 300).default(''),
  tags: tagList('tags', 20).default([]),
  contentType: z.enum(knowledgeContentTypes, { error: `contentType must be one of ${knowledgeContentTypes.join(', ')}` }).default('text/plain'),
  content: text('content', maxKnowledgeDocumentChars).min(1, { error: 'content is required' }),
});
export type KnowledgeDocumentSpec = z.infer<typeof knowledgeDocumentSchema>;
