import assert from 'node:assert/strict';
import {
  SipParseError,
  StreamFramer,
  createErrorResponse,
  parseDatagram,
  parseHead,
  serialize,
  type FramedItem,
  type SipMessage,
} from '../../gateway/sip/message/index.js';
import { tortureCases, type TortureCase } from './expectations.js';
import { loadBitExactMessage, loadTortureMessage, tortureMessageNames } from './load-fixture.js';

function parseError(buf: Buffer): SipParseError {
  try {
    parseDatagram(buf);
  } catch (e) {
    assert.ok(e instanceof SipParseError, `threw ${String(e)}`);
    return e;
  }
  assert.fail('the message was accepted');
}

function frame(buf: Buffer, chunk: number): FramedItem[] {
  const framer = new StreamFramer();
  const items: FramedItem[] = [];
  for (let i = 0; i < buf.length; i += chunk) items.push(...framer.push(buf.subarray(i, i + chunk)));
  return items;
}

function expectRejection(c: TortureCase, err: SipParseError): void {
  if (c.status === undefined) {
    // A bad response is dropped: there is nobody to answer (RFC 3261 sec. 18.1.2).
    assert.equal(err.canRespond, false);
    assert.equal(createErrorResponse(err), undefined);
    return;
  }
  assert.equal(err.status, c.status, err.reason);
  assert.ok(err.canRespond, 'enough of the request was read to answer it');
  const answer = createErrorResponse(err);
  assert.ok(answer);
  assert.equal(answer.status, c.status);
  assert.equal(answer.reason, c.reason);
  // The answer follows the request's Via back; it copies the other fields verbatim, malformed
  // or not (RFC 3261 sec. 8.2.6.2), so only its head is read back here.
  const text = serialize(answer).toString('utf8');
  const head = parseHead(text.slice(0, text.indexOf('\r\n\r\n')));
  assert.deepEqual(head.headers.getAll('via'), err.basis?.vias);
  assert.equal(head.start.kind, 'response');
}

describe('RFC 4475 torture messages', () => {
  it('has a fixture and an expectation for each of the 49 messages of sec. 3', () => {
    assert.deepEqual(tortureMessageNames(), tortureCases.map((c) => c.name).sort());
    assert.equal(tortureCases.length, 49);
  });

  for (const c of tortureCases) {
    describe(`${c.section} ${c.name} (${c.title})${c.ua ? ` - UA answers ${c.ua}` : ''}`, () => {
      const wire = (): Buffer => loadTortureMessage(c.name);

      if (c.outcome === 'accept') {
        it('is accepted with the values the RFC highlights', () => {
          c.check?.(parseDatagram(wire()));
        });
        it('keeps those values through serialize and re-parse', () => {
          const again: SipMessage = parseDatagram(serialize(parseDatagram(wire())));
          c.check?.(again);
        });
      } else {
        it(c.status === undefined ? 'is rejected and dropped' : `is rejected with ${c.status}`, () => {
          expectRejection(c, parseError(wire()));
        });
      }

      if (c.stream === 'waits-for-more') {
        it('on a stream, waits for the rest of the body instead of answering', () => {
          const framer = new StreamFramer();
          assert.deepEqual(framer.push(wire()), []);
          assert.ok(framer.buffered > 0);
        });
      } else if (c.stream === 'closes-connection') {
        it('on a stream, loses framing and closes the connection', () => {
          assert.throws(() => frame(wire(), 7), (e: unknown) => e instanceof SipParseError && e.fatal);
        });
      } else if (c.stream !== 'datagram-only') {
        it('is treated the same when it arrives in pieces on a stream', () => {
          const items = frame(wire(), 3);
          assert.equal(items.length, 1);
          const [item] = items;
          if (c.outcome === 'accept') {
            assert.ok(item?.kind === 'message');
            c.check?.(item.message);
          } else {
            assert.ok(item?.kind === 'invalid');
            expectRejection(c, item.error);
          }
        });
      }
    });
  }
});

describe('RFC 4475 archive files that differ from the figures', () => {
  it('baddn.dat (no empty line after "l: 0") is answered 400 Bad From Header, like the figure', () => {
    const wire = loadBitExactMessage('baddn');
    assert.ok(wire.toString('latin1').endsWith('l: 0\r\n') && !wire.includes('\r\n\r\n'), 'the fixture is the archive file');
    const c = tortureCases.find((t) => t.name === 'baddn') as TortureCase;
    expectRejection(c, parseError(wire));
  });

  it('a datagram cut inside a header line is answered 400 for the missing empty line', () => {
    const wire = loadBitExactMessage('baddn').subarray(0, -4);
    const err = parseError(wire);
    assert.equal(err.status, 400);
    assert.ok(err.canRespond);
    assert.equal(createErrorResponse(err)?.reason, 'Bad Request (no empty line after the headers)');
  });
});
