import assert from 'node:assert/strict';
import { FakeChatCompletionsServer } from '../../test/fakes/fake-chat-completions.js';
import { createAgentEngine, engineConfigSchema } from './engine-config.js';

describe('engine configuration per tenant', () => {
  it('defaults to the offline engine and validates provider settings', () => {
    assert.equal(createAgentEngine({ provider: 'offline' }).name, 'offline');
    assert.equal(engineConfigSchema.safeParse({ provider: 'openaiCompatible', baseUrl: 'ftp://x', model: 'm' }).success, false);
    assert.equal(engineConfigSchema.safeParse({ provider: 'openaiCompatible', baseUrl: 'http://127.0.0.1:1/v1', model: '' }).success, false);
  });

  it('builds a streaming OpenAI-compatible engine that sends the tenant key', async () => {
    const server = await new FakeChatCompletionsServer(() => ({ content: 'Namaste!' })).start();
    try {
      const engine = createAgentEngine(engineConfigSchema.parse({ provider: 'openaiCompatible', baseUrl: server.baseUrl, model: 'tenant-model' }), 'sk-tenant');
      const result = await engine.turn({ instructions: 'Greet.', history: [], intents: [], variables: [], expressiveness: 0.5 });
      assert.equal(result.reply, 'Namaste!');
      assert.equal(server.requests[0]?.authorization, 'Bearer sk-tenant');
      assert.equal(server.requests[0]?.body.model, 'tenant-model');
      assert.equal(server.requests[0]?.body.stream, true);
    } finally {
      await server.stop();
    }
  });
});
