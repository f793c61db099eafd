import assert from 'node:assert/strict';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ManagementHarness } from '../helpers/management-app.js';
import { sipInfoFromConfig } from '../../control-api/api/management/sip-info.js';
import { loadConfig } from '../../core/config/load-config.js';

forEachStore('GET /v1/tenants/{clientId}/sip-info (custom SIP trunk data for the customer)', (store) => {
  let h: ManagementHarness;
  let tokenA = '';

  before(async () => {
    h = await startManagementApp(store(), {}, {
      config: { sip: { publicAddress: '203.0.113.10', port: 5080, tlsPort: 5081, wsPort: 5082 }, media: { portMin: 30_000, portMax: 30_999 } },
    });
    const op = h.client();
    assert.equal((await op.post('/v1/tenants', { clientId: 'acme', name: 'Acme' })).status, 201);
    assert.equal((await op.post('/v1/tenants', { clientId: 'other', name: 'Other' })).status, 201);
    tokenA = String((await op.post('/v1/tenants/acme/tokens', { name: 'ci', scopes: ['management'] })).body['token']);
  });
  after(() => h.close());

  it('gives the configured signalling address, every transport with its port and URI, and the RTP range', async () => {
    const res = await h.client(tokenA).get('/v1/tenants/acme/sip-info');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      signalingAddress: '203.0.113.10',
      transports: [
        { transport: 'udp', port: 5080, uri: 'sip:203.0.113.10:5080;transport=udp' },
        { transport: 'tcp', port: 5080, uri: 'sip:203.0.113.10:5080;transport=tcp' },
        { transport: 'tls', port: 5081, uri: 'sips:203.0.113.10:5081', certificate: 'selfSigned' },
        { transport: 'ws', port: 5082, uri: 'ws://203.0.113.10:5082' },
        { transport: 'wss', port: 5063, uri: 'wss://203.0.113.10:5063', certificate: 'selfSigned' },
      ],
      media: { address: '203.0.113.10', rtpPortMin: 30_000, rtpPortMax: 30_999 },
    });
  });

  it('is documented in the OpenAPI document (the client above validated the response against it)', () => {
    const item = (h.document.paths as Record<string, Record<string, { operationId?: string }>>)['/v1/tenants/{clientId}/sip-info'];
    assert.equal(item?.['get']?.operationId, 'getSipInfo');
    assert.ok((h.document.components as { schemas: Record<string, unknown> }).schemas['SipInfo']);
  });

  it('is scoped like every tenant path: 401 without a credential, 404 for another tenant, read-only', async () => {
    assert.equal((await h.client('').get('/v1/tenants/acme/sip-info')).status, 401);
    assert.equal((await h.client(tokenA).get('/v1/tenants/other/sip-info')).status, 404);
    assert.equal((await h.client().get('/v1/tenants/other/sip-info')).status, 200, 'the operator reaches every tenant');
    const put = await h.client(tokenA).request('PUT', '/v1/tenants/acme/sip-info', { body: {}, unchecked: true });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get('allow'), 'HEAD, GET');
  });
});

describe('sipInfoFromConfig', () => {
  it('brackets an IPv6 address in URIs, names a configured certificate, and leaves out ephemeral ports', () => {
    const config = loadConfig({ env: { SIP_PUBLIC_ADDRESS: '2001:db8::5', SIP_TLS_CERT_FILE: '/etc/vap/sip.crt', SIP_TLS_KEY_FILE: '/etc/vap/sip.key', SIP_WS_PORT: '0' } });
    const info = sipInfoFromConfig(config);
    assert.equal(info.signalingAddress, '2001:db8::5');
    assert.deepEqual(info.transports, [
      { transport: 'udp', port: 5060, uri: 'sip:[2001:db8::5]:5060;transport=udp' },
      { transport: 'tcp', port: 5060, uri: 'sip:[2001:db8::5]:5060;transport=tcp' },
      { transport: 'tls', port: 5061, uri: 'sips:[2001:db8::5]:5061', certificate: 'configured' },
      { transport: 'wss', port: 5063, uri: 'wss://[2001:db8::5]:5063', certificate: 'configured' },
    ]);
  });

  it("behind a SIP edge names the edge's public address and rtpengine's range, never the node", () => {
    const env = { SIP_PUBLIC_ADDRESS: '10.0.0.11', SIP_EDGE_ADDRESSES: '10.0.0.10', SIP_EDGE_PUBLIC_ADDRESS: '203.0.113.10', SIP_EDGE_RTP_PORT_MIN: '30000', SIP_EDGE_RTP_PORT_MAX: '30999' };
    assert.deepEqual(sipInfoFromConfig(loadConfig({ env })), {
      signalingAddress: '203.0.113.10',
      transports: [
        { transport: 'udp', port: 5060, uri: 'sip:203.0.113.10:5060;transport=udp' },
        { transport: 'tcp', port: 5060, uri: 'sip:203.0.113.10:5060;transport=tcp' },
      ],
      media: { address: '203.0.113.10', rtpPortMin: 30000, rtpPortMax: 30999 },
    });
    const { SIP_EDGE_PUBLIC_ADDRESS: _none, ...without } = env;
    assert.throws(() => loadConfig({ env: without }), /sip\.edge\.publicAddress is required with sip\.edge\.addresses/);
  });

  it('without sip.publicAddress falls back to an address of this host', () => {
    const info = sipInfoFromConfig(loadConfig({ env: {} }));
    assert.match(info.signalingAddress, /^\d{1,3}(\.\d{1,3}){3}$/);
    assert.notEqual(info.signalingAddress, '0.0.0.0');
  });
});
