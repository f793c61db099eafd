import assert from 'node:assert/strict';
import { SourceSelector } from './source-selector.js';

describe('RTP source (SSRC) selection', () => {
  it('lets a new source take over after three packets in sequence, while the old one still sends', () => {
    const s = new SourceSelector();
    assert.equal(s.decide(1, 100, 0), 'play');
    assert.equal(s.decide(2, 5000, 10), 'drop');
    assert.equal(s.decide(1, 101, 20), 'play');
    assert.equal(s.decide(2, 5001, 30), 'drop');
    assert.equal(s.decide(2, 5002, 50), 'switch');
    assert.equal(s.decide(2, 5003, 70), 'play');
    assert.equal(s.decide(1, 102, 40), 'drop', 'the old source no longer plays while the new one talks');
  });

  it('returns to a source heard before only when the current one falls silent', () => {
    const s = new SourceSelector(3, 100);
    s.decide(1, 1, 0);
    for (let i = 0; i < 3; i++) s.decide(2, 10 + i, 20 * i);
    for (let i = 0; i < 5; i++) assert.equal(s.decide(1, 2 + i, 60 + i * 10), 'drop');
    assert.equal(s.decide(1, 8, 200), 'switch');
    assert.equal(s.switches, 2);
  });

  it('takes a plain SSRC change (old source gone) at once', () => {
    const s = new SourceSelector();
    s.decide(1, 1, 0);
    assert.equal(s.decide(9, 77, 150), 'switch');
  });
});
