import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { TlsSetupError, loadOrCreateTlsCredentials } from './certificate.js';

describe('SIP TLS certificate: configured, generated into dataDir, or a precise reason why not', function () {
  this.timeout(20_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'vap-cert-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('generates a self-signed certificate for the advertised address once, then reuses it', async () => {
    const made = await loadOrCreateTlsCredentials({ dataDir: dir, commonName: '192.0.2.7' });
    assert.equal(made.source, 'generated');
    assert.equal(made.certFile, path.join(dir, 'sip-tls', 'sip-cert.pem'));
    const cert = new X509Certificate(made.cert);
    assert.match(cert.subject, /CN=192\.0\.2\.7/);
    assert.match(cert.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
    const again = await loadOrCreateTlsCredentials({ dataDir: dir, commonName: '192.0.2.7' });
    assert.equal(again.source, 'reused');
    assert.deepEqual(again.cert, made.cert);
  });

  it('says openssl is missing when it is not on PATH', async () => {
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      await assert.rejects(loadOrCreateTlsCredentials({ dataDir: dir }), (error: unknown) => {
        assert.ok(error instanceof TlsSetupError);
        assert.equal(error.failure, 'openssl-missing');
        assert.match(error.message, /openssl is not installed/);
        return true;
      });
    } finally {
      process.env.PATH = saved;
    }
  });

  it('says the data directory is the problem when the certificate folder cannot be made there', async () => {
    const notADir = path.join(dir, 'data');
    writeFileSync(notADir, 'a file where the data directory should be');
    await assert.rejects(loadOrCreateTlsCredentials({ dataDir: notADir }), (error: unknown) => {
      assert.ok(error instanceof TlsSetupError);
      assert.equal(error.failure, 'data-dir-not-writable');
      assert.match(error.message, /data directory is not writable by this process/);
      assert.ok(error.message.includes(path.join(notADir, 'sip-tls')), error.message);
      assert.match(error.message, /ENOTDIR/);
      assert.doesNotMatch(error.message, /openssl/);
      return true;
    });
  });

  it('uses configured files, and refuses a certificate without its key', async () => {
    const made = await loadOrCreateTlsCredentials({ dataDir: dir });
    const keyFile = path.join(dir, 'sip-tls', 'sip-key.pem');
    const configured = await loadOrCreateTlsCredentials({ dataDir: '/nonexistent', certFile: made.certFile, keyFile });
    assert.equal(configured.source, 'config');
    await assert.rejects(loadOrCreateTlsCredentials({ dataDir: dir, certFile: made.certFile }), /must be set together/);
  });
});
