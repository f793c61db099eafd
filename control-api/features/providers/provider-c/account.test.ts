import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { signatureC, validSignatureC } from './account.js';

describe('provider C request signatures (V2: HMAC-SHA256 of the URL without its query + the nonce)', () => {
  const url = 'https://voice.example.com/providers/c/answer';

  it('is base64 HMAC-SHA256 with the API Token over URL + nonce, the query string left out', () => {
    const expected = createHmac('sha256', 'token-1').update(`${url}12345`).digest('base64');
    assert.equal(signatureC('token-1', url, '12345'), expected);
    assert.equal(signatureC('token-1', `${url}?a=1&b=2`, '12345'), expected);
  });

  it('refuses another nonce, URL or token, and a missing header', () => {
    const sig = signatureC('token-1', url, 'n1');
    assert.equal(validSignatureC('token-1', sig, 'n1', url), true);
    assert.equal(validSignatureC('token-1', sig, 'n2', url), false);
    assert.equal(validSignatureC('token-1', sig, 'n1', `${url}x`), false);
    assert.equal(validSignatureC('token-2', sig, 'n1', url), false);
    assert.equal(validSignatureC('token-1', undefined, 'n1', url), false);
    assert.equal(validSignatureC('token-1', sig, undefined, url), false);
  });
});
