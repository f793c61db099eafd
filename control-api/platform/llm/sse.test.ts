import assert from 'node:assert/strict';
import { SseParser } from './sse.js';

describe('SseParser (WHATWG event stream)', () => {
  it('joins multi-line data, skips comments and dispatches on blank lines across chunk borders', () => {
    const parser = new SseParser();
    const events = [...parser.push(': hello\r\nevent: up'), ...parser.push('date\r\ndata: a\r'), ...parser.push('\ndata: b\n\n'), ...parser.push('data: c\n\n')];
    assert.deepEqual(events.map((e) => [e.event, e.data]), [['update', 'a\nb'], ['message', 'c']]);
  });

  it('flushes a final event without a trailing blank line at end of stream', () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push('data: [DONE]'), []);
    assert.deepEqual(parser.end().map((e) => e.data), ['[DONE]']);
  });
});
