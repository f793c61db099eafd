import type { CallDirectory, DirectoryTrunk } from '../../core/ports/call-directory.js';
import type { ServerRequest } from '../sip/ua/server-request.js';
import { SipError } from '../sip/ua/sip-error.js';
import { dialledUser, normaliseE164 } from './e164.js';
import { state } from './invite-state.js';
import { chain, type Step } from './method-router.js';

/**
 * Calls to a registered Contact (RFC 3261 sec. 10, 16.5: the registrar's proxy retargets an
 * INVITE for the address-of-record to the Contact we registered). Carriers that deliver DID calls
 * only to a registered contact send from addresses we may not know, so the trunk is recognised
 * by the Contact's user part, a per-trunk token only the registrar learnt
 * (control-api/features/gateway-adapters/store-trunk-registrations.ts), instead of the source address.
 */
export interface RegisteredContacts {
  /** The trunk that registered a Contact with this user part, if any. */
  trunkForContact(user: string): DirectoryTrunk | undefined;
}

const contactUser = (sreq: ServerRequest): string | undefined => {
  try {
    const uri = sreq.request.requestUri;
    return 'user' in uri ? uri.user : undefined;
  } catch {
    return undefined;
  }
};

/** An INVITE to a registered Contact takes the `registered` chain; any other takes `other`. */
export function byRegisteredContact(contacts: RegisteredContacts, registered: ReadonlyArray<Step<ServerRequest>>, other: ReadonlyArray<Step<ServerRequest>>): Step<ServerRequest> {
  const registeredChain = chain(registered);
  const otherChain = chain(other);
  return (sreq) => {
    const user = contactUser(sreq);
    const trunk = user === undefined ? undefined : contacts.trunkForContact(user);
    return trunk ? registeredChain(sreq, async () => undefined) : otherChain(sreq, async () => undefined);
  };
}

/**
 * The trunk and number of a call to a registered Contact: the trunk that registered it, the
 * number in To when it belongs to that trunk's tenant (the DID the carrier called), else the
 * trunk's own number (its first DID provisioned); none of them -> 404.
 */
export function registeredTrunkStep(contacts: RegisteredContacts, directory: CallDirectory): Step<ServerRequest> {
  return async (sreq, next) => {
    const s = state(sreq);
    const trunk = contacts.trunkForContact(contactUser(sreq) ?? '') as DirectoryTrunk;
    Object.assign(s, { trunks: [trunk], trusted: false, source: sreq.flow.remote.address, trunk });
    const to = dialledUser(sreq.request.to.uri);
    const e164 = to ? normaliseE164(to) : undefined;
    const dialled = e164 ? await directory.numberByE164(e164) : undefined;
    if (dialled && dialled.tenantId === trunk.tenantId) {
      Object.assign(s, { number: dialled, matchedBy: 'to' });
      return next();
    }
    const own = await directory.numberForTrunk(trunk);
    if (!own) throw new SipError(404, 'Not Found (no number provisioned on the registered trunk)');
    Object.assign(s, { number: own, matchedBy: 'registration' });
    return next();
  };
}
