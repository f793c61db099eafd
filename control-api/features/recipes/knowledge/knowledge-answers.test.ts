import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { silentLogger } from '../../../../core/logger.js';
import { normaliseForSpeech } from '../../../../media/speech/normalise.js';
import { FakeChatCompletionsServer } from '../../../../test/fakes/fake-chat-completions.js';
import { offlineBrain } from '../../../../test/fakes/offline-brain.js';
import { forEachStore } from '../../../../test/helpers/stores.js';
import type { AgentEngine } from '../../../platform/llm/agent-engine.js';
import { LlmEngine } from '../../../platform/llm/llm-engine.js';
import { OfflineEngine } from '../../../platform/llm/offline-engine.js';
import { OpenAiCompatibleProvider } from '../../../platform/llm/openai-compatible.js';
import { defaultBlocks } from '../blocks/index.js';
import { recipeSchema } from '../../../model/recipes/recipe-schema.js';
import { RecipeRun } from '../runtime/recipe-run.js';
import { scriptedTurns, TextConversation } from '../runtime/text-conversation.js';
import { PgKnowledgeSearch } from './pg-knowledge-search.js';

const helpCentre = [
  '# Leafy help centre',
  '',
  '## Refunds',
  'Refunds are processed within **5 to 7 working days** after we receive the plant back.',
  '- The money goes back to the *original card*.',
  '- Damaged plants can be [refunded without a return](https://example.com/damaged).',
  '',
  '## Delivery',
  'Orders ship within 24 hours on working days.',
  'Delivery takes 2 to 4 days in the continental US.',
  '- We do not ship live plants to Hawaii or Alaska.',
].join('\n');

const reprompt = 'Sorry, I do not know that one. What else can I help with?';
const recipe = recipeSchema.parse({
  name: 'Help line',
  startBlockId: 'assist',
  blocks: [
    {
      id: 'assist',
      type: 'smartAi',
      settings: {
        prompt: `Answer plant-store questions.\nOpening: How can I help?\nReprompt: ${reprompt}`,
        retryLimit: 3,
        answerFlow: { enabled: true, documentTags: ['support'] },
      },
    },
  ],
  connections: [],
});

/**
 * AnswerFlow end to end over a markdown document: PostgreSQL retrieval, the SmartAI block, the
 * engine, and the speech normaliser the phone pipeline runs on every line.
 */
forEachStore('AnswerFlow over a markdown knowledge document', (store) => {
  let tenantId = '';
  before(async () => {
    const db = store().db;
    tenantId = (await db.insertInto('tenants').values({ client_id: 'leafy', name: 'Leafy' }).returning('id').executeTakeFirstOrThrow()).id;
    const spec = { name: 'help-centre', title: 'Help centre', tags: ['support'], contentType: 'text/markdown', content: helpCentre };
    await sql`insert into knowledge_documents (tenant_id, name, tags, spec) values (${tenantId}::uuid, ${spec.name}, ${sql.val(spec.tags)}::text[], ${JSON.stringify(spec)}::jsonb)`.execute(db);
  });

  async function ask(engine: AgentEngine, question: string): Promise<string[]> {
    const conversation = new TextConversation({ nextTurn: scriptedTurns([{ kind: 'utterance', text: question }, { kind: 'hangup' }]) });
    const run = new RecipeRun({
      recipe,
      conversation,
      context: { callId: 'kb', tenantId, timezone: 'America/Los_Angeles', direction: 'simulation', language: 'en-US', campaignVariables: {}, now: () => Date.parse('2026-11-21T10:00:00Z') },
      services: {
        engine,
        http: { request: () => Promise.reject(new Error('unused')) },
        code: { run: () => Promise.reject(new Error('unused')) },
        webhooks: { send: () => Promise.reject(new Error('unused')) },
        knowledge: new PgKnowledgeSearch(store().db),
        logger: silentLogger,
        silenceTimeoutMs: 1000,
      },
      blocks: defaultBlocks,
    });
    await run.run();
    // What TTS receives: each agent line through the same normaliser the phone pipeline uses.
    return conversation.agentLines.map((line) => normaliseForSpeech(line, 'en-US'));
  }

  it('retrieval returns the passage cleaned of marks, with its heading apart', async () => {
    const hits = await new PgKnowledgeSearch(store().db).search(tenantId, 'how long does delivery take', ['support'], 3);
    assert.deepEqual(hits[0] && { section: hits[0].section, text: hits[0].text }, {
      section: 'Leafy help centre > Delivery',
      text: 'Orders ship within 24 hours on working days. Delivery takes 2 to 4 days in the continental US. We do not ship live plants to Hawaii or Alaska.',
    });
    // "refund" (no s) still finds a document that only says "Refunds" and "refunded".
    const refunds = await new PgKnowledgeSearch(store().db).search(tenantId, 'refund', ['support'], 3);
    assert.equal(refunds[0]?.section, 'Leafy help centre > Refunds');
  });

  it('offline engine: speaks only the relevant sentence of the best passage, no marks, no heading', async () => {
    const delivery = await ask(new OfflineEngine(), 'How long does delivery take?');
    // The answer, then the question whether there is more, on the same line.
    assert.deepEqual(delivery, ['How can I help?', 'Delivery takes two to four days in the continental US. Is there anything else I can help you with?']);
    const refund = await ask(new OfflineEngine(), 'When will my refund arrive?');
    assert.deepEqual(refund, ['How can I help?', 'Refunds are processed within five to seven working days after we receive the plant back. Is there anything else I can help you with?']);
    for (const line of [...delivery, ...refund]) assert.doesNotMatch(line, /[#*[\]]|Leafy help centre|Refunds Refunds|Delivery Orders/);
  });

  it('offline engine: a passage that only shares a word is no answer, the block reprompts', async () => {
    assert.deepEqual(await ask(new OfflineEngine(), 'Do refunds need a manager approval?'), ['How can I help?', reprompt]);
  });

  it('LLM engine: the prompt carries the cleaned passages', async () => {
    const server = await new FakeChatCompletionsServer(offlineBrain('2026-11-21')).start();
    try {
      await ask(new LlmEngine(new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, model: 'fake-model' })), 'How long does delivery take?');
      const system = server.requests.map((r) => r.body.messages[0]?.content ?? '').find((c) => c.includes('knowledge passages'));
      assert.ok(system, 'a request carried knowledge passages');
      const passages = system.slice(system.indexOf('knowledge passages'));
      assert.match(passages, /\[1\] Orders ship within 24 hours on working days\. Delivery takes 2 to 4 days in the continental US\. We do not ship live plants to Hawaii or Alaska\./);
      assert.doesNotMatch(passages, /[#*]|\]\(|^- /m);
    } finally {
      await server.stop();
    }
  });
});
