import assert from 'node:assert/strict';
import { signatureA, validSignatureA } from './signature.js';

/** The provider's own published example: Auth Token 12345, this URL and these POST fields. */
const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const fields = (caller: string): [string, string][] => [
  ['CallSid', 'CA1234567890ABCDE'],
  ['Caller', caller],
  ['Digits', '1234'],
  ['From', caller],
  ['To', '+18005551212'],
];

describe('provider A request signatures (HMAC-SHA1 of URL + sorted fields)', () => {
  it('matches the provider\'s published examples', () => {
    assert.equal(signatureA('12345', url, fields('+14158675309')), 'RSOYDt4T1cUTdK1PDd93/VVr8B8=');
    assert.equal(signatureA('12345', url, fields('+14158675310')), 'GvWf1cFY/Q7PnoempGyD5oXAezc=');
  });

  it('does not depend on the order the fields arrived in', () => {
    assert.equal(signatureA('12345', url, [...fields('+14158675309')].reverse()), 'RSOYDt4T1cUTdK1PDd93/VVr8B8=');
  });

  it('validates the exact request and refuses any change to the URL, a field or the token', () => {
    const sig = signatureA('12345', url, fields('+14158675309'));
    assert.equal(validSignatureA('12345', sig, url, fields('+14158675309')), true);
    assert.equal(validSignatureA('12345', sig, url.replace('foo=1', 'foo=2'), fields('+14158675309')), false);
    assert.equal(validSignatureA('12345', sig, url, fields('+14158675300')), false);
    assert.equal(validSignatureA('54321', sig, url, fields('+14158675309')), false);
    assert.equal(validSignatureA('12345', undefined, url, fields('+14158675309')), false);
    assert.equal(validSignatureA('12345', `${sig}x`, url, fields('+14158675309')), false);
  });

  it('accepts the URL with its default port written out or left off, as the provider\'s validators do', () => {
    const withPort = 'https://mycompany.com:443/myapp.php?foo=1&bar=2';
    assert.equal(validSignatureA('12345', signatureA('12345', withPort, fields('+1')), url, fields('+1')), true);
    assert.equal(validSignatureA('12345', signatureA('12345', url, fields('+1')), withPort, fields('+1')), true);
    assert.equal(validSignatureA('12345', signatureA('12345', 'https://mycompany.com:8443/myapp.php?foo=1&bar=2', fields('+1')), url, fields('+1')), false);
  });

  it('signs a GET (the media stream handshake) over the URL alone, and repeated field names value by value', () => {
    const ws = 'wss://voice.example.com/providers/a/calls/abc/stream';
    assert.equal(validSignatureA('t', signatureA('t', ws), ws), true);
    const repeated: [string, string][] = [['StatusCallbackEvent', 'ringing'], ['StatusCallbackEvent', 'answered']];
    assert.equal(signatureA('t', ws, repeated), signatureA('t', ws, [...repeated].reverse()));
    assert.notEqual(signatureA('t', ws, repeated), signatureA('t', ws, [['StatusCallbackEvent', 'ringing']]));
  });
});
