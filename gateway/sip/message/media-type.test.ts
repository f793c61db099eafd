import assert from 'node:assert/strict';
import { SipParseError } from './errors.js';
import { isAcceptable, parseAccept, parseMediaType } from './media-type.js';

describe('media types (RFC 3261 sec. 20.1, 20.15)', () => {
  it('parses a Content-Type, lower-casing type and subtype, with parameters', () => {
    const t = parseMediaType('Application/SDP ; charset="utf-8"');
    assert.deepEqual([t.type, t.subtype, t.params.get('charset')], ['application', 'sdp', 'utf-8']);
    for (const bad of ['application', 'application/', '/sdp', 'application/*', 'appli cation/sdp', 'application/sdp;', 'application/sdp x']) {
      assert.throws(() => parseMediaType(bad), SipParseError, bad);
    }
  });

  it('parses Accept media ranges with qvalues and rejects malformed ones', () => {
    assert.deepEqual(parseAccept(['application/sdp;q=0.5, */*', 'text/*']).map((r) => [r.type, r.subtype, r.q]), [
      ['application', 'sdp', 0.5], ['*', '*', 1], ['text', '*', 1],
    ]);
    for (const bad of ['*/sdp', 'application/sdp;q=2', 'application/sdp;q=0.1234', 'application/sdp;q', 'sdp']) {
      assert.throws(() => parseAccept([bad]), SipParseError, bad);
    }
  });

  it('decides acceptability by the most specific range; q=0 refuses; empty Accept accepts nothing', () => {
    const sdp = (lines: string[]): boolean => isAcceptable(lines, 'application', 'sdp');
    assert.equal(sdp([]), true, 'no Accept: application/sdp is assumed (sec. 20.1)');
    assert.equal(sdp(['']), false, 'an empty Accept: nothing is acceptable');
    assert.equal(sdp(['text/nobodyKnowsThis']), false, 'RFC 4475 sdp01');
    assert.equal(sdp(['application/*']), true);
    assert.equal(sdp(['*/*']), true);
    assert.equal(sdp(['application/sdp;q=0, */*']), false);
    assert.equal(sdp(['*/*;q=0', 'application/sdp']), true);
    assert.equal(sdp(['application/sdp;level=1', 'text/html']), true);
  });
});
