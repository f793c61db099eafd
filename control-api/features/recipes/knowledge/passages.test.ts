import assert from 'node:assert/strict';
import { documentPassages } from './passages.js';

describe('knowledge documents cut into passages', () => {
  it('a heading starts a passage and stays out of its text, even with no blank line around it', () => {
    // examples/tenant/30-knowledge.yaml: two sections, no blank lines.
    const passages = documentPassages('# Watering\nWater a monstera once the top 5 cm of soil is dry.\n# Delivery\nOrders placed before 14:00 ship the same day.\n');
    assert.deepEqual(passages, [
      { section: 'Watering', text: 'Water a monstera once the top 5 cm of soil is dry.' },
      { section: 'Delivery', text: 'Orders placed before 14:00 ship the same day.' },
    ]);
  });

  it('bullets become sentences, emphasis, links and code ticks lose their marks, nested headings form a path', () => {
    const passages = documentPassages([
      '# Help',
      '## Refunds',
      'Refunds are processed within **5 to 7 working days**.',
      '- The money goes back to the *original card*',
      '- Damaged plants: see [the photo rule](https://example.com/photos)',
      '',
      'Use code `LEAF10` for 10% off.',
      '### Exceptions',
      '1. Gift cards',
      '2. Sale items',
    ].join('\n'));
    assert.deepEqual(passages, [
      { section: 'Help > Refunds', text: 'Refunds are processed within 5 to 7 working days. The money goes back to the original card. Damaged plants: see the photo rule.' },
      { section: 'Help > Refunds', text: 'Use code LEAF10 for 10% off.' },
      { section: 'Help > Refunds > Exceptions', text: 'Gift cards. Sale items.' },
    ]);
  });

  it('tables read row by row with their header; Setext headings, quotes, rules and fences handled', () => {
    const passages = documentPassages([
      'Shipping',
      '========',
      '| Region | Days |',
      '|:-------|-----:|',
      '| Metro  | 2    |',
      '| Rural  | 5    |',
      '',
      '> Live plants never ship to Alaska.',
      '---',
      '```',
      'curl https://example.com',
      '```',
    ].join('\r\n'));
    assert.deepEqual(passages, [
      { section: 'Shipping', text: 'Region: Metro, Days: 2. Region: Rural, Days: 5.' },
      { section: 'Shipping', text: 'Live plants never ship to Alaska.' },
      { section: 'Shipping', text: 'curl https://example.com' },
    ]);
  });

  it('plain text splits on blank lines only; a very long paragraph is cut at sentence ends', () => {
    assert.deepEqual(documentPassages('Refunds take a week.\nThey go to the card.\n\nDelivery takes 3 days.'), [
      { section: '', text: 'Refunds take a week. They go to the card.' },
      { section: '', text: 'Delivery takes 3 days.' },
    ]);
    const long = Array.from({ length: 60 }, (_, i) => `Sentence number ${i} says something about plants.`).join(' ');
    const pieces = documentPassages(long);
    assert.ok(pieces.length > 1);
    assert.ok(pieces.every((p) => p.text.length <= 1200 && /\.$/.test(p.text)));
    assert.equal(pieces.map((p) => p.text).join(' '), long);
  });
});
