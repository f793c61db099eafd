import type { SipRequest } from '../message/message.js';

/**
 * RFC 3261 sec. 12.1.1: the dialog is SIPS when the INVITE's Request-URI was, or the top
 * Record-Route if there was one, else its Contact; then our Contact must be a SIPS URI too.
 */
export function sipsDialog(req: SipRequest): boolean {
  if (req.requestUri.scheme === 'sips') return true;
  const rr = req.recordRoutes[0];
  const target = rr ?? req.contacts[0];
  return target !== undefined && target.uri.scheme === 'sips';
}
