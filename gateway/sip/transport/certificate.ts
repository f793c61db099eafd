import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TlsCredentials {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** Where they came from, for the startup log. */
  readonly source: 'config' | 'generated' | 'reused';
  readonly certFile: string;
}

/** Why no self-signed certificate could be made: each has its own remedy. */
export type TlsSetupFailure = 'data-dir-not-writable' | 'openssl-missing' | 'openssl-failed';

export class TlsSetupError extends Error {
  constructor(readonly failure: TlsSetupFailure, message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'TlsSetupError';
  }
}

/**
 * The TLS certificate for SIP over TLS (RFC 3261 sec. 26.2) and WSS: the configured files, or a
 * self-signed one made once with the system's `openssl` into `<dataDir>/sip-tls/` for local use.
 * openssl rather than an npm package because every target image has it and a certificate is
 * made once per installation; a production deployment configures real files.
 */
export async function loadOrCreateTlsCredentials(options: {
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly dataDir: string;
  readonly commonName?: string;
}): Promise<TlsCredentials> {
  if (options.certFile || options.keyFile) {
    if (!options.certFile || !options.keyFile) throw new Error('sip.tlsCertFile and sip.tlsKeyFile must be set together');
    return { cert: readFileSync(options.certFile), key: readFileSync(options.keyFile), source: 'config', certFile: options.certFile };
  }
  const dir = path.join(options.dataDir, 'sip-tls');
  const certFile = path.join(dir, 'sip-cert.pem');
  const keyFile = path.join(dir, 'sip-key.pem');
  if (existsSync(certFile) && existsSync(keyFile)) {
    return { cert: readFileSync(certFile), key: readFileSync(keyFile), source: 'reused', certFile };
  }
  ensureWritableDir(dir);
  const cn = options.commonName ?? 'localhost';
  try {
    await run('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '825',
      '-subj', `/CN=${cn}`, '-addext', `subjectAltName=DNS:${cn},DNS:localhost,IP:127.0.0.1,IP:::1`,
      '-keyout', keyFile, '-out', certFile,
    ]);
  } catch (error) {
    const { code, stderr } = error as NodeJS.ErrnoException & { stderr?: string };
    if (code === 'ENOENT') {
      throw new TlsSetupError('openssl-missing', 'openssl is not installed (not found on PATH), so no self-signed certificate could be made', error);
    }
    const said = (stderr ?? '').trim().split('\n').find((line) => line.trim() !== '') ?? (error as Error).message;
    throw new TlsSetupError('openssl-failed', `openssl could not make a self-signed certificate in ${dir}: ${said}`, error);
  }
  return { cert: readFileSync(certFile), key: readFileSync(keyFile), source: 'generated', certFile };
}

/** Creates `dir` when missing and proves this process may write there, naming what failed if not. */
function ensureWritableDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    const who = typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
    throw new TlsSetupError(
      'data-dir-not-writable',
      `the data directory is not writable by this process${who}: cannot create or write ${dir} (${code})`,
      error,
    );
  }
}
