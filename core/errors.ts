/**
 * One error model for the whole platform. Codes follow Twirp v7's set because the campaign
 * endpoint must speak it, and reusing it everywhere keeps the HTTP mapping in one place.
 */
export const errorCodes = {
  canceled: 408,
  unknown: 500,
  invalid_argument: 400,
  malformed: 400,
  deadline_exceeded: 408,
  not_found: 404,
  bad_route: 404,
  already_exists: 409,
  permission_denied: 403,
  unauthenticated: 401,
  resource_exhausted: 429,
  failed_precondition: 412,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  dataloss: 500,
} as const;

export type ErrorCode = keyof typeof errorCodes;

export interface FieldIssue {
  /** Dotted path of the offending field, e.g. `settings.ringDurationSeconds`. */
  readonly path: string;
  readonly message: string;
}

export interface AppErrorOptions {
  /** Whether repeating the same operation later may succeed. */
  readonly retryable?: boolean;
  readonly issues?: readonly FieldIssue[];
  readonly meta?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

export class AppError extends Error {
  readonly retryable: boolean;
  readonly issues: readonly FieldIssue[];
  readonly meta: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.retryable = options.retryable ?? (code === 'unavailable' || code === 'deadline_exceeded');
    this.issues = options.issues ?? [];
    this.meta = options.meta ?? {};
  }

  get httpStatus(): number {
    return errorCodes[this.code];
  }
}

export const invalidArgument = (message: string, issues: readonly FieldIssue[] = []): AppError =>
  new AppError('invalid_argument', message, { issues });

export const notFound = (what: string): AppError => new AppError('not_found', `${what} not found`);

export const alreadyExists = (message: string): AppError => new AppError('already_exists', message);

export const failedPrecondition = (message: string): AppError =>
  new AppError('failed_precondition', message);

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/**
 * A listener that could not be opened at start (port in use, no permission, address not local).
 * `listener` names what failed, e.g. `control API` or `SIP WS`, so the start-up failure can be
 * reported as one line naming the port and role instead of a stack trace (bin/platform.ts).
 */
export class ListenError extends Error {
  readonly code: string;

  constructor(
    readonly listener: string,
    readonly host: string,
    readonly port: number,
    cause: unknown,
  ) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? 'UNKNOWN';
    super(`${listener} cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}: ${listenReasons[code] ?? (cause as Error | undefined)?.message ?? 'failed'} (${code})`, { cause });
    this.name = 'ListenError';
    this.code = code;
  }
}

const listenReasons: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the port is already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'the address is not one of this host',
};

/** Wraps opening a listener so a listen/bind failure names the listener and port; other errors pass. */
export async function listening<T>(listener: string, host: string, port: number, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    const syscall = (error as NodeJS.ErrnoException | undefined)?.syscall;
    if (error instanceof ListenError || (syscall !== 'listen' && syscall !== 'bind')) throw error;
    throw new ListenError(listener, host, port, error);
  }
}

/**
 * A start-up failure that is the operator's to fix, not a bug (the data directory in use by
 * another process, a database that does not exist or refuses us): reported as one fatal line with
 * a sysexits status, never a stack trace (bin/platform.ts).
 */
export class StartupError extends Error {
  constructor(
    message: string,
    /** sysexits.h: 69 unavailable, 75 temporary failure (try again), 77 no permission, 78 configuration. */
    readonly exitCode: number,
    readonly details: Readonly<Record<string, string | number>> = {},
    cause?: unknown,
  ) {
    super(message, { cause });
    this.name = 'StartupError';
  }
}

/** An error's message for a log line or a record (what was thrown need not be an Error). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
