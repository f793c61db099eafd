import assert from 'node:assert/strict';
import { FakeClock } from '../../core/clock.js';
import type { DtmfCollection } from '../../core/ports/conversation.js';
import { DtmfCollector, type DtmfCompletion } from './dtmf-collector.js';

describe('keypad entry (DTMF collection)', () => {
  const collect = (settings: DtmfCollection = { maxDigits: 32, terminator: '#', interDigitTimeoutMs: 3000 }) => {
    const clock = new FakeClock(0);
    const entries: [string, DtmfCompletion][] = [];
    const collector = new DtmfCollector(settings, (digits, how) => entries.push([digits, how]), clock);
    return { clock, entries, collector };
  };

  it('"123456#" is one entry, 123456, ended by the terminator (not part of it)', () => {
    const { entries, collector } = collect();
    for (const d of '123456#') collector.press(d);
    assert.deepEqual(entries, [['123456', 'terminator']]);
    assert.equal(collector.collecting, false);
  });

  it('ends at max digits', () => {
    const { entries, collector } = collect({ maxDigits: 4, terminator: '#', interDigitTimeoutMs: 3000 });
    for (const d of '123456') collector.press(d);
    assert.deepEqual(entries, [['1234', 'maxDigits']]);
    assert.equal(collector.collecting, true, 'the fifth key starts the next entry');
  });

  it('a terminator pressed right after an entry that ended at its last digit is no key of its own', () => {
    const { clock, entries, collector } = collect({ maxDigits: 6, terminator: '#', interDigitTimeoutMs: 3000 });
    for (const d of '123456') collector.press(d);
    clock.advance(800);
    assert.equal(collector.isLateTerminator('#'), true, 'the habitual hash after six digits');
    assert.equal(collector.isLateTerminator('#'), false, 'only once');
    assert.deepEqual(entries, [['123456', 'maxDigits']]);
    // Later than the inter-digit time, or after a terminator-ended entry, a hash is a key again.
    for (const d of '654321') collector.press(d);
    clock.advance(3500);
    assert.equal(collector.isLateTerminator('#'), false);
    for (const d of '12#') collector.press(d);
    assert.equal(collector.isLateTerminator('#'), false);
    // A digit after a full entry starts the next one as before.
    for (const d of '111111') collector.press(d);
    assert.equal(collector.isLateTerminator('7'), false);
  });

  it('ends after the inter-digit timeout, counted from the last key', () => {
    const { clock, entries, collector } = collect({ maxDigits: 32, terminator: '', interDigitTimeoutMs: 2000 });
    collector.press('4');
    clock.advance(1500);
    collector.press('2');
    clock.advance(1999);
    assert.deepEqual(entries, []);
    assert.equal(collector.collecting, true);
    clock.advance(1);
    assert.deepEqual(entries, [['42', 'interDigitTimeout']]);
  });

  it('a block may choose * as the terminator; # is then a digit', () => {
    const { entries, collector } = collect({ maxDigits: 32, terminator: '*', interDigitTimeoutMs: 3000 });
    for (const d of '12#*') collector.press(d);
    assert.deepEqual(entries, [['12#', 'terminator']]);
  });

  it('a terminator alone is an empty entry; stop() drops what was typed', () => {
    const { clock, entries, collector } = collect();
    collector.press('#');
    collector.press('9');
    collector.stop();
    clock.advance(10_000);
    assert.deepEqual(entries, [['', 'terminator']]);
  });
});
