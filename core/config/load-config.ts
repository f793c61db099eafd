import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { configSchema, roleNames, type ConfigInput, type PlatformConfig, type RoleName } from './schema.js';

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** Environment variables and the config path each one sets. */
const envBindings: ReadonlyArray<readonly [string, string, 'string' | 'int' | 'list' | 'bool']> = [
  ['LOG_LEVEL', 'logLevel', 'string'],
  ['DATA_DIR', 'dataDir', 'string'],
  ['SHUTDOWN_GRACE_MS', 'shutdownGraceMs', 'int'],
  ['DRAIN_TIMEOUT_MS', 'drainTimeoutMs', 'int'],
  ['ROLES', 'roles', 'list'],
  ['DATABASE_URL', 'database.url', 'string'],
  ['DATABASE_POOL_SIZE', 'database.poolSize', 'int'],
  ['CONTROL_HOST', 'control.host', 'string'],
  ['CONTROL_PORT', 'control.port', 'int'],
  ['BASE_DOMAIN', 'control.baseDomain', 'string'],
  ['OPS_HOST', 'ops.host', 'string'],
  ['OPS_PORT', 'ops.port', 'int'],
  ['METRICS_TOKEN', 'ops.metricsToken', 'string'],
  ['METRICS_ON_APP_PORTS', 'ops.metricsOnAppPorts', 'bool'],
  ['SANDBOX_HOST', 'sandbox.host', 'string'],
  ['SANDBOX_PORT', 'sandbox.port', 'int'],
  ['SANDBOX_TOKENS', 'sandbox.tokens', 'list'],
  ['SIP_HOST', 'sip.host', 'string'],
  ['SIP_PORT', 'sip.port', 'int'],
  ['SIP_TLS_PORT', 'sip.tlsPort', 'int'],
  ['SIP_WS_PORT', 'sip.wsPort', 'int'],
  ['SIP_WSS_PORT', 'sip.wssPort', 'int'],
  ['WEB_CALLS_ENABLED', 'webCalls.enabled', 'bool'],
  ['WEB_CALLS_TOKEN_TTL_SECONDS', 'webCalls.tokenTtlSeconds', 'int'],
  ['WEB_CALLS_WEBSOCKET_URL', 'webCalls.websocketUrl', 'string'],
  ['RTPENGINE_NG', 'webCalls.rtpengine.ng', 'string'],
  ['RTPENGINE_BINARY', 'webCalls.rtpengine.binary', 'string'],
  ['RTPENGINE_INTERFACE', 'webCalls.rtpengine.interface', 'string'],
  ['RTPENGINE_PORT_MIN', 'webCalls.rtpengine.portMin', 'int'],
  ['RTPENGINE_PORT_MAX', 'webCalls.rtpengine.portMax', 'int'],
  ['SIP_PUBLIC_ADDRESS', 'sip.publicAddress', 'string'],
  ['SIP_TLS_CERT_FILE', 'sip.tlsCertFile', 'string'],
  ['SIP_TLS_KEY_FILE', 'sip.tlsKeyFile', 'string'],
  ['SIP_TRUSTED_SOURCES', 'sip.trustedSources', 'list'],
  ['SIP_MAX_CALLS_PER_NUMBER', 'sip.maxCallsPerNumber', 'int'],
  ['SIP_MAX_CALLS_PER_TENANT', 'sip.maxCallsPerTenant', 'int'],
  ['SIP_SESSION_EXPIRES', 'sip.sessionExpiresSeconds', 'int'],
  ['SIP_MIN_SE', 'sip.minSessionExpiresSeconds', 'int'],
  ['SIP_DNS_SERVERS', 'sip.dnsServers', 'list'],
  ['SIP_MADDR_MULTICAST', 'sip.maddrMulticast', 'list'],
  ['SIP_REFER_NOTIFY_WAIT_MS', 'sip.referNotifyWaitMs', 'int'],
  ['SIP_REGISTRATION_POLL_MS', 'sip.registration.pollIntervalMs', 'int'],
  ['SIP_REGISTRATION_BACKOFF_BASE_SECONDS', 'sip.registration.backoffBaseSeconds', 'int'],
  ['SIP_REGISTRATION_BACKOFF_MAX_SECONDS', 'sip.registration.backoffMaxSeconds', 'int'],
  ['SIP_REGISTRATION_UNREGISTER_TIMEOUT_MS', 'sip.registration.unregisterTimeoutMs', 'int'],
  ['SIP_ABUSE_PER_SOURCE_RATE', 'sip.abuse.perSourceRate', 'int'],
  ['SIP_ABUSE_PER_SOURCE_BURST', 'sip.abuse.perSourceBurst', 'int'],
  ['SIP_ABUSE_REFUSAL_RATE', 'sip.abuse.refusalRate', 'int'],
  ['SIP_ABUSE_RETRY_AFTER', 'sip.abuse.retryAfterSeconds', 'int'],
  ['SIP_ABUSE_MAX_CONCURRENT_CALLS', 'sip.abuse.maxConcurrentCalls', 'int'],
  ['SIP_ABUSE_AUTH_FAILURE_LIMIT', 'sip.abuse.authFailureLimit', 'int'],
  ['SIP_ABUSE_AUTH_FAILURE_WINDOW_MS', 'sip.abuse.authFailureWindowMs', 'int'],
  ['SIP_ABUSE_BLOCK_MS', 'sip.abuse.blockMs', 'int'],
  ['SIP_ABUSE_SCANNER_USER_AGENTS', 'sip.abuse.scannerUserAgents', 'list'],
  ['SIP_ABUSE_QUEUE_PER_SOURCE', 'sip.abuse.queuePerSource', 'int'],
  ['SIP_ABUSE_TURN_BUDGET', 'sip.abuse.turnBudget', 'int'],
  ['SIP_ADMISSION_MAX_CALLS', 'sip.admission.maxCalls', 'int'],
  ['SIP_ADMISSION_MAX_CALLS_PER_SECOND', 'sip.admission.maxCallsPerSecond', 'int'],
  ['SIP_ADMISSION_MAX_EVENT_LOOP_LAG_MS', 'sip.admission.maxEventLoopLagMs', 'int'],
  ['SIP_ADMISSION_MAX_RECOGNISER_QUEUE', 'sip.admission.maxRecogniserQueue', 'int'],
  ['SIP_ADMISSION_MAX_RECEIVE_WAIT_MS', 'sip.admission.maxReceiveWaitMs', 'int'],
  ['SIP_UDP_RECEIVE_BUFFER_BYTES', 'sip.udpReceiveBufferBytes', 'int'],
  ['SIP_EDGE_ADDRESSES', 'sip.edge.addresses', 'list'],
  ['SIP_OUTBOUND_PROXY', 'sip.edge.outboundProxy', 'string'],
  ['SIP_EDGE_PUBLIC_ADDRESS', 'sip.edge.publicAddress', 'string'],
  ['SIP_EDGE_PUBLIC_PORT', 'sip.edge.publicPort', 'int'],
  ['SIP_EDGE_RTP_PORT_MIN', 'sip.edge.mediaPortMin', 'int'],
  ['SIP_EDGE_RTP_PORT_MAX', 'sip.edge.mediaPortMax', 'int'],
  ['PROVIDERS_HOST', 'providers.host', 'string'],
  ['PROVIDERS_PORT', 'providers.port', 'int'],
  ['PROVIDERS_PUBLIC_BASE_URL', 'providers.publicBaseUrl', 'string'],
  ['PROVIDERS_STREAM_START_TIMEOUT_MS', 'providers.streamStartTimeoutMs', 'int'],
  ['PROVIDERS_RECONNECT_GRACE_MS', 'providers.reconnectGraceMs', 'int'],
  ['PROVIDER_A_API_BASE_URL', 'providers.providerA.apiBaseUrl', 'string'],
  ['PROVIDER_B_API_BASE_URL', 'providers.providerB.apiBaseUrl', 'string'],
  ['PROVIDER_C_API_BASE_URL', 'providers.providerC.apiBaseUrl', 'string'],
  ['RTP_BIND_ADDRESS', 'media.bindAddress', 'string'],
  ['RTP_BIND_ADDRESS_IPV6', 'media.bindAddressIpv6', 'string'],
  ['RTP_PUBLIC_ADDRESS_IPV6', 'media.publicAddressIpv6', 'string'],
  ['RTP_PORT_MIN', 'media.portMin', 'int'],
  ['RTP_PORT_MAX', 'media.portMax', 'int'],
  ['RTP_TIMEOUT_MS', 'media.rtpTimeoutMs', 'int'],
  ['SCHEDULER_POLL_MS', 'scheduler.pollMs', 'int'],
  ['SCHEDULER_RECONCILE_POLL_MS', 'scheduler.reconcilePollMs', 'int'],
  ['SCHEDULER_RECONCILE_GRACE_MS', 'scheduler.reconcileGraceMs', 'int'],
  ['SCHEDULER_CLAIM_BATCH_SIZE', 'scheduler.claimBatchSize', 'int'],
  ['SCHEDULER_CLAIM_PARALLELISM', 'scheduler.claimParallelism', 'int'],
  ['SCHEDULER_LEASE_MS', 'scheduler.leaseMs', 'int'],
  ['SCHEDULER_QUEUE_RECHECK_MS', 'scheduler.queueRecheckMs', 'int'],
  ['SCHEDULER_OUTCOME_BATCH_SIZE', 'scheduler.outcomeBatchSize', 'int'],
  ['SCHEDULER_CALLBACK_POLL_MS', 'scheduler.callbackPollMs', 'int'],
  ['SCHEDULER_AGENDA_PROCESS_EVERY_MS', 'scheduler.agendaProcessEveryMs', 'int'],
  ['SCHEDULER_AGENDA_CONCURRENCY', 'scheduler.agendaConcurrency', 'int'],
  ['HTTP_HEADERS_TIMEOUT_MS', 'http.headersTimeoutMs', 'int'],
  ['HTTP_REQUEST_TIMEOUT_MS', 'http.requestTimeoutMs', 'int'],
  ['HTTP_KEEP_ALIVE_TIMEOUT_MS', 'http.keepAliveTimeoutMs', 'int'],
  ['HTTP_IDLE_TIMEOUT_MS', 'http.idleTimeoutMs', 'int'],
  ['HTTP_DRAIN_LIMIT_BYTES', 'http.drainLimitBytes', 'int'],
  ['RECORDINGS_STORE', 'recordings.store', 'string'],
  ['RECORDINGS_DIR', 'recordings.directory', 'string'],
  ['OPERATOR_TOKEN', 'security.operatorToken', 'string'],
  ['SECRET_KEY', 'security.secretKey', 'string'],
];

export const configEnvironmentVariables: readonly string[] = envBindings.map(([name]) => name);

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const child = node[key];
    if (typeof child !== 'object' || child === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}

function fromEnv(env: Env, problems: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, path, kind] of envBindings) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    if (kind === 'int') {
      if (!/^-?\d+$/.test(raw.trim())) {
        problems.push(`${name}: expected an integer, got "${raw}"`);
        continue;
      }
      setPath(out, path, Number(raw));
    } else if (kind === 'bool') {
      const v = raw.trim().toLowerCase();
      if (v !== 'true' && v !== 'false') {
        problems.push(`${name}: expected true or false, got "${raw}"`);
        continue;
      }
      setPath(out, path, v === 'true');
    } else if (kind === 'list') {
      setPath(out, path, raw.split(',').map((s) => s.trim()).filter(Boolean));
    } else {
      setPath(out, path, raw);
    }
  }
  return out;
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    const bothObjects =
      typeof prev === 'object' && prev !== null && !Array.isArray(prev) && typeof value === 'object' && value !== null && !Array.isArray(value);
    out[key] = bothObjects ? deepMerge(prev as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  return out;
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([`config file ${path}: ${(error as Error).message}`]);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    throw new ConfigError([`config file ${path}: not valid YAML/JSON: ${(error as Error).message}`]);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError([`config file ${path}: must hold a mapping`]);
  return parsed as Record<string, unknown>;
}

export interface LoadConfigOptions {
  readonly env?: Env;
  /** Path of a YAML or JSON file; `CONFIG_FILE` in the environment is used when absent. */
  readonly file?: string;
  /** Overrides applied last (command-line flags, tests). */
  readonly overrides?: ConfigInput;
}

/** Layers defaults < file < environment < overrides, and validates the result with clear messages. */
export function loadConfig(options: LoadConfigOptions = {}): PlatformConfig {
  const env = options.env ?? process.env;
  const problems: string[] = [];
  const filePath = options.file ?? env['CONFIG_FILE'];
  const fileLayer = filePath ? readConfigFile(filePath) : {};
  const envLayer = fromEnv(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const merged = deepMerge(deepMerge(fileLayer, envLayer), (options.overrides ?? {}) as Record<string, unknown>);
  const result = configSchema.safeParse(merged);
  if (!result.success) throw new ConfigError(result.error.issues.flatMap(describeIssue));
  return result.data;
}

/**
 * One line per problem, naming the path. Every object of the schema is strict, so a misspelt key
 * (`control.prot`) is refused like the API refuses unknown fields, instead of leaving the default
 * silently in force; a close known key is suggested.
 */
function describeIssue(issue: z.core.$ZodIssue): string[] {
  if (issue.code !== 'unrecognized_keys') return [`${issue.path.join('.') || '(root)'}: ${issue.message}`];
  const known = Object.keys(shapeAt(issue.path) ?? {});
  return issue.keys.map((key) => {
    const near = known.find((k) => k.toLowerCase() === key.toLowerCase()) ?? known.find((k) => editDistance(k.toLowerCase(), key.toLowerCase()) <= 2);
    const prefix = issue.path.length > 0 ? `${issue.path.join('.')}.` : '';
    return `${prefix}${key}: unknown setting${near ? ` (did you mean ${prefix}${near}?)` : ''}`;
  });
}

/** The keys the schema declares at a path, through its default/prefault wrappers. */
function shapeAt(path: readonly PropertyKey[]): Readonly<Record<string, z.ZodType>> | undefined {
  let node: unknown = configSchema;
  for (const key of [...path, undefined]) {
    for (let i = 0; i < 4 && node && !(node instanceof z.ZodObject); i += 1) node = (node as { def?: { innerType?: unknown } }).def?.innerType;
    if (!(node instanceof z.ZodObject)) return undefined;
    if (key === undefined) return node.shape as Record<string, z.ZodType>;
    node = (node.shape as Record<string, unknown>)[String(key)];
  }
  return undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

export function parseRoles(value: string): RoleName[] {
  const wanted = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (wanted.includes('all')) return [...roleNames];
  const parsed = z.array(z.enum(roleNames)).min(1).safeParse(wanted);
  if (!parsed.success) throw new ConfigError([`--role: expected one or more of all, ${roleNames.join(', ')}; got "${value}"`]);
  return parsed.data;
}
