import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths that may carry secrets. Redaction is a last line of defence: code must not log secrets
 * in the first place, but a whole request or config object logged by mistake stays clean.
 */
export const redactedPaths: readonly string[] = [
  'password',
  'token',
  'secret',
  'apiKey',
  'authorization',
  '*.password',
  '*.token',
  '*.secret',
  '*.apiKey',
  '*.authToken',
  '*.apiToken',
  '*.authorization',
  '*.*.password',
  '*.*.token',
  '*.*.secret',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers["proxy-authorization"]',
  'config.security.operatorToken',
  'config.security.secretKey',
  'config.ops.metricsToken',
  'config.database.url',
];

export function createLogger(options: { level?: string; name?: string } = {}, destination?: pino.DestinationStream): Logger {
  const loggerOptions: LoggerOptions = {
    level: options.level ?? 'info',
    name: options.name ?? 'voice-agent-platform',
    redact: { paths: [...redactedPaths], censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return destination ? pino(loggerOptions, destination) : pino(loggerOptions);
}

/** A logger that drops everything: the default for unit tests. */
export const silentLogger: Logger = pino({ level: 'silent' });
