import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig, parseRoles } from './load-config.js';

describe('platform configuration', () => {
  it('defaults to all roles, control API 8080, sandbox 8081, SIP 5060', () => {
    const config = loadConfig({ env: {} });
    assert.deepEqual(config.roles, ['gateway', 'control', 'sandbox', 'worker']);
    assert.equal(config.control.port, 8080);
    assert.equal(config.sandbox.port, 8081);
    assert.equal(config.sip.port, 5060);
    assert.equal(config.sip.tlsPort, 5061);
    assert.equal(config.database.url, undefined);
  });

  it('layers file < environment < overrides', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vap-cfg-'));
    const file = path.join(dir, 'platform.yaml');
    writeFileSync(file, 'control:\n  port: 9000\n  baseDomain: example.test\nsandbox:\n  port: 9001\n');
    const config = loadConfig({ env: { CONTROL_PORT: '9100' }, file, overrides: { sandbox: { port: 9200 } } });
    assert.equal(config.control.port, 9100);
    assert.equal(config.control.baseDomain, 'example.test');
    assert.equal(config.sandbox.port, 9200);
  });

  it('rejects a non-integer port from the environment with the variable named', () => {
    assert.throws(() => loadConfig({ env: { CONTROL_PORT: 'eighty' } }), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /CONTROL_PORT: expected an integer, got "eighty"/);
      return true;
    });
  });

  it('reads the SIP edge and the recordings store from the environment, and checks them', () => {
    const config = loadConfig({ env: { SIP_EDGE_ADDRESSES: '10.0.0.10, 10.0.0.11', SIP_EDGE_PUBLIC_ADDRESS: '203.0.113.10', SIP_OUTBOUND_PROXY: 'sip:10.0.0.10:5060;lr', RECORDINGS_STORE: 'database', RECORDINGS_DIR: '/var/spool/vap' } });
    assert.deepEqual(config.sip.edge, { addresses: ['10.0.0.10', '10.0.0.11'], outboundProxy: 'sip:10.0.0.10:5060;lr', publicAddress: '203.0.113.10', publicPort: 5060, mediaPortMin: 30_000, mediaPortMax: 40_000 });
    assert.deepEqual(config.recordings, { store: 'database', directory: '/var/spool/vap' });
    assert.deepEqual(loadConfig({ env: {} }).recordings, { store: 'directory' });
    assert.deepEqual(loadConfig({ env: {} }).sip.edge, { addresses: [], publicPort: 5060, mediaPortMin: 30_000, mediaPortMax: 40_000 });
    assert.throws(() => loadConfig({ env: { SIP_EDGE_ADDRESSES: 'edge.example.com', SIP_EDGE_PUBLIC_ADDRESS: '203.0.113.10' } }), /sip\.edge\.addresses\.0: must be an IPv4 or IPv6 address/);
    assert.throws(() => loadConfig({ env: { SIP_OUTBOUND_PROXY: 'sip:edge.example.com' } }), /sip\.edge\.outboundProxy: must be sip:<IP address>/);
    assert.throws(() => loadConfig({ env: { SIP_OUTBOUND_PROXY: 'sip:10.0.0.10;transport=tls' } }), /sip\.edge\.outboundProxy/);
    assert.throws(() => loadConfig({ env: { RECORDINGS_STORE: 's3' } }), /recordings\.store/);
  });

  it('rejects out-of-range values and unknown keys with their paths', () => {
    assert.throws(() => loadConfig({ env: { SIP_PORT: '70000' } }), /sip\.port/);
    assert.throws(() => loadConfig({ env: {}, overrides: { bogus: 1 } as never }), /bogus/);
    assert.throws(() => loadConfig({ env: { DATABASE_URL: 'mysql://x' } }), /database\.url: must be a postgres/);
  });

  it('refuses a config file key the schema does not know, at every depth, naming its path', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vap-cfg-'));
    const file = path.join(dir, 'platform.yaml');
    // A misspelt key used to be dropped silently, leaving the default in force.
    writeFileSync(file, 'contrl: {}\ncontrol:\n  prot: 9000\nsip:\n  wsport: 5070\n  abuse: {perSourceRat: 5}\nhttp: {headersTimeout: 5}\nscheduler:\n  polMs: 250\nsecurity:\n  operatortoken: x\ndatabase: {pool: 3}\nmedia: {jitter: 4}\nsandbox: {token: []}\n');
    assert.throws(() => loadConfig({ env: {}, file }), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.deepEqual([...e.problems].sort(), [
        'contrl: unknown setting (did you mean control?)',
        'control.prot: unknown setting (did you mean control.port?)',
        'database.pool: unknown setting',
        'http.headersTimeout: unknown setting (did you mean http.headersTimeoutMs?)',
        'media.jitter: unknown setting',
        'sandbox.token: unknown setting (did you mean sandbox.tokens?)',
        'scheduler.polMs: unknown setting (did you mean scheduler.pollMs?)',
        'security.operatortoken: unknown setting (did you mean security.operatorToken?)',
        'sip.abuse.perSourceRat: unknown setting (did you mean sip.abuse.perSourceRate?)',
        'sip.wsport: unknown setting (did you mean sip.wsPort?)',
      ]);
      return true;
    });
    // The environment only ever sets known paths; unrelated variables are not settings.
    assert.equal(loadConfig({ env: { CONTROL_PROT: '1', SIP_WS_PORT: '5070' } }).sip.wsPort, 5070);
  });

  it('reads the HTTP server timeouts from the environment, with defaults and bounds', () => {
    assert.deepEqual(loadConfig({ env: {} }).http, { headersTimeoutMs: 15_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000, idleTimeoutMs: 120_000, drainLimitBytes: 64 * 1024 * 1024 });
    const http = loadConfig({ env: { HTTP_HEADERS_TIMEOUT_MS: '2000', HTTP_REQUEST_TIMEOUT_MS: '3000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000', HTTP_IDLE_TIMEOUT_MS: '9000', HTTP_DRAIN_LIMIT_BYTES: '0' } }).http;
    assert.deepEqual(http, { headersTimeoutMs: 2_000, requestTimeoutMs: 3_000, keepAliveTimeoutMs: 1_000, idleTimeoutMs: 9_000, drainLimitBytes: 0 });
    // Node refuses a header timeout longer than the request timeout.
    assert.throws(() => loadConfig({ env: { HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '4000' } }), /http\.headersTimeoutMs: http\.headersTimeoutMs must not exceed http\.requestTimeoutMs/);
    assert.throws(() => loadConfig({ env: { HTTP_REQUEST_TIMEOUT_MS: '0' } }), /http\.requestTimeoutMs/);
  });

  it('validates the RTP port range', () => {
    const config = loadConfig({ env: { RTP_PORT_MIN: '40000', RTP_PORT_MAX: '40100' } });
    assert.equal(config.media.portMin, 40000);
    assert.throws(() => loadConfig({ env: { RTP_PORT_MIN: '40000', RTP_PORT_MAX: '30000' } }), /media\.portMax: media\.portMin must be below media\.portMax/);
  });

  it('reads IPv6 media addresses, and refuses :: without an address to advertise', () => {
    assert.equal(loadConfig({ env: {} }).media.bindAddressIpv6, undefined);
    const config = loadConfig({ env: { RTP_BIND_ADDRESS_IPV6: '::1' } });
    assert.equal(config.media.bindAddressIpv6, '::1');
    const any = loadConfig({ env: { RTP_BIND_ADDRESS_IPV6: '::', RTP_PUBLIC_ADDRESS_IPV6: '2001:db8::5' } });
    assert.equal(any.media.publicAddressIpv6, '2001:db8::5');
    assert.throws(() => loadConfig({ env: { RTP_BIND_ADDRESS_IPV6: '::' } }), /media\.publicAddressIpv6: media\.publicAddressIpv6 is required when media\.bindAddressIpv6 is ::/);
    assert.throws(() => loadConfig({ env: { RTP_BIND_ADDRESS_IPV6: '127.0.0.1' } }), /media\.bindAddressIpv6: must be an IPv6 address/);
    assert.throws(() => loadConfig({ env: { RTP_PUBLIC_ADDRESS_IPV6: '2001:db8::5' } }), /media\.bindAddressIpv6: media\.publicAddressIpv6 needs media\.bindAddressIpv6/);
  });

  it('reads the campaign scheduler timings from the file and the environment, with defaults and bounds', () => {
    const defaults = loadConfig({ env: {} }).scheduler;
    assert.equal(defaults.pollMs, 500);
    assert.equal(defaults.reconcileGraceMs, 30_000);
    assert.equal(defaults.claimBatchSize, 200);
    const dir = mkdtempSync(path.join(tmpdir(), 'vap-cfg-'));
    const file = path.join(dir, 'platform.yaml');
    writeFileSync(file, 'scheduler:\n  claimBatchSize: 100\n  leaseMs: 30000\n');
    const config = loadConfig({ env: { SCHEDULER_POLL_MS: '250', SCHEDULER_CLAIM_BATCH_SIZE: '300' }, file });
    assert.equal(config.scheduler.pollMs, 250);
    assert.equal(config.scheduler.claimBatchSize, 300);
    assert.equal(config.scheduler.leaseMs, 30_000);
    assert.equal(config.scheduler.callbackPollMs, 1_000);
    assert.throws(() => loadConfig({ env: { SCHEDULER_POLL_MS: '0' } }), /scheduler\.pollMs/);
    assert.throws(() => loadConfig({ env: { SCHEDULER_CLAIM_BATCH_SIZE: 'many' } }), /SCHEDULER_CLAIM_BATCH_SIZE: expected an integer/);
  });

  it('reads the REFER final-NOTIFY wait, refusing one shorter than the transferee\'s Timer B', () => {
    assert.equal(loadConfig({ env: {} }).sip.referNotifyWaitMs, undefined);
    assert.equal(loadConfig({ env: { SIP_REFER_NOTIFY_WAIT_MS: '90000' } }).sip.referNotifyWaitMs, 90_000);
    assert.throws(() => loadConfig({ env: { SIP_REFER_NOTIFY_WAIT_MS: '30000' } }), /sip\.referNotifyWaitMs.*Timer B/);
  });

  it('reads the SIP abuse thresholds from the environment, with defaults and bounds', () => {
    const defaults = loadConfig({ env: {} }).sip.abuse;
    assert.deepEqual(
      [defaults.perSourceRate, defaults.perSourceBurst, defaults.refusalRate, defaults.retryAfterSeconds, defaults.maxConcurrentCalls, defaults.scannerUserAgents, defaults.queuePerSource, defaults.turnBudget],
      [50, 100, 5000, 5, 1000, undefined, 1000, 8],
    );
    const abuse = loadConfig({
      env: {
        SIP_ABUSE_PER_SOURCE_RATE: '20',
        SIP_ABUSE_PER_SOURCE_BURST: '40',
        SIP_ABUSE_REFUSAL_RATE: '0',
        SIP_ABUSE_RETRY_AFTER: '30',
        SIP_ABUSE_SCANNER_USER_AGENTS: 'friendly-scanner,^evil/[0-9]+',
        SIP_ABUSE_TURN_BUDGET: '4',
      },
    }).sip.abuse;
    assert.deepEqual([abuse.perSourceRate, abuse.perSourceBurst, abuse.refusalRate, abuse.retryAfterSeconds, abuse.turnBudget], [20, 40, 0, 30, 4]);
    assert.deepEqual(abuse.scannerUserAgents, ['friendly-scanner', '^evil/[0-9]+']);
    assert.throws(() => loadConfig({ env: { SIP_ABUSE_PER_SOURCE_RATE: '0' } }), /sip\.abuse\.perSourceRate/);
    assert.throws(() => loadConfig({ env: { SIP_ABUSE_REFUSAL_RATE: '-1' } }), /sip\.abuse\.refusalRate/);
    assert.throws(() => loadConfig({ env: { SIP_ABUSE_SCANNER_USER_AGENTS: 'ok,(unclosed' } }), /sip\.abuse\.scannerUserAgents\.1: must be a valid regular expression/);
  });

  it('reads admission by capacity and the UDP receive buffer, with defaults and bounds', () => {
    const defaults = loadConfig({ env: {} }).sip;
    assert.deepEqual(defaults.admission, { maxEventLoopLagMs: 50, maxRecogniserQueue: 20, maxReceiveWaitMs: 1000 }, 'maxCalls and maxCallsPerSecond follow the cores when unset');
    assert.equal(defaults.udpReceiveBufferBytes, 4 * 1024 * 1024);
    const sip = loadConfig({
      env: {
        SIP_ADMISSION_MAX_CALLS: '40',
        SIP_ADMISSION_MAX_CALLS_PER_SECOND: '8',
        SIP_ADMISSION_MAX_EVENT_LOOP_LAG_MS: '0',
        SIP_ADMISSION_MAX_RECOGNISER_QUEUE: '5',
        SIP_ADMISSION_MAX_RECEIVE_WAIT_MS: '500',
        SIP_UDP_RECEIVE_BUFFER_BYTES: '8388608',
      },
    }).sip;
    assert.deepEqual(sip.admission, { maxCalls: 40, maxCallsPerSecond: 8, maxEventLoopLagMs: 0, maxRecogniserQueue: 5, maxReceiveWaitMs: 500 });
    assert.equal(sip.udpReceiveBufferBytes, 8 * 1024 * 1024);
    assert.throws(() => loadConfig({ env: { SIP_ADMISSION_MAX_CALLS: '0' } }), /sip\.admission\.maxCalls/);
    assert.throws(() => loadConfig({ env: { SIP_ADMISSION_MAX_CALLS_PER_SECOND: 'fast' } }), /SIP_ADMISSION_MAX_CALLS_PER_SECOND: expected an integer/);
    assert.throws(() => loadConfig({ env: { SIP_UDP_RECEIVE_BUFFER_BYTES: '1024' } }), /sip\.udpReceiveBufferBytes/);
  });

  it('reads the SIP trust list, call limits, session timer, DNS servers and maddr groups, with their bounds', () => {
    const defaults = loadConfig({ env: {} }).sip;
    assert.deepEqual([defaults.trustedSources, defaults.maxCallsPerNumber, defaults.maxCallsPerTenant], [[], 100, 500]);
    assert.deepEqual([defaults.sessionExpiresSeconds, defaults.minSessionExpiresSeconds, defaults.dnsServers, defaults.maddrMulticast], [1800, 90, [], []]);
    const sip = loadConfig({
      env: {
        SIP_TRUSTED_SOURCES: '10.0.0.5, 2001:db8::7',
        SIP_MAX_CALLS_PER_NUMBER: '5',
        SIP_MAX_CALLS_PER_TENANT: '50',
        SIP_SESSION_EXPIRES: '600',
        SIP_MIN_SE: '120',
        SIP_DNS_SERVERS: '127.0.0.1:5353,[::1]:53',
        SIP_MADDR_MULTICAST: '239.1.1.1',
      },
    }).sip;
    assert.deepEqual(sip.trustedSources, ['10.0.0.5', '2001:db8::7']);
    assert.deepEqual([sip.maxCallsPerNumber, sip.maxCallsPerTenant, sip.sessionExpiresSeconds, sip.minSessionExpiresSeconds], [5, 50, 600, 120]);
    assert.deepEqual(sip.dnsServers, ['127.0.0.1:5353', '[::1]:53']);
    assert.throws(() => loadConfig({ env: { SIP_TRUSTED_SOURCES: 'pbx.example.com' } }), /sip\.trustedSources\.0: must be an IPv4 or IPv6 address/);
    assert.throws(() => loadConfig({ env: { SIP_MIN_SE: '30' } }), /sip\.minSessionExpiresSeconds/);
    assert.throws(() => loadConfig({ env: { SIP_SESSION_EXPIRES: '100', SIP_MIN_SE: '120' } }), /sip\.sessionExpiresSeconds: .*at least/);
    assert.throws(() => loadConfig({ env: { SIP_MADDR_MULTICAST: '10.0.0.1' } }), /must be a multicast address/);
    // c-ares aborts the process on port 0 and takes 99999 silently: both refused here.
    for (const bad of ['127.0.0.1:0', '127.0.0.1:99999', '[::1]:0', '[127.0.0.1]:53', 'dns.example:53']) {
      assert.throws(() => loadConfig({ env: { SIP_DNS_SERVERS: bad } }), /sip\.dnsServers\.0: must be an IP address/, bad);
    }
    assert.throws(() => loadConfig({ env: { SIP_MAX_CALLS_PER_TENANT: '0' } }), /sip\.maxCallsPerTenant/);
  });

  it('takes sip.publicAddress as an IP literal only', () => {
    assert.equal(loadConfig({ env: { SIP_PUBLIC_ADDRESS: '203.0.113.10' } }).sip.publicAddress, '203.0.113.10');
    assert.equal(loadConfig({ env: { SIP_PUBLIC_ADDRESS: '2001:db8::5' } }).sip.publicAddress, '2001:db8::5');
    assert.equal(loadConfig({ env: {} }).sip.publicAddress, undefined);
    for (const bad of ['sip.example.com', '203.0.113.10:5060', '[2001:db8::5]']) {
      assert.throws(() => loadConfig({ env: { SIP_PUBLIC_ADDRESS: bad } }), /sip\.publicAddress: must be an IPv4 or IPv6 address/, bad);
    }
  });

  it('reports an unreadable config file clearly', () => {
    assert.throws(() => loadConfig({ env: {}, file: '/nonexistent/platform.yaml' }), /config file \/nonexistent\/platform.yaml/);
  });

  it('parses --role lists and "all"', () => {
    assert.deepEqual(parseRoles('sandbox'), ['sandbox']);
    assert.deepEqual(parseRoles('control,sandbox'), ['control', 'sandbox']);
    assert.equal(parseRoles('all').length, 4);
    assert.throws(() => parseRoles('web'), /--role: expected one or more of all/);
  });
});
