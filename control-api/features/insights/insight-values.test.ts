import assert from 'node:assert/strict';
import type { InsightParameter } from '../../model/domain/insight-parameter.js';
import { coerceInsightValue, transcriptText, userDefined } from './insight-values.js';

const p = (type: InsightParameter['type'], options?: string[]): InsightParameter => ({
  name: `p_${type}`,
  description: 'd',
  type,
  ...(options ? { options } : {}),
});
const today = '2026-11-20';
const value = (parameter: InsightParameter, raw: unknown) => coerceInsightValue(parameter, raw, today);

describe('insight values: validated per type (spec: Insight parameter types)', () => {
  it('Text: kept as text, cut to 300 characters by code point so Devanagari and emoji stay whole', () => {
    assert.deepEqual(value(p('text'), '  Caller agreed, "fine"  '), { value: 'Caller agreed, "fine"' });
    const long = 'क'.repeat(299) + '😀😀';
    const cut = value(p('text'), long).value as string;
    assert.equal([...cut].length, 300);
    assert.ok(cut.endsWith('😀'));
    assert.equal(value(p('text'), 'x'.repeat(301)).value, 'x'.repeat(300));
  });

  it('Boolean: true/false, and the words a model writes instead', () => {
    assert.deepEqual(value(p('boolean'), true), { value: true });
    assert.deepEqual(value(p('boolean'), 'false'), { value: false });
    assert.deepEqual(value(p('boolean'), 'Yes'), { value: true });
    assert.deepEqual(value(p('boolean'), 'हाँ'), { value: true });
    const wrong = value(p('boolean'), 'perhaps');
    assert.equal(wrong.value, null);
    assert.match(wrong.issue ?? '', /'p_boolean': "perhaps" is not a valid boolean value/);
  });

  it('Number: numbers and numeric strings with grouping; nothing else', () => {
    assert.deepEqual(value(p('number'), 2500), { value: 2500 });
    assert.deepEqual(value(p('number'), '2,500.50'), { value: 2500.5 });
    assert.equal(value(p('number'), 'two thousand').value, null);
    assert.equal(value(p('number'), Number.POSITIVE_INFINITY).value, null);
  });

  it('Date: ISO YYYY-MM-DD; date-times, D/M/Y and relative words are normalised', () => {
    assert.deepEqual(value(p('date'), '2026-11-27'), { value: '2026-11-27' });
    assert.deepEqual(value(p('date'), '2026-11-27T10:30:00+05:30'), { value: '2026-11-27' });
    assert.deepEqual(value(p('date'), '27/11/2026'), { value: '2026-11-27' });
    assert.deepEqual(value(p('date'), 'tomorrow'), { value: '2026-11-21' });
    const impossible = value(p('date'), '2026-02-30');
    assert.equal(impossible.value, null);
    assert.match(impossible.issue ?? '', /must be a date as YYYY-MM-DD/);
  });

  it('Enum: one of the options, matched without regard to case or spacing', () => {
    const status = p('enum', ['paid', 'promise_to_pay', 'dispute']);
    assert.deepEqual(value(status, 'paid'), { value: 'paid' });
    assert.deepEqual(value(status, 'PAID'), { value: 'paid' });
    const other = value(status, 'refund');
    assert.equal(other.value, null);
    assert.match(other.issue ?? '', /is not a valid enum value/);
  });

  it('absent, null and empty values are null without an issue', () => {
    for (const raw of [undefined, null, '', '   ']) assert.deepEqual(value(p('number'), raw), { value: null });
  });

  it('user_defined shows every parameter as a string, empty when unknown', () => {
    const params = [p('boolean'), p('number'), p('text'), p('date')];
    assert.deepEqual(userDefined(params, { p_boolean: false, p_number: 12.5, p_text: null }), { p_boolean: 'false', p_number: '12.5', p_text: '', p_date: '' });
  });

  it('renders the transcript with speakers, keypad input and the Interrupted tag', () => {
    const text = transcriptText([
      { at: 1, speaker: 'agent', text: 'Your balance is due on', interrupted: true, unspoken: 'the fifth.' },
      { at: 2, speaker: 'caller', text: '1234', dtmf: true },
      { at: 3, speaker: 'caller', text: 'ठीक है' },
    ]);
    assert.equal(text, 'Agent: Your balance is due on [Interrupted; not spoken: "the fifth."]\nCaller (keypad): 1234\nCaller: ठीक है');
  });

  it('marks caller words the flow did not act on (said over a Message) as not taken as an answer', () => {
    const text = transcriptText([
      { at: 1, speaker: 'agent', text: 'Hello Asha.' },
      { at: 2, speaker: 'caller', text: 'yes', ignored: 'bargeInDisabled' },
      { at: 3, speaker: 'agent', text: 'Will you be at home tomorrow?' },
    ]);
    assert.equal(text, 'Agent: Hello Asha.\nCaller: yes [not taken as an answer]\nAgent: Will you be at home tomorrow?');
  });
});
