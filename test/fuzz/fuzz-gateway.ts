import type { ActiveCall, CallHandler } from '../../core/ports/call-handler.js';
import { captureLogs, type LogCapture, type LogLine } from '../helpers/log-capture.js';
import { numbers, startGatewayFixture, type GatewayFixture } from '../gateway/gateway-harness.js';

/**
 * The agent side of a fuzzed call: it holds the call for `HOLD_MS` (long enough for in-dialog
 * cases to reach it), then hangs up, so media ports and calls never pile up.
 */
const HOLD_MS = 2000;
const holdThenHangUp: CallHandler = {
  async handle(call: ActiveCall): Promise<void> {
    const timer = setTimeout(() => void call.hangup('fuzz'), HOLD_MS);
    await call.ended;
    clearTimeout(timer);
  },
};

export interface FuzzGateway {
  readonly fx: GatewayFixture;
  /** The gateway's log at info and above, as production writes it. */
  readonly log: LogCapture;
  readonly sources: readonly string[];
  readonly probeSource: string;
  readonly did: string;
}

/**
 * The real gateway (SipGateway, the whole stack, UDP + TCP on 127.0.0.1) over the gateway tests'
 * PostgreSQL directory, for fuzzing: the case sources 127.0.3.1..N are trusted (the native-stack
 * path, so INVITEs reach the number lookup and, for the DID, a call) and spread so that each
 * stays far under the abuse guard's per-source rate; probes come from 127.0.0.2.
 */
export async function startFuzzGateway(sourceCount = 64): Promise<FuzzGateway> {
  const sources = Array.from({ length: sourceCount }, (_, i) => `127.0.3.${i + 1}`);
  const log = captureLogs('info');
  const fx = await startGatewayFixture({ logger: log.logger, trustedSources: sources, ringMs: 0, callHandler: holdThenHangUp });
  return { fx, log, sources, probeSource: '127.0.0.2', did: numbers.trunkDid };
}

/** Log lines at `level` (pino's label: info, warn, error, fatal). */
export const linesAt = (log: LogCapture, ...levels: string[]): LogLine[] => log.lines.filter((l) => levels.includes(l.level));
