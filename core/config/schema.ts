import { isIP } from 'node:net';
import { z } from 'zod';

export const roleNames = ['gateway', 'control', 'sandbox', 'worker'] as const;
export type RoleName = (typeof roleNames)[number];

const port = z.number().int().min(0).max(65535);
const host = z.string().min(1);
const ipAddress = z.string().refine((v) => isIP(v) !== 0, 'must be an IPv4 or IPv6 address');
/** `1.2.3.4`, `1.2.3.4:53`, `::1` or `[::1]:53` (what node:dns Resolver.setServers takes). */
const dnsServer = z.string().refine((v) => {
  if (isIP(v) !== 0) return true;
  const m = /^\[(.+)\]:(\d{1,5})$/.exec(v) ?? /^([^:]+):(\d{1,5})$/.exec(v);
  // Port 1-65535: c-ares aborts the whole process on port 0 (a native assertion in setServers).
  return m !== null && isIP(m[1] as string) === (v.startsWith('[') ? 6 : 4) && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
}, 'must be an IP address, optionally with :port 1-65535 ([v6]:port)');
const multicast = z.string().refine((v) => (isIP(v) === 4 && Number(v.split('.')[0]) >= 224 && Number(v.split('.')[0]) <= 239) || (isIP(v) === 6 && v.toLowerCase().startsWith('ff')), 'must be a multicast address');

const ms = (max: number) => z.number().int().min(1).max(max);

/** Campaign scheduler timings and batch sizes (docs/scheduler.md explains each). */
export const schedulerSchema = z.strictObject({
  /** Store poller interval where it is the trigger (PGlite). Keep <= 1 s: it bounds lateness. */
  pollMs: ms(60_000).default(500),
  /** Store poller interval next to Agenda (PostgreSQL), where it only reconciles lost jobs. */
  reconcilePollMs: ms(3_600_000).default(10_000),
  /** Next to Agenda the poller only takes messages overdue by this much. */
  reconcileGraceMs: z.number().int().min(0).max(3_600_000).default(30_000),
  /** Due messages claimed per transaction; a sweep claims its next batch once this one's INVITEs are out (docs/scheduler.md). */
  claimBatchSize: z.number().int().min(1).max(2_000).default(200),
  /** Claiming transactions run at once per sweep. */
  claimParallelism: z.number().int().min(1).max(16).default(2),
  /** An attempt's lease; renewed every third of it while the call runs. */
  leaseMs: ms(3_600_000).default(60_000),
  /** How soon a message held back by a concurrency limit is looked at again. */
  queueRecheckMs: ms(600_000).default(1_000),
  /** Unanswered outcomes settled per transaction at most. */
  outcomeBatchSize: z.number().int().min(1).max(2_000).default(500),
  /** Callback delivery poll (it is also woken after every state change). */
  callbackPollMs: ms(600_000).default(1_000),
  /** Agenda's fallback poll when a NOTIFY is missed. */
  agendaProcessEveryMs: ms(600_000).default(5_000),
  /** Agenda jobs one worker handles at once. */
  agendaConcurrency: z.number().int().min(1).max(1_000).default(50),
});
export type SchedulerSettings = z.infer<typeof schedulerSchema>;

const compiles = (pattern: string): boolean => {
  try {
    new RegExp(pattern, 'i');
    return true;
  } catch {
    return false;
  }
};

/**
 * SIP overload and abuse protection (docs/sip-stack.md "Overload and abuse" states the rule):
 * per source address, new requests beyond the admission bucket get 503 up to `refusalRate` per
 * second, and are dropped beyond it.
 */
export const sipAbuseSchema = z.strictObject({
  /** New requests per second and source that go on to the stack. */
  perSourceRate: z.number().int().min(1).max(1_000_000).default(50),
  /** Burst a source may send at once above that rate. */
  perSourceBurst: z.number().int().min(1).max(1_000_000).default(100),
  /** Requests per second and source answered 503 + Retry-After once over its rate; beyond it they are dropped (0: drop at once). */
  refusalRate: z.number().int().min(0).max(1_000_000).default(5_000),
  /** Retry-After of every 503 the gateway sends at a limit (RFC 3261 sec. 21.5.4). */
  retryAfterSeconds: z.number().int().min(1).max(86_400).default(5),
  /** Calls being set up or up in this gateway; new INVITEs beyond it get 503. */
  maxConcurrentCalls: z.number().int().min(1).max(1_000_000).default(1_000),
  /** Failed authentications (403 unknown source) within the window that block a source. */
  authFailureLimit: z.number().int().min(1).max(100_000).default(10),
  authFailureWindowMs: ms(86_400_000).default(60_000),
  /** How long a blocked source's new requests are dropped. */
  blockMs: ms(7 * 86_400_000).default(600_000),
  /** User-Agent patterns (case-insensitive regular expressions) dropped as scanners; the built-in list when absent. */
  scannerUserAgents: z.array(z.string().min(1).refine(compiles, 'must be a valid regular expression')).optional(),
  /** Admitted UDP messages waiting per source; beyond it they are dropped (the sender retransmits). */
  queuePerSource: z.number().int().min(1).max(1_000_000).default(1_000),
  /** Admitted UDP messages handed to the stack per source before other sources get their turn. */
  turnBudget: z.number().int().min(1).max(10_000).default(8),
});
export type SipAbuseSettings = z.infer<typeof sipAbuseSchema>;

/**
 * Admission by the node's capacity (docs/sip-stack.md "Admission by capacity"): a new inbound
 * call is taken while the node has room on every signal, refused 503 + Retry-After beyond,
 * before any parse, media or recipe work. Unset maxCalls / maxCallsPerSecond follow the cores
 * (bin/roles/gateway.ts: 30 and 2 per core).
 */
export const sipAdmissionSchema = z.strictObject({
  /** Calls being set up or up on this node, both directions, with new INVITEs waiting to be read. */
  maxCalls: z.number().int().min(1).max(1_000_000).optional(),
  /** New inbound calls taken per second on this node (a token bucket, burst the same). */
  maxCallsPerSecond: z.number().int().min(1).max(100_000).optional(),
  /** Mean event-loop delay over the last second beyond which new calls are refused while calls are in progress (0: not judged). */
  maxEventLoopLagMs: z.number().int().min(0).max(10_000).default(50),
  /** Utterances waiting for the recogniser beyond which new calls are refused, once the recogniser reports its queue. */
  maxRecogniserQueue: z.number().int().min(0).max(100_000).default(20),
  /** A new INVITE that waited longer than this in the receive queue is refused 503 rather than set up (0: never). */
  maxReceiveWaitMs: z.number().int().min(0).max(60_000).default(1_000),
});
export type SipAdmissionSettings = z.infer<typeof sipAdmissionSchema>;

/** `sip:<IP literal>[:port][;transport=udp|tcp]`: where every outbound request goes first (RFC 3261 sec. 8.1.2). */
const outboundProxy = z.string().refine((v) => {
  const m = /^sip:(\[[0-9a-fA-F:.]+\]|[0-9.]+)(?::(\d{1,5}))?((?:;[a-z]+(?:=[a-z]+)?)*)$/i.exec(v);
  if (!m) return false;
  const host = (m[1] as string).replace(/^\[|\]$/g, '');
  const portOk = m[2] === undefined || (Number(m[2]) >= 1 && Number(m[2]) <= 65535);
  const params = (m[3] ?? '').split(';').filter(Boolean).map((p) => p.toLowerCase());
  return isIP(host) !== 0 && portOk && params.every((p) => p === 'lr' || p === 'transport=udp' || p === 'transport=tcp');
}, 'must be sip:<IP address>[:port][;transport=udp|tcp] (an IP literal: the edge is a known address, not a DNS name)');

/**
 * A SIP edge (Kamailio, docs/edge.md) in front of this gateway: calls come only through it, with
 * the carrier's source address in the X-VAP-Source header, and outbound calls leave through it.
 */
export const sipEdgeSchema = z.strictObject({
  /**
   * The edge's addresses. When set, new calls are taken only from them (and sip.trustedSources);
   * their X-VAP-Source header is the address trunks are matched against, and that header from any
   * other source is refused 403.
   */
  addresses: z.array(ipAddress).default([]),
  /** Outbound calls (campaigns, transfers) are sent here with a Route header, and it relays them to the trunk. */
  outboundProxy: outboundProxy.optional(),
  /**
   * What customers are told to send calls to and allow (GET .../sip-info) behind the edge: the
   * edge's public address and SIP port (UDP and TCP), and rtpengine's public RTP range (its
   * --port-min/--port-max; rtpengine's own defaults here).
   */
  publicAddress: ipAddress.optional(),
  publicPort: z.number().int().min(1).max(65535).default(5060),
  mediaPortMin: z.number().int().min(1).max(65535).default(30_000),
  mediaPortMax: z.number().int().min(1).max(65535).default(40_000),
})
  .refine((e) => e.addresses.length === 0 || e.publicAddress !== undefined, {
    message: 'sip.edge.publicAddress is required with sip.edge.addresses: customers send their calls to the edge, not to this node',
    path: ['publicAddress'],
  })
  .refine((e) => e.mediaPortMin < e.mediaPortMax, { message: 'sip.edge.mediaPortMin must be below sip.edge.mediaPortMax', path: ['mediaPortMax'] });
export type SipEdgeSettings = z.infer<typeof sipEdgeSchema>;

/**
 * Timeouts and limits of every HTTP server the platform runs (control API, plant sandbox, the SIP
 * WebSocket upgrade); docs/configuration.md explains each. Node checks the header and request
 * timeouts on a timer, which serve() runs at a quarter of the shorter one (at most every second).
 */
export const httpSchema = z
  .strictObject({
    /** Time a client has to send a request's headers (slow-loris protection); 408 then close. */
    headersTimeoutMs: ms(600_000).default(15_000),
    /** Time a client has to send a whole request, body included; 408 then close. */
    requestTimeoutMs: ms(3_600_000).default(60_000),
    /** An idle kept-alive connection is closed after this long. */
    keepAliveTimeoutMs: ms(600_000).default(5_000),
    /** A connection with no bytes moving either way is closed after this long. */
    idleTimeoutMs: ms(3_600_000).default(120_000),
    /**
     * After an answer given before the whole body was read (413, 415, 401...), up to this many
     * more bytes are read and discarded so the client, still uploading, gets to read the answer;
     * beyond it the connection is closed.
     */
    drainLimitBytes: z.number().int().min(0).max(1024 * 1024 * 1024).default(64 * 1024 * 1024),
  })
  // Node refuses a header timeout longer than the request timeout.
  .refine((h) => h.headersTimeoutMs <= h.requestTimeoutMs, { message: 'http.headersTimeoutMs must not exceed http.requestTimeoutMs', path: ['headersTimeoutMs'] });
export type HttpSettings = z.infer<typeof httpSchema>;

/** An http(s) URL without user info, query or fragment (a base that paths are appended to). */
const baseUrl = (what: string) =>
  z.string().refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password && !u.search && !u.hash;
    } catch {
      return false;
    }
  }, `${what} must be an http:// or https:// URL without credentials, query or fragment`);

/**
 * Cloud telephony providers (docs/providers.md): the listener their webhooks and media streams
 * reach (gateway role), the public URL they are given, and each provider's REST API base.
 */
export const providersSchema = z.strictObject({
  host: host.default('0.0.0.0'),
  port: port.default(8082),
  /** The URL providers reach this listener at (they sign requests with it); default http://<sip.publicAddress>:<port>. */
  publicBaseUrl: baseUrl('providers.publicBaseUrl').optional(),
  /** A call whose media stream has not started this long after the answer is given up. */
  streamStartTimeoutMs: ms(120_000).default(10_000),
  /** A media stream that dropped without the call ending may reconnect within this long. */
  reconnectGraceMs: ms(120_000).default(10_000),
  providerA: z.strictObject({ apiBaseUrl: baseUrl('providers.providerA.apiBaseUrl').default('https://api.twilio.com') }).prefault({}),
  /** Provider B's API is `https://<the number's Sub Domain>`; this overrides it for every number (a proxy). */
  providerB: z.strictObject({ apiBaseUrl: baseUrl('providers.providerB.apiBaseUrl').optional() }).prefault({}),
  providerC: z.strictObject({ apiBaseUrl: baseUrl('providers.providerC.apiBaseUrl').default('https://api.plivo.com') }).prefault({}),
});
export type ProvidersSettings = z.infer<typeof providersSchema>;

/**
 * Web calls from browsers (docs/sip-stack.md, Web calls): sip.js over SIP/WSS with WebRTC media,
 * which rtpengine turns into the plain RTP the platform's media speaks.
 */
const webCallsSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** How long a call token the management API issues may be used to start a call. */
    tokenTtlSeconds: z.number().int().min(10).max(3600).default(120),
    /** The wss:// URL browsers connect to; default `wss://<sip.publicAddress>:<sip.wssPort>`. Set it when a proxy or a DNS name fronts the gateway (the certificate must match it). */
    websocketUrl: z.string().regex(/^wss?:\/\/[^\s/]+(\/\S*)?$/, 'must be a ws:// or wss:// URL').optional(),
    rtpengine: z
      .strictObject({
        /** `host:port` of a running rtpengine's ng control socket; unset: the gateway starts its own (`binary`). */
        ng: z.string().regex(/^[^\s:]+:[0-9]{1,5}$/, 'must be host:port').optional(),
        binary: z.string().default('rtpengine'),
        /** rtpengine's `--interface`: the address browsers send media to (default sip.publicAddress); `local!advertised` behind NAT. */
        interface: z.string().optional(),
        portMin: port.default(30_000),
        portMax: port.default(30_999),
      })
      .refine((r) => r.portMin < r.portMax, { message: 'webCalls.rtpengine.portMin must be below portMax', path: ['portMax'] })
      .prefault({}),
  });
export type WebCallsSettings = z.infer<typeof webCallsSchema>;

/** Every setting of the platform, with its default. Parsed once at start (see load-config.ts). */
export const configSchema = z
  .strictObject({
    roles: z.array(z.enum(roleNames)).min(1).default([...roleNames]),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Where generated local state lives: PGlite files, the generated key and operator token. */
    dataDir: z.string().min(1).default('./data'),
    shutdownGraceMs: z.number().int().min(0).max(600_000).default(10_000),
    /**
     * SIGTERM or POST /v1/admin/drain: how long live calls may go on while new INVITEs get 503;
     * calls still up then get a BYE (docs/operations.md). 0 ends them at once.
     */
    drainTimeoutMs: z.number().int().min(0).max(86_400_000).default(300_000),
    database: z
      .strictObject({
        /** PostgreSQL connection string; without it an embedded PGlite under dataDir is used. */
        url: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL').optional(),
        poolSize: z.number().int().min(1).max(200).default(10),
      })
      .prefault({}),
    control: z
      .strictObject({
        host: host.default('0.0.0.0'),
        port: port.default(8080),
        /** Tenants are addressed as `<client_id>.<baseDomain>`. */
        baseDomain: z.string().min(1).default('localhost'),
        bodyLimitBytes: z.number().int().min(1024).max(50 * 1024 * 1024).default(1024 * 1024),
      })
      .prefault({}),
    http: httpSchema.prefault({}),
    /**
     * /healthz, /readyz and /metrics on a port of their own, for a process without the control
     * or sandbox role (a gateway or worker alone); unset: none.
     */
    ops: z
      .strictObject({
        host: host.default('0.0.0.0'),
        port: port.optional(),
        /**
         * A bearer token /metrics requires on every port that serves it (`Authorization: Bearer
         * <token>`, Prometheus' `authorization` scrape setting); unset: /metrics is open.
         */
        metricsToken: z.string().min(16, 'ops.metricsToken must be at least 16 characters').max(512).optional(),
        /**
         * Serve /metrics on the control and sandbox ports too; false keeps it on ops.port alone (say
         * on a private or loopback address), since its labels name tenants and trunks.
         */
        metricsOnAppPorts: z.boolean().default(true),
      })
      .prefault({}),
    sandbox: z
      .strictObject({
        host: host.default('0.0.0.0'),
        port: port.default(8081),
        /** Static bearer tokens accepted by the plant sandbox besides those issued through the API. */
        tokens: z.array(z.string().min(16, 'sandbox tokens must be at least 16 characters')).default([]),
      })
      .prefault({}),
    sip: z
      .strictObject({
        host: host.default('0.0.0.0'),
        port: port.default(5060),
        tlsPort: port.default(5061),
        wsPort: port.default(5062),
        /** SIP over secure WebSocket (RFC 7118) with the TLS certificate: what browsers use for web calls. */
        wssPort: port.default(5063),
        /**
         * Address advertised in Via/Contact/SDP and given to trunk customers as the signalling IP
         * (GET .../sip-info); defaults to the first non-internal IPv4 (core/config/advertised-address.ts).
         * An IP literal: SDP c= lines carry it, and customers allow-list it.
         */
        publicAddress: z.string().refine((v) => isIP(v) !== 0, 'must be an IPv4 or IPv6 address (it goes into SDP and trunk allow-lists)').optional(),
        tlsCertFile: z.string().optional(),
        tlsKeyFile: z.string().optional(),
        /** Addresses of the native telephony stack: INVITEs from them are taken without a trunk. */
        trustedSources: z.array(ipAddress).default([]),
        /** Concurrent calls per number (then 486) and per tenant (then 503); the domain has no per-number/tenant fields. */
        maxCallsPerNumber: z.number().int().min(1).max(100_000).default(100),
        maxCallsPerTenant: z.number().int().min(1).max(1_000_000).default(500),
        /** RFC 4028 session timer we ask for or volunteer (0: only when the peer asks); RFC 4028 sec. 4 recommends 1800 s. */
        sessionExpiresSeconds: z.number().int().min(0).max(86_400).default(1800),
        /** Our Min-SE: shorter intervals are refused 422. RFC 4028 sec. 5 sets 90 s as the floor. */
        minSessionExpiresSeconds: z.number().int().min(90).max(86_400).default(90),
        /** DNS servers for RFC 3263 lookups of trunk FQDNs (NAPTR/SRV/A); the system's when empty. */
        dnsServers: z.array(dnsServer).default([]),
        /** Multicast groups a Via maddr may direct responses to; any other maddr must be the request's source. */
        maddrMulticast: z.array(multicast).default([]),
        /**
         * Wait for a REFER's final NOTIFY after the 202. Unset: 64*T1 + 8*T1 (36 s), longer than the
         * transferee's INVITE to a silent target can last (Timer B); less than Timer B would lose outcomes.
         */
        referNotifyWaitMs: z.number().int().min(32_000, 'must outlast the transferee\'s Timer B (64*T1 = 32 s)').max(600_000).optional(),
        abuse: sipAbuseSchema.prefault({}),
        /** Trunks that register with their carriers (docs/carriers.md, RFC 3261 sec. 10.2). */
        registration: z
          .object({
            /** How often the gateway reads the trunk list again to start, restart or remove registrations. */
            pollIntervalMs: z.number().int().min(1_000).max(3_600_000).default(30_000),
            /** RFC 5626 sec. 4.5: the wait after a first failure, doubled per consecutive failure ... */
            backoffBaseSeconds: z.number().int().min(1).max(3_600).default(30),
            /** ... up to this; also the wait after a refusal (403, credentials refused). */
            backoffMaxSeconds: z.number().int().min(1).max(86_400).default(1_800),
            /** How long a drain or shutdown waits for the registrars' answers to Expires: 0. */
            unregisterTimeoutMs: z.number().int().min(0).max(60_000).default(5_000),
          })
          .prefault({}),
        admission: sipAdmissionSchema.prefault({}),
        /** SO_RCVBUF of the SIP UDP sockets: a burst waits in the kernel instead of being dropped (Linux caps it at net.core.rmem_max). */
        udpReceiveBufferBytes: z.number().int().min(65_536).max(1024 * 1024 * 1024).default(4 * 1024 * 1024),
        edge: sipEdgeSchema.prefault({}),
      })
      .refine((s) => s.sessionExpiresSeconds === 0 || s.sessionExpiresSeconds >= s.minSessionExpiresSeconds, {
        message: 'sip.sessionExpiresSeconds must be 0 or at least sip.minSessionExpiresSeconds',
        path: ['sessionExpiresSeconds'],
      })
      .prefault({}),
    media: z
      .strictObject({
        /** RTP sockets bind here; the SDP advertises `sip.publicAddress`. */
        bindAddress: host.default('0.0.0.0'),
        /**
         * IPv6 media (dual stack): RTP sockets for offers whose audio is on an IPv6 address (c=IN
         * IP6) bind here, e.g. `::` or this host's IPv6 address; unset: such offers get 488.
         */
        bindAddressIpv6: z.string().refine((v) => isIP(v) === 6, 'must be an IPv6 address').optional(),
        /** The IPv6 address our SDP advertises for them; default bindAddressIpv6 (required when that is `::`). */
        publicAddressIpv6: z.string().refine((v) => isIP(v) === 6 && v !== '::', 'must be an IPv6 address other than ::').optional(),
        portMin: port.default(20_000),
        portMax: port.default(29_999),
        /** Jitter buffer depth in 20 ms packets. */
        jitterDepth: z.number().int().min(1).max(50).default(3),
        /** A call whose peer sends no RTP for this long is ended (0: never). */
        rtpTimeoutMs: z.number().int().min(0).max(3_600_000).default(30_000),
      })
      .refine((m) => m.portMin < m.portMax && m.portMax - m.portMin >= 3, { message: 'media.portMin must be below media.portMax, with room for at least two RTP/RTCP pairs', path: ['portMax'] })
      .refine((m) => m.bindAddressIpv6 !== '::' || m.publicAddressIpv6 !== undefined, {
        message: 'media.publicAddressIpv6 is required when media.bindAddressIpv6 is :: (the SDP must name a reachable address)',
        path: ['publicAddressIpv6'],
      })
      .refine((m) => m.publicAddressIpv6 === undefined || m.bindAddressIpv6 !== undefined, {
        message: 'media.publicAddressIpv6 needs media.bindAddressIpv6 (the sockets it advertises)',
        path: ['bindAddressIpv6'],
      })
      .prefault({}),
    scheduler: schedulerSchema.prefault({}),
    providers: providersSchema.prefault({}),
    webCalls: webCallsSchema.prefault({}),
    /**
     * Call recordings: written to `directory` while a call runs; with `store: database` copied into
     * the database when it ends, so every node serves every recording (docs/edge.md, Recordings).
     */
    recordings: z
      .strictObject({
        store: z.enum(['directory', 'database']).default('directory'),
        /** Default `<dataDir>/recordings`. With `directory` behind an edge: a volume every node mounts. */
        directory: z.string().min(1).optional(),
      })
      .prefault({}),
    security: z
      .strictObject({
        /** Credential for the management API; generated into dataDir when absent. */
        operatorToken: z.string().min(24, 'operator token must be at least 24 characters').optional(),
        /** 32-byte key (hex or base64) that encrypts secrets at rest; generated into dataDir when absent. */
        secretKey: z.string().optional(),
      })
      .prefault({}),
  });

export type PlatformConfig = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
