import type { Logger } from '../../core/logger.js';
import { SipParseError } from '../sip/message/errors.js';
import { parseErrorReason } from '../sip/message/response.js';
import type { ServerRequest } from '../sip/ua/server-request.js';
import { SipError } from '../sip/ua/sip-error.js';

export type Next = () => Promise<void>;
export type Step<C> = (ctx: C, next: Next) => Promise<void>;

/** Runs `steps` in order, each with the next as its continuation: a sub-chain used as one step. */
export function chain<C>(steps: ReadonlyArray<Step<C>>): Step<C> {
  return async (ctx) => {
    const run = async (i: number): Promise<void> => {
      const step = steps[i];
      if (step) await step(ctx, () => run(i + 1));
    };
    await run(0);
  };
}

/**
 * Per-method middleware: each step either answers (throwing SipError with the precise status,
 * or responding itself) or calls `next`. A request no step answered gets 500, a thrown
 * non-SIP error 500 too, and both are logged: the router never leaves a transaction hanging.
 * A SipParseError is the peer's fault, not ours: the parser validates what steps read
 * (request-headers.ts), so one reaching here is a gap in that list, answered 400 and logged as
 * a warning to be closed there.
 */
export class MethodRouter {
  private readonly chains = new Map<string, Array<Step<ServerRequest>>>();

  constructor(private readonly logger: Logger) {}

  use(method: string, ...steps: Array<Step<ServerRequest>>): this {
    this.chains.set(method, [...(this.chains.get(method) ?? []), ...steps]);
    return this;
  }

  readonly handle = async (sreq: ServerRequest): Promise<void> => {
    const chain = this.chains.get(sreq.request.method);
    if (!chain) {
      sreq.respond(405);
      return;
    }
    const run = async (i: number): Promise<void> => {
      const step = chain[i];
      if (step) await step(sreq, () => run(i + 1));
    };
    try {
      await run(0);
      if (!sreq.answered && sreq.request.method !== 'INVITE') sreq.respond(500, { reason: 'Server Internal Error (unanswered)' });
    } catch (error) {
      if (error instanceof SipError) {
        if (!sreq.answered) sreq.respond(error.status, { reason: error.reason, headers: error.headers });
        return;
      }
      if (error instanceof SipParseError) {
        this.logger.warn({ err: error, method: sreq.request.method, sipCallId: sreq.request.callId }, 'malformed header found during routing: validate it in request-headers.ts');
        if (!sreq.answered) sreq.respond(error.status, { reason: parseErrorReason(error) });
        return;
      }
      this.logger.error({ err: error, method: sreq.request.method, sipCallId: sreq.request.callId }, 'inbound step failed');
      if (!sreq.answered) sreq.respond(500);
    }
  };
}
