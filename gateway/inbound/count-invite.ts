import { countUnansweredCall } from '../call/call-outcomes.js';
import type { ServerRequest } from '../sip/ua/server-request.js';
import { SipError } from '../sip/ua/sip-error.js';
import type { Step } from './method-router.js';
import { callTokenHeader } from './web-call-steps.js';

/**
 * First of the INVITE steps: counts the INVITEs that did not become calls in `vap_calls_total`,
 * by their final status (answered ones are counted when they end, with their duration). A status a
 * later step throws is answered by the router after the chain returns, so it is read from the error.
 */
export const countInviteOutcome: Step<ServerRequest> = async (sreq, next) => {
  const direction = sreq.request.headers.get(callTokenHeader) !== undefined ? 'web' : 'inbound';
  let status: number | undefined;
  try {
    await next();
    status = sreq.finalResponse?.status;
  } catch (error) {
    status = error instanceof SipError ? error.status : 500;
    throw error;
  } finally {
    if (status !== undefined && status >= 300) countUnansweredCall(direction, status === 487 ? 'cancelled' : status === 486 || status === 600 ? 'busy' : 'rejected', status);
  }
};
