import assert from 'node:assert/strict';
import { apiTokenRequestSchema } from './api-token.js';
import { authProfileSchema } from './auth-profile.js';
import { businessHoursSchema } from './business-hours.js';
import { knowledgeDocumentSchema } from './knowledge-document.js';
import { pronunciationEntrySchema } from './pronunciation-entry.js';
import { sipTrunkSchema } from './sip-trunk.js';
import { matchesSpeechProfileFilter, speechProfileSchema } from './speech-profile.js';
import { tenantSchema } from './tenant.js';
import { accepts, rejectsWith } from '../../../test/helpers/schema-issues.js';

describe('domain resources', () => {
  describe('tenant', () => {
    it('client ID is the subdomain label; timezone is IANA', () => {
      accepts(tenantSchema, { clientId: 'acme-plants', name: 'Acme', timezone: 'Asia/Kolkata' });
      rejectsWith(tenantSchema, { clientId: 'acme.plants', name: 'Acme' }, 'clientId: clientId must be a DNS label: 1 to 63 lower-case letters, digits or inner hyphens');
      rejectsWith(tenantSchema, { clientId: 'a'.repeat(64), name: 'Acme' }, 'clientId: clientId must be a DNS label: 1 to 63 lower-case letters, digits or inner hyphens');
      rejectsWith(tenantSchema, { clientId: 'acme', name: 'Acme', timezone: 'IST' }, "timezone: timezone must be an IANA timezone such as 'Asia/Kolkata' or 'UTC'");
      rejectsWith(tenantSchema, { clientId: 'acme', name: 'Acme', settings: { webhookSecret: 'short' } }, 'settings.webhookSecret: settings.webhookSecret must be at least 16 characters');
    });
  });

  describe('API token request', () => {
    it('needs scopes and a future expiry', () => {
      accepts(apiTokenRequestSchema, { name: 'ci', scopes: ['campaign'], expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
      rejectsWith(apiTokenRequestSchema, { name: 'ci', scopes: [] }, 'scopes: scopes must name at least one scope');
      rejectsWith(apiTokenRequestSchema, { name: 'ci', scopes: ['root'] }, 'scopes.0: scope must be one of campaign, sandbox, management');
      rejectsWith(apiTokenRequestSchema, { name: 'ci', scopes: ['campaign'], expiresAt: '2000-01-01T00:00:00Z' }, 'expiresAt: expiresAt must be in the future');
    });
  });

  describe('SIP trunk', () => {
    const trunk = { name: 'carrier', inbound: { terminationAddresses: ['203.0.113.7', 'sbc.carrier.example'] } };
    it('inbound: IPs or FQDNs, E.164 DIDs, a digit extension', () => {
      const parsed = sipTrunkSchema.parse({ ...trunk, inbound: { ...trunk.inbound, terminationAddresses: ['2001:db8::1', 'SBC.Carrier.Example'], dids: ['+91 44 4000 0001'], extension: '7001' } });
      assert.deepEqual(parsed.inbound.terminationAddresses, ['2001:db8::1', 'sbc.carrier.example']);
      assert.deepEqual(parsed.inbound.dids, ['+914440000001']);
      rejectsWith(sipTrunkSchema, { ...trunk, inbound: { terminationAddresses: [] } }, 'inbound.terminationAddresses: inbound.terminationAddresses needs at least one IP address or FQDN unless the trunk registers (registration)');
      rejectsWith(sipTrunkSchema, { ...trunk, inbound: { terminationAddresses: ['not a host'] } }, 'inbound.terminationAddresses.0: inbound.terminationAddresses entry must be an IPv4/IPv6 address or a fully qualified domain name');
      rejectsWith(sipTrunkSchema, { ...trunk, inbound: { ...trunk.inbound, extension: '12a' } }, 'inbound.extension: inbound.extension must be 2 to 16 digits');
    });

    it('outbound: username, password (write-only), transport, port', () => {
      accepts(sipTrunkSchema, { ...trunk, outbound: { username: 'u', password: 'p', transport: 'tls', port: 5061 } });
      rejectsWith(sipTrunkSchema, { ...trunk, outbound: { transport: 'sctp' } }, "outbound.transport: outbound.transport must be 'udp', 'tcp' or 'tls'");
      rejectsWith(sipTrunkSchema, { ...trunk, outbound: { port: 70000 } }, 'outbound.port: outbound.port must be between 1 and 65535');
      assert.equal(sipTrunkSchema.parse(trunk).srtp, 'off');
      accepts(sipTrunkSchema, { ...trunk, srtp: 'optional' });
      accepts(sipTrunkSchema, { ...trunk, srtp: 'required', outbound: { transport: 'tls' } });
      rejectsWith(sipTrunkSchema, { ...trunk, srtp: 'always' }, "srtp: srtp must be 'off', 'optional' or 'required'");
      rejectsWith(sipTrunkSchema, { ...trunk, srtp: 'required' }, "srtp: srtp 'required' needs outbound.transport 'tls' (SDES keys travel in the SDP, RFC 4568 sec. 8.3)");
      rejectsWith(sipTrunkSchema, { ...trunk, outbound: { password: 'p' } }, 'outbound.username: outbound.username is required when outbound.password is set');
      accepts(sipTrunkSchema, { ...trunk, outbound: { username: 'u', password: '********' } });
    });

    it('registration: registrar, expires between 60 s and a day, an AOR user; it may stand in for termination addresses', () => {
      const parsed = sipTrunkSchema.parse({ name: 'reg', inbound: { terminationAddresses: [] }, outbound: { username: 'alice', password: 'p' }, registration: { registrar: 'Sip.Carrier.Example' } });
      assert.deepEqual(parsed.registration, { registrar: 'sip.carrier.example', transport: 'udp', expiresSeconds: 3600 });
      rejectsWith(sipTrunkSchema, { ...trunk, registration: { registrar: 'sip.carrier.example' } }, 'registration.user: registration.user is required when outbound.username is not set');
      rejectsWith(sipTrunkSchema, { ...trunk, registration: { registrar: 'sip.carrier.example', user: 'a', expiresSeconds: 30 } }, 'registration.expiresSeconds: registration.expiresSeconds must be between 60 and 86400');
      rejectsWith(sipTrunkSchema, { ...trunk, registration: { registrar: 'not a host', user: 'a' } }, 'registration.registrar: registration.registrar must be an IPv4/IPv6 address or a fully qualified domain name');
      rejectsWith(sipTrunkSchema, { ...trunk, registration: { registrar: '192.0.2.1', user: 'a b' } }, 'registration.user: registration.user must be 1 to 100 characters allowed in a SIP user part');
    });
  });

  describe('speech profile', () => {
    const asha = { name: 'Asha', language: 'hi-IN', gender: 'female', provider: 'espeak-ng', voiceName: 'hi+f3', tags: ['Indian', 'Multi-lingual'] };
    it('validates gender, provider and language', () => {
      accepts(speechProfileSchema, asha);
      rejectsWith(speechProfileSchema, { ...asha, gender: 'other' }, "gender: gender must be 'male' or 'female'");
      rejectsWith(speechProfileSchema, { ...asha, voiceName: '' }, 'voiceName: voiceName is required');
    });

    it('filters by gender, language (primary subtag matches) and tags, and favourites', () => {
      const p = speechProfileSchema.parse({ ...asha, favourite: true });
      assert.equal(matchesSpeechProfileFilter(p, { gender: 'female', language: 'hi', tags: ['indian'] }), true);
      assert.equal(matchesSpeechProfileFilter(p, { gender: 'all', favouritesOnly: true }), true);
      assert.equal(matchesSpeechProfileFilter(p, { gender: 'male' }), false);
      assert.equal(matchesSpeechProfileFilter(p, { language: 'en' }), false);
      assert.equal(matchesSpeechProfileFilter(p, { tags: ['Standard'] }), false);
    });
  });

  describe('pronunciation entry', () => {
    it('has a word, a pronunciation and a case-sensitive flag (default off)', () => {
      assert.equal(pronunciationEntrySchema.parse({ word: 'GST', pronunciation: 'G S T' }).caseSensitive, false);
      rejectsWith(pronunciationEntrySchema, { word: ' GST', pronunciation: 'x' }, 'word: word must not start or end with a space');
      rejectsWith(pronunciationEntrySchema, { word: 'GST' }, 'pronunciation: pronunciation must be a string');
    });
  });

  describe('auth profile', () => {
    it('Basic, Bearer or API key', () => {
      accepts(authProfileSchema, { name: 'crm', auth: { scheme: 'apiKey', in: 'header', name: 'X-Api-Key', value: 'k' } });
      rejectsWith(authProfileSchema, { name: 'crm', auth: { scheme: 'digest' } }, 'auth.scheme: auth.scheme must be one of basic, bearer, apiKey');
      rejectsWith(authProfileSchema, { name: 'crm', auth: { scheme: 'basic', username: 'a:b', password: 'p' } }, "auth.username: auth.username must not contain ':'");
    });
  });

  describe('business hours', () => {
    it('periods HH:MM with end after start, no overlaps, closed dates', () => {
      accepts(businessHoursSchema, { name: 'Office', timezone: 'Asia/Kolkata', hours: [{ day: 'monday', start: '09:00', end: '13:00' }, { day: 'monday', start: '14:00', end: '18:00' }], closedDates: ['2026-12-25'] });
      rejectsWith(businessHoursSchema, { name: 'Office', hours: [{ day: 'monday', start: '18:00', end: '09:00' }] }, 'hours.0.end: end must be later than start on the same day');
      rejectsWith(businessHoursSchema, { name: 'Office', hours: [{ day: 'monday', start: '09:00', end: '13:00' }, { day: 'monday', start: '12:00', end: '18:00' }] }, 'hours.1: hours 1 overlaps hours 0 on monday');
      rejectsWith(businessHoursSchema, { name: 'Office', hours: [{ day: 'monday', start: '09:00', end: '13:00' }], closedDates: ['25/12/2026'] }, 'closedDates.0: closedDates entries must be dates as YYYY-MM-DD');
    });
  });

  describe('knowledge document', () => {
    it('has content and tags', () => {
      accepts(knowledgeDocumentSchema, { name: 'care-guide', tags: ['plants', 'care'], content: 'Water a monstera weekly.' });
      rejectsWith(knowledgeDocumentSchema, { name: 'care-guide', content: '' }, 'content: content is required');
      rejectsWith(knowledgeDocumentSchema, { name: 'care-guide', content: 'x', tags: [''] }, 'tags.0: tag must not be empty');
    });
  });
});
