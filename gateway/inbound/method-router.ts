import type { Logger } from '../../core/logger.js';
import type { ServerRequest } from '../sip/ua/server-request.js';
import { SipError } from '../sip/ua/sip-error.js';

export type Next = () => Promise<void>;
export type Step<C> = (ctx: C, next: Next) => Promise<void>;

/**
 * Per-method middleware: each step either answers (throwing SipError with the precise status,
 * or responding itself) or calls `next`. A request no step answered gets 500, a thrown
 * non-SIP error 500 too, and both are logged: the router never leaves a transaction hanging.
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
      this.logger.error({ err: error, method: sreq.request.method, callId: sreq.request.callId }, 'inbound step failed');
      if (!sreq.answered) sreq.respond(500);
    }
  };
}
