import { StartupError, AppError } from '../../../core/errors.js';

/** PostgreSQL SQLSTATEs and socket errors that are the operator's to fix, with their sysexits status. */
const databaseReasons: Readonly<Record<string, { reason: string; exitCode: number }>> = {
  '3D000': { reason: 'the database does not exist: create it (createdb) or fix the name in DATABASE_URL', exitCode: 78 },
  '28P01': { reason: 'password authentication failed: check the user and password in DATABASE_URL', exitCode: 78 },
  '28000': { reason: 'the server refused this user (pg_hba.conf): check DATABASE_URL and the server\'s access rules', exitCode: 77 },
  '42501': { reason: 'the user may not create tables in this database: grant it, or use a database it owns', exitCode: 77 },
  ECONNREFUSED: { reason: 'nothing accepts connections there: is PostgreSQL running, and are host and port right?', exitCode: 69 },
  ENOTFOUND: { reason: 'the host name does not resolve', exitCode: 78 },
  EAI_AGAIN: { reason: 'the host name could not be resolved now (DNS)', exitCode: 75 },
  ETIMEDOUT: { reason: 'the connection timed out', exitCode: 69 },
};

/** Where a database URL points, without its password: host, port and database name. */
export function describeDatabaseUrl(url: string): { host: string; port: number; database: string } {
  try {
    const parsed = new URL(url);
    return { host: parsed.hostname, port: Number(parsed.port || 5432), database: decodeURIComponent(parsed.pathname.slice(1)) };
  } catch {
    return { host: '?', port: 0, database: '?' };
  }
}

/** The innermost error with a code (pg and Kysely wrap the driver's error as `cause`). */
function codedCause(error: unknown): { code?: string; message?: string } | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (typeof (e as { code?: unknown }).code === 'string') return e as { code: string; message: string };
  }
  return undefined;
}

/**
 * The start-up failure an error opening or migrating the store stands for, or undefined when it
 * is not one the operator can fix (a bug keeps its stack trace).
 */
export function storeStartupError(error: unknown, url: string | undefined): StartupError | undefined {
  if (error instanceof AppError && error.code === 'unavailable') {
    // The embedded database's directory lock: another process holds it (exit 75, as the CLI).
    return new StartupError(error.message, 75, {}, error);
  }
  if (!url) return undefined;
  const coded = codedCause(error);
  const known = coded?.code ? databaseReasons[coded.code] : undefined;
  if (!known) return undefined;
  const where = describeDatabaseUrl(url);
  return new StartupError(
    `PostgreSQL database "${where.database}" on ${where.host}:${where.port}: ${known.reason} (${coded!.code})`,
    known.exitCode,
    { ...where, code: coded!.code! },
    error,
  );
}
