import { isIP } from 'node:net';
import { z } from 'zod';
import { e164, resourceName } from './common.js';
import { secret } from '../../platform/crypto/secret.js';

/**
 * Custom SIP trunk (spec: "Custom SIP trunk" table). Inbound: which customer gateways may send
 * us calls and which DIDs / extension identify the tenant. Outbound: the digest credentials we
 * answer the customer's challenges with (RFC 3261 sec. 22.2), encrypted at rest.
 */

/** RFC 1123 host name with at least one dot (a gateway FQDN), max 253 characters. */
const fqdnPattern = /^(?=.{4,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z][A-Za-z0-9-]{0,61}[A-Za-z0-9]$/;

export const isHostAddress = (value: string): boolean => isIP(value) !== 0 || fqdnPattern.test(value);

export const hostAddress = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .refine(isHostAddress, { error: `${field} must be an IPv4/IPv6 address or a fully qualified domain name` })
    .transform((v) => v.toLowerCase())
    // The stored form is still a string: the pipe keeps the output schema precise (not `unknown`).
    .pipe(z.string());

export const sipTransports = ['udp', 'tcp', 'tls'] as const;

/**
 * SDES-SRTP (RFC 4568, RFC 3711) on the trunk's calls. `off`: plain RTP only (an RTP/SAVP offer is
 * refused 488). `optional`: SRTP when the carrier offers it over TLS, plain RTP otherwise; our own
 * offers stay plain. `required`: SRTP only, so TLS signalling only (the keys travel in the SDP);
 * our offers are RTP/SAVP and a plain-RTP offer is refused 488.
 */
export const srtpModes = ['off', 'optional', 'required'] as const;

export const sipTrunkSchema = z.object({
  name: resourceName('name'),
  inbound: z.object({
    /** Customer gateways allowed to send INVITEs on this trunk. */
    terminationAddresses: z
      .array(hostAddress('inbound.terminationAddresses entry'))
      .max(20, { error: 'inbound.terminationAddresses must have at most 20 entries' }),
    dids: z.array(e164('inbound.dids entry')).max(1_000, { error: 'inbound.dids must have at most 1000 numbers' }).default([]),
    /** Fallback tenant identifier when the carrier does not forward the To header correctly. */
    extension: z
      .string({ error: 'inbound.extension must be a string' })
      .regex(/^[0-9]{2,16}$/, { error: 'inbound.extension must be 2 to 16 digits' })
      .optional(),
  }),
  outbound: z
    .object({
      /** Where outbound INVITEs go; defaults to the first termination address. */
      address: hostAddress('outbound.address').optional(),
      port: z.number().int().min(1, { error: 'outbound.port must be between 1 and 65535' }).max(65_535, { error: 'outbound.port must be between 1 and 65535' }).optional(),
      transport: z.enum(sipTransports, { error: "outbound.transport must be 'udp', 'tcp' or 'tls'" }).default('udp'),
      username: z.string().min(1, { error: 'outbound.username must not be empty' }).max(200, { error: 'outbound.username must be at most 200 characters' }).optional(),
      password: secret('outbound.password'),
    })
    // The gateway answers a digest challenge only with both (RFC 3261 sec. 22.2 needs the user
    // name); a password alone would be kept and never used, so outbound calls would fail silently.
    .refine((o) => o.password === undefined || o.username !== undefined, {
      error: 'outbound.username is required when outbound.password is set',
      path: ['username'],
    })
    .default({ transport: 'udp' }),
  /**
   * Register with the carrier (RFC 3261 sec. 10.2), for carriers that deliver DID calls only to a
   * registered contact and take calls only from it. Digest credentials are the outbound ones.
   */
  registration: z
    .object({
      /** The registrar REGISTERs go to: an IP, or an FQDN resolved per RFC 3263 before every REGISTER. */
      registrar: hostAddress('registration.registrar'),
      port: z.number().int().min(1, { error: 'registration.port must be between 1 and 65535' }).max(65_535, { error: 'registration.port must be between 1 and 65535' }).optional(),
      transport: z.enum(sipTransports, { error: "registration.transport must be 'udp', 'tcp' or 'tls'" }).default('udp'),
      /** The address-of-record's domain and the REGISTER's Request-URI; the registrar's name when absent. */
      domain: hostAddress('registration.domain').optional(),
      /** The address-of-record's user; outbound.username when absent. */
      user: z
        .string({ error: 'registration.user must be a string' })
        .regex(/^[A-Za-z0-9\-_.!~*'()&=+$,;?/%]{1,100}$/, { error: 'registration.user must be 1 to 100 characters allowed in a SIP user part' })
        .optional(),
      /** The binding lifetime asked for (Expires); a registrar's 423 Min-Expires raises it. */
      expiresSeconds: z
        .number({ error: 'registration.expiresSeconds must be a number' })
        .int({ error: 'registration.expiresSeconds must be a whole number' })
        .min(60, { error: 'registration.expiresSeconds must be between 60 and 86400' })
        .max(86_400, { error: 'registration.expiresSeconds must be between 60 and 86400' })
        .default(3600),
    })
    .optional(),
  srtp: z.enum(srtpModes, { error: "srtp must be 'off', 'optional' or 'required'" }).default('off'),
})
  // A trunk is recognised by its termination addresses or by its registration (calls to the
  // registered contact): it needs at least one of the two.
  .refine((t) => t.inbound.terminationAddresses.length > 0 || t.registration !== undefined, {
    error: 'inbound.terminationAddresses needs at least one IP address or FQDN unless the trunk registers (registration)',
    path: ['inbound', 'terminationAddresses'],
  })
  // The address-of-record needs a user part (RFC 3261 sec. 10.2: To names the AOR).
  .refine((t) => t.registration === undefined || t.registration.user !== undefined || t.outbound.username !== undefined, {
    error: 'registration.user is required when outbound.username is not set',
    path: ['registration', 'user'],
  })
  // Our offers on a `required` trunk carry SDES keys, which may only travel over TLS (RFC 4568
  // sec. 8.3): a trunk that would send them in the clear cannot be saved.
  .refine((t) => t.srtp !== 'required' || t.outbound.transport === 'tls', {
    error: "srtp 'required' needs outbound.transport 'tls' (SDES keys travel in the SDP, RFC 4568 sec. 8.3)",
    path: ['srtp'],
  });
export type SipTrunkSpec = z.infer<typeof sipTrunkSchema>;
export type SipTrunkInput = z.input<typeof sipTrunkSchema>;

export const sipTrunkSecretPaths = ['outbound.password'] as const;
