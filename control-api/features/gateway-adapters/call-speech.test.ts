import assert from 'node:assert/strict';
import { recipeSchema } from '../../model/recipes/recipe-schema.js';
import { defaultUnsupportedLanguageMessages, recipeListens, unsupportedLanguageMessage } from './call-speech.js';

describe('unsupported-language message: which text a call says', () => {
  const configured = { 'ta-IN': 'Tamil text', bn: 'Bengali text', 'en-GB': 'English text' };

  it("takes the tenant's exact tag, then its primary language", () => {
    assert.deepEqual(unsupportedLanguageMessage('ta-IN', configured), { text: 'Tamil text', language: 'ta-IN' });
    assert.deepEqual(unsupportedLanguageMessage('bn-IN', configured), { text: 'Bengali text', language: 'bn' });
  });

  it("then the built-in text of the language (Hindi), then the tenant's English, then the built-in English", () => {
    assert.deepEqual(unsupportedLanguageMessage('hi-IN', configured), { text: defaultUnsupportedLanguageMessages['hi'], language: 'hi-IN' });
    assert.deepEqual(unsupportedLanguageMessage('ml-IN', configured), { text: 'English text', language: 'en-GB' });
    assert.deepEqual(unsupportedLanguageMessage('ml-IN', {}), { text: defaultUnsupportedLanguageMessages['en'], language: 'en' });
  });
});

describe('recipeListens: whether a recipe needs speech-to-text', () => {
  const recipe = (blocks: unknown[]) => recipeSchema.parse({ name: 'R', startBlockId: 'a', blocks, connections: [] });

  it('a recipe that only speaks runs without it; SmartAI and Ask wait for the caller', () => {
    assert.equal(recipeListens(recipe([{ id: 'a', type: 'message', settings: { text: 'Your order ships today.' } }])), false);
    assert.equal(recipeListens(recipe([{ id: 'a', type: 'smartAi', settings: { prompt: 'Help.' } }])), true);
    assert.equal(recipeListens(recipe([{ id: 'a', type: 'ask', settings: { prompt: 'Ask the order number.', variables: [{ name: 'n', type: 'text', description: 'number' }] } }])), true);
  });
});
