import assert from 'node:assert/strict';
import { accepts, rejectsWith } from '../../../test/helpers/schema-issues.js';
import {
  apiSettingsSchema,
  askSettingsSchema,
  blockSchema,
  codeSettingsSchema,
  conditionSettingsSchema,
  globalSettingsSchema,
  recipeSchema,
  smartAiSettingsSchema,
  transferSettingsSchema,
  webhookSettingsSchema,
} from './recipe-schema.js';

describe('recipe schema', () => {
  describe('SmartAI / Ask settings', () => {
    it('defaults: conversation history on, nudge on, barge-in on, expressiveness 0.5, AnswerFlow off', () => {
      const s = smartAiSettingsSchema.parse({ prompt: 'You sell plants. {{customer_name}} called.' });
      assert.equal(s.conversationHistory, true);
      assert.equal(s.nudge, true);
      assert.equal(s.bargeIn, true);
      assert.equal(s.expressiveness, 0.5);
      assert.deepEqual(s.answerFlow, { enabled: false, documentTags: [], formattingInstructions: '' });
      assert.equal(s.retryLimit, 3);
    });

    it('requires a prompt and bounds the retry limit', () => {
      rejectsWith(smartAiSettingsSchema, { prompt: '' }, 'prompt: prompt is required');
      rejectsWith(smartAiSettingsSchema, { prompt: 'p', retryLimit: 0 }, 'retryLimit: retryLimit must be between 1 and 20 turns');
    });

    it('intents are exits: unique identifiers, not the reserved exits', () => {
      rejectsWith(smartAiSettingsSchema, { prompt: 'p', intents: [{ name: 'fallback', description: 'x' }] }, 'intents.0.name: intent name must not be one of the reserved exits: fallback, next');
      rejectsWith(
        smartAiSettingsSchema,
        { prompt: 'p', intents: [{ name: 'buy', description: 'a' }, { name: 'buy', description: 'b' }] },
        "intents.1.name: intent 'buy' is defined twice (also at index 0)",
      );
      rejectsWith(smartAiSettingsSchema, { prompt: 'p', intents: [{ name: 'buy now', description: 'a' }] }, "intents.0.name: intent name must be an identifier: a letter or '_' followed by letters, digits or '_', at most 64 characters");
    });

    it('extracted variables: enum needs options, others must not have them; intent variable is an identifier', () => {
      accepts(smartAiSettingsSchema, { prompt: 'p', variables: [{ name: 'size', type: 'enum', options: ['small', 'large'] }], intentVariable: 'detected_intent' });
      rejectsWith(smartAiSettingsSchema, { prompt: 'p', variables: [{ name: 'size', type: 'enum' }] }, "variables.0.options: enum variable 'size' needs at least one option");
      rejectsWith(smartAiSettingsSchema, { prompt: 'p', variables: [{ name: 'n', type: 'number', options: ['1'] }] }, "variables.0.options: options are only allowed on enum variables ('n' is number)");
      accepts(smartAiSettingsSchema, { prompt: 'p', variables: [{ name: 'order', type: 'digits', length: 6 }] });
      rejectsWith(smartAiSettingsSchema, { prompt: 'p', variables: [{ name: 'n', type: 'number', length: 6 }] }, "variables.0.length: length is only allowed on digits variables ('n' is number)");
      rejectsWith(smartAiSettingsSchema, { prompt: 'p', variables: [{ name: 'order', type: 'digits', length: 0 }] }, 'variables.0.length: variable length must be between 1 and 32 digits');
      rejectsWith(smartAiSettingsSchema, { prompt: 'p', speechNormalization: ['emoji'] }, 'speechNormalization.0: speechNormalization rule must be one of numbers, dates, times, currency, units, phoneNumbers, ordinals');
    });

    it('intents may say whether they act, how to check them with the caller and what they store; digit strings are a type', () => {
      const variables = [
        { name: 'amount', type: 'number', description: 'amount' },
        { name: 'order_number', type: 'digits', description: 'the order number', question: 'What is your order number?' },
      ];
      const s = smartAiSettingsSchema.parse({
        prompt: 'p',
        variables,
        intents: [
          { name: 'promise', description: 'caller promises to pay', captures: ['amount'], confirmation: 'you will pay {{amount}}' },
          { name: 'bye', description: 'caller is done', action: false },
        ],
      });
      assert.deepEqual(s.intents[0]?.captures, ['amount']);
      assert.equal(s.intents[1]?.action, false);
      // Absent fields stay absent: stored recipes read back the same.
      assert.equal(s.intents[0]?.action, undefined);
      rejectsWith(smartAiSettingsSchema, { prompt: 'p', variables, intents: [{ name: 'x', description: 'd', captures: ['amont'] }] }, "intents.0.captures.0: intent 'x' captures 'amont', which is not one of the block's variables");
      rejectsWith(smartAiSettingsSchema, { prompt: 'p', intents: [{ name: 'x', description: 'd', action: 'yes' }] }, 'intents.0.action: intent action must be true or false');
      rejectsWith(smartAiSettingsSchema, { prompt: 'p', variables: [{ name: 'n', type: 'phone' }] }, 'variables.0.type: variable type must be one of text, boolean, number, date, enum, digits');
    });

    it('an Ask block must name the variable it captures', () => {
      rejectsWith(askSettingsSchema, { prompt: 'Ask for the pincode' }, 'variables: an Ask block must extract at least one variable');
    });
  });

  describe('Condition settings', () => {
    const branch = (rules: unknown[]) => ({ branches: [{ name: 'match', rules }] });
    it('accepts every operator with the right operands and AND/OR groups', () => {
      accepts(conditionSettingsSchema, {
        branches: [
          {
            name: 'gold',
            combinator: 'or',
            rules: [
              { variable: 'tier', operator: 'equals', value: 'gold' },
              { combinator: 'and', rules: [{ variable: 'spend', operator: 'greaterThan', value: 1000 }, { variable: 'email', operator: 'isNotEmpty' }] },
            ],
          },
          { name: 'same', rules: [{ variable: 'a', operator: 'notEquals', valueVariable: 'b' }] },
          { name: 'pin', rules: [{ variable: 'pincode', operator: 'matchesRegex', value: '^[1-9][0-9]{5}$' }] },
        ],
      });
    });

    it('rejects wrong operands, bad regexes, unknown operators and the reserved else name', () => {
      rejectsWith(conditionSettingsSchema, branch([{ variable: 'a', operator: 'isEmpty', value: 'x' }]), 'branches.0.rules.0.value: operator isEmpty takes no value');
      rejectsWith(conditionSettingsSchema, branch([{ variable: 'a', operator: 'contains' }]), 'branches.0.rules.0.value: operator contains needs exactly one of value or valueVariable');
      rejectsWith(conditionSettingsSchema, branch([{ variable: 'a', operator: 'equals', value: 1, valueVariable: 'b' }]), 'branches.0.rules.0.value: operator equals needs exactly one of value or valueVariable');
      const regex = conditionSettingsSchema.safeParse(branch([{ variable: 'a', operator: 'matchesRegex', value: '([' }]));
      assert.match(regex.error?.issues[0]?.message ?? '', /^value is not a valid regular expression: /);
      rejectsWith(
        conditionSettingsSchema,
        branch([{ variable: 'a', operator: 'like', value: 'x' }]),
        'branches.0.rules.0: operator: operator must be one of equals, notEquals, lessThan, greaterThan, contains, notContains, isEmpty, isNotEmpty, startsWith, endsWith, matchesRegex',
      );
      rejectsWith(conditionSettingsSchema, { branches: [{ name: 'else', rules: [{ variable: 'a', operator: 'isEmpty' }] }] }, "branches.0.name: branch name 'else' is reserved for the default path");
      rejectsWith(conditionSettingsSchema, branch([{ combinator: 'xor', rules: [{ variable: 'a', operator: 'isEmpty' }] }]), "branches.0.rules.0: combinator: combinator must be 'and' or 'or'");
      rejectsWith(conditionSettingsSchema, { branches: [] }, 'branches: a Condition block needs at least one branch');
    });
  });

  describe('Code, API, Webhook, Transfer settings', () => {
    it('Code defines main(context, variables, plugins)', () => {
      accepts(codeSettingsSchema, { source: 'const main = async (context, variables, plugins) => {}' });
      rejectsWith(codeSettingsSchema, { source: 'function run() {}' }, 'source: source must define a function named main(context, variables, plugins)');
    });

    it('API: method, full URL or path, header names, timeout bounds', () => {
      accepts(apiSettingsSchema, { method: 'PATCH', url: '/plants/{{plant_id}}', headers: { 'X-Request-Id': '{{call_id}}' }, responseMappings: [{ path: 'data.name', variable: 'plant_name' }] });
      rejectsWith(apiSettingsSchema, { method: 'HEAD', url: '/x' }, 'method: method must be one of GET, POST, PUT, PATCH, DELETE');
      rejectsWith(apiSettingsSchema, { method: 'GET', url: 'plants' }, "url: url must be an absolute http(s) URL or a path starting with '/'");
      rejectsWith(apiSettingsSchema, { method: 'GET', url: '/x', headers: { 'bad header': 'v' } }, 'headers.bad header: header name must be a valid HTTP token (RFC 9110 sec. 5.1)');
      rejectsWith(apiSettingsSchema, { method: 'GET', url: '/x', timeoutMs: 30001 }, 'timeoutMs: timeoutMs must be between 100 and 30000 milliseconds');
    });

    it('a relative API url needs globalSettings.baseUrl', () => {
      const recipe = {
        name: 'r',
        startBlockId: 'crm',
        blocks: [{ id: 'crm', type: 'api', settings: { method: 'GET', url: '/plants' } }],
      };
      rejectsWith(recipeSchema, recipe, "blocks.0.settings.url: API block 'crm' uses the relative url '/plants' but globalSettings.baseUrl is not set");
      accepts(recipeSchema, { ...recipe, globalSettings: { baseUrl: 'http://127.0.0.1:8080/api' } });
    });

    it('Webhook needs an absolute URL and a JSON object payload', () => {
      accepts(webhookSettingsSchema, { url: 'https://hooks.example.com/x', payload: { caller: '{{caller_number}}', n: 1 } });
      rejectsWith(webhookSettingsSchema, { url: 'ftp://x' }, 'url: url must be an absolute http or https URL');
      rejectsWith(webhookSettingsSchema, { url: 'http://127.0.0.1/x', payload: [1] }, 'payload: payload must be a JSON object');
    });

    it('Transfer targets a SIP URI or an E.164 number', () => {
      accepts(transferSettingsSchema, { target: 'sip:agent@pbx.example.com', bridgeMessage: 'Connecting you now' });
      accepts(transferSettingsSchema, { target: 'sips:support@10.0.0.1:5061' });
      accepts(transferSettingsSchema, { target: '+919876543210' });
      rejectsWith(transferSettingsSchema, { target: '9876543210' }, 'target: target must be a SIP URI (sip:user@host) or a PSTN number in E.164 form (+14155550100)');
    });
  });

  describe('blocks and recipe', () => {
    it('rejects an unknown block type and duplicate block ids', () => {
      rejectsWith(blockSchema, { id: 'x', type: 'sms', settings: {} }, 'type: block type must be one of message, smartAi, ask, condition, code, api, webhook, transfer, close');
      rejectsWith(
        recipeSchema,
        { name: 'r', startBlockId: 'a', blocks: [{ id: 'a', type: 'close', settings: {} }, { id: 'a', type: 'close', settings: {} }] },
        "blocks.1.id: block id 'a' is defined twice (also at index 0)",
      );
    });
  });

  describe('global settings', () => {
    it('defaults: voicemail disconnect, no smart interruption, no caution on noisy lines, no insights', () => {
      const g = globalSettingsSchema.parse({});
      assert.deepEqual(g.voicemail, { action: 'disconnect', messages: {} });
      assert.equal(g.smartInterruption, false);
      assert.equal(g.cautionOnNoisyLines, false);
      assert.deepEqual(g.insights, []);
    });

    it('leaving a voicemail needs a message in at least one language, keyed by language tag', () => {
      accepts(globalSettingsSchema, { voicemail: { action: 'leaveMessage', messages: { en: 'Call us back', 'hi-IN': 'कृपया हमें वापस कॉल करें' } } });
      rejectsWith(globalSettingsSchema, { voicemail: { action: 'leaveMessage' } }, 'voicemail.messages: voicemail action leaveMessage needs a message in at least one language');
      rejectsWith(globalSettingsSchema, { voicemail: { action: 'leaveMessage', messages: { english: 'x' } } }, "voicemail.messages.english: voicemail message language must be a BCP 47 language tag such as 'en', 'hi-IN' or 'ar'");
    });

    it('insights: at most 10 per recipe, unique names, enum options', () => {
      const p = (name: string) => ({ name, description: 'Did they buy?', type: 'boolean' });
      rejectsWith(globalSettingsSchema, { insights: Array.from({ length: 11 }, (_, i) => p(`p${i}`)) }, 'insights: an agent has at most 10 insight parameters');
      rejectsWith(globalSettingsSchema, { insights: [p('bought'), p('bought')] }, "insights.1.name: insight 'bought' is defined twice (also at index 0)");
      rejectsWith(globalSettingsSchema, { insights: [{ name: 'mood', description: 'Caller mood', type: 'enum', options: [] }] }, "insights.0.options: enum insight 'mood' needs at least one option");
      rejectsWith(globalSettingsSchema, { insights: [{ name: 'mood', description: 'Caller mood', type: 'color' }] }, 'insights.0.type: insight type must be one of text, boolean, number, date, enum');
    });
  });
});
