import assert from 'node:assert/strict';
import { SipParseError, formatSipUri, isSipUri, isTelUri, parseNameAddr, parseUri, type SipUri } from './index.js';

function sip(text: string): SipUri {
  const u = parseUri(text);
  assert.ok(isSipUri(u));
  return u;
}

describe('URI parsing (RFC 3261 sec. 19.1, RFC 3966)', () => {
  it('reads user, password, host, port, parameters and headers', () => {
    const u = sip('sips:alice:secret@Atlanta.example.com:5061;transport=tcp;lr;maddr=239.255.255.1?subject=project%20x&priority=urgent');
    assert.equal(u.scheme, 'sips');
    assert.equal(u.user, 'alice');
    assert.equal(u.password, 'secret');
    assert.equal(u.host, 'Atlanta.example.com');
    assert.equal(u.port, 5061);
    assert.equal(u.params.get('transport'), 'tcp');
    assert.equal(u.params.get('lr'), null);
    assert.deepEqual(u.headers, [['subject', 'project x'], ['priority', 'urgent']]);
  });

  it('decodes escapes once and keeps the raw text', () => {
    const u = sip('sip:I%20have%20spaces@example.net;n%61me=v%61lue%25%34%31');
    assert.equal(u.user, 'I have spaces');
    assert.equal(u.params.get('name'), 'value%41');
    assert.equal(u.raw, 'sip:I%20have%20spaces@example.net;n%61me=v%61lue%25%34%31');
  });

  it('accepts IPv6 references and rejects broken ones', () => {
    const u = sip('sip:[2001:db8::10]:5060;transport=udp');
    assert.equal(u.host, '[2001:db8::10]');
    assert.equal(u.port, 5060);
    assert.throws(() => parseUri('sip:[2001:db8::10:5060'), SipParseError);
    assert.throws(() => parseUri('sip:[zz]'), SipParseError);
  });

  it('parses tel URIs and keeps unknown schemes opaque', () => {
    const t = parseUri('tel:+1-201-555-0123;phone-context=example.com');
    assert.ok(isTelUri(t));
    assert.equal(t.number, '+1-201-555-0123');
    assert.equal(t.params.get('phone-context'), 'example.com');
    const other = parseUri('urn:service:sos');
    assert.equal(other.scheme, 'urn');
  });

  it('rejects whitespace, bad ports and empty users', () => {
    for (const bad of ['sip:a b@example.com', 'sip:a@example.com:99999', 'sip:@example.com', 'sip:a@', 'nocolon', '<sip:a@b>']) {
      assert.throws(() => parseUri(bad), SipParseError, bad);
    }
  });

  it('formats URIs with the user part escaped', () => {
    assert.equal(formatSipUri({ user: 'a b#1', host: '2001:db8::1', port: 5060, params: { transport: 'tcp', lr: null } }), 'sip:a%20b%231@[2001:db8::1]:5060;transport=tcp;lr');
    assert.equal(sip(formatSipUri({ user: 'a b#1', host: 'example.com' })).user, 'a b#1');
  });
});

describe('name-addr parsing (RFC 3261 sec. 20.10)', () => {
  it('reads quoted display names with escapes', () => {
    const a = parseNameAddr('"J Rosenberg \\\\\\"" <sip:jdrosen@example.com>;tag=98asjd8');
    assert.equal(a.displayName, 'J Rosenberg \\"');
    assert.equal(a.tag, '98asjd8');
  });

  it('puts parameters after an addr-spec on the header, not the URI', () => {
    const a = parseNameAddr('sip:+19725552222@gw1.example.net;unknownparam');
    assert.equal(a.uriText, 'sip:+19725552222@gw1.example.net');
    assert.equal(a.params.get('unknownparam'), null);
    const b = parseNameAddr('<sip:+19725552222@gw1.example.net;unknownparam>');
    assert.equal(b.params.size, 0);
    assert.ok(isSipUri(b.uri) && b.uri.params.has('unknownparam'));
  });

  it('accepts the Contact wildcard only when allowed', () => {
    assert.ok(parseNameAddr('*', { allowWildcard: true }).wildcard);
    assert.throws(() => parseNameAddr('*'), SipParseError);
  });

  it('round-trips through toString', () => {
    const a = parseNameAddr('"Bob \\"B\\"" <sip:bob@example.com>;tag=x;q=0.5');
    const b = parseNameAddr(a.toString());
    assert.equal(b.displayName, 'Bob "B"');
    assert.equal(b.params.get('q'), '0.5');
  });
});
