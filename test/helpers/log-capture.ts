import { createLogger, type Logger } from '../../core/logger.js';

/** One JSON log line as pino wrote it (the project's logger: redaction, level labels). */
export type LogLine = Record<string, unknown> & { readonly level: string; readonly msg: string };

export interface LogCapture {
  readonly logger: Logger;
  readonly lines: LogLine[];
  /** Lines whose message contains `text`. */
  find(text: string): LogLine[];
  /** The whole captured output, for "no secret in the log" checks. */
  text(): string;
}

/** The project's logger writing into memory: what production would log, readable by a test. */
export function captureLogs(level = 'debug'): LogCapture {
  const raw: string[] = [];
  const lines: LogLine[] = [];
  const logger = createLogger({ level }, {
    write(line: string) {
      raw.push(line);
      lines.push(JSON.parse(line) as LogLine);
    },
  });
  return { logger, lines, find: (text) => lines.filter((l) => l.msg.includes(text)), text: () => raw.join('') };
}
