import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/**
 * A real pino logger whose records are counted per level instead of printed, so a test or bench
 * can assert that bad peer input never logs at error level. Records at `keepFrom` or above are
 * kept (their `msg` and `err.message`) to say what went wrong.
 */
export interface LevelCountingLogger {
  readonly logger: Logger;
  /** Records per pino level number (30 info, 40 warn, 50 error, 60 fatal). */
  readonly counts: Map<number, number>;
  readonly kept: Array<{ level: number; msg: string; err?: string }>;
  atLeast(level: number): number;
}

export function levelCountingLogger(options: { level?: string; keepFrom?: number } = {}): LevelCountingLogger {
  const counts = new Map<number, number>();
  const kept: LevelCountingLogger['kept'] = [];
  const keepFrom = options.keepFrom ?? 50;
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        const rec = JSON.parse(line) as { level: number; msg?: string; err?: { message?: string } };
        counts.set(rec.level, (counts.get(rec.level) ?? 0) + 1);
        if (rec.level >= keepFrom && kept.length < 1000) kept.push({ level: rec.level, msg: rec.msg ?? '', ...(rec.err?.message ? { err: rec.err.message } : {}) });
      }
      done();
    },
  });
  const logger = pino({ level: options.level ?? 'info' }, sink);
  return {
    logger,
    counts,
    kept,
    atLeast: (level) => [...counts].reduce((n, [l, c]) => (l >= level ? n + c : n), 0),
  };
}
