import assert from 'node:assert/strict';
import { referencedNames, render, renderDeep } from './templating.js';
import { builtinVariables, localTime } from './call-context.js';

describe('templating', () => {
  const values: Record<string, unknown> = { name: 'प्रिया', loan: { amount: 1200, emis: [{ due: '2026-12-01' }] }, 'flat.key': 'dotted', zero: 0, no: false };
  const scope = { lookup: (name: string) => values[name] };

  it('substitutes variables, nested paths and falsy values; tolerates spacing', () => {
    assert.equal(render('Hi {{ name }}, due {{loan.emis.0.due}} for {{loan.amount}} ({{zero}}/{{no}}) {{flat.key}}', scope), 'Hi प्रिया, due 2026-12-01 for 1200 (0/false) dotted');
  });

  it('renders missing variables as empty and reports each one', () => {
    const missing: string[] = [];
    assert.equal(render('[{{nope}}][{{loan.nope}}]', scope, (n) => missing.push(n)), '[][]');
    assert.deepEqual(missing, ['nope', 'loan.nope']);
  });

  it('leaves no doubled or stray whitespace where a missing variable was (text only, not encoded output)', () => {
    const cases: [string, string][] = [
      ['Hello {{nope}}, your Greenleaf order is ready.', 'Hello, your Greenleaf order is ready.'],
      ['Dear {{nope}} {{nope2}}.', 'Dear.'],
      ['Hi {{nope}} there, {{name}}!', 'Hi there, प्रिया!'],
      ['{{nope}} Welcome back', 'Welcome back'],
      ['Your code is {{nope}}\nThanks', 'Your code is\nThanks'],
      ['Paid ({{nope}}) today', 'Paid () today'],
      ['Due on {{nope}} at {{nope2}}.', 'Due on at.'],
    ];
    for (const [template, spoken] of cases) assert.equal(render(template, scope), spoken, template);
    assert.equal(render('a={{nope}}&b={{name}}', scope, undefined, encodeURIComponent), 'a=&b=%E0%A4%AA%E0%A5%8D%E0%A4%B0%E0%A4%BF%E0%A4%AF%E0%A4%BE');
  });

  it('leaves non-placeholders alone and encodes substituted values on request', () => {
    assert.equal(render('{{ 1bad }} {name} {{name}}', scope, undefined, encodeURIComponent), '{{ 1bad }} {name} %E0%A4%AA%E0%A5%8D%E0%A4%B0%E0%A4%BF%E0%A4%AF%E0%A4%BE');
    assert.deepEqual(referencedNames('{{a}} and {{ b.c }}'), ['a', 'b.c']);
  });

  it('renders every string inside a JSON structure', () => {
    assert.deepEqual(renderDeep({ a: ['{{name}}', 1], b: { c: '{{loan.amount}}' }, d: null }, scope), { a: ['प्रिया', 1], b: { c: '1200' }, d: null });
  });

  it('exposes call context with time in the tenant timezone', () => {
    const at = Date.UTC(2026, 10, 21, 20, 45);
    assert.deepEqual(localTime(at, 'Asia/Kolkata'), { date: '2026-11-22', time: '02:15', weekday: 'Sunday' });
    const builtins = builtinVariables({ callId: 'c', tenantId: 't', timezone: 'America/New_York', callerNumber: '+1555', direction: 'inbound', campaignVariables: {}, now: () => at });
    assert.equal(builtins.current_time, '15:45');
    assert.equal(builtins.caller_number, '+1555');
  });
});
