import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../core/config/load-config.js';

/**
 * Checks of the Dockerfile and docker-compose.yml that need no Docker engine (none runs on our
 * machines): the Dockerfile parsed by dockerfile-ast (the parser behind VS Code's Dockerfile
 * support), the compose file validated against the Compose Specification's JSON schema as the
 * maintained `dclint` linter ships it. Used by test/system/container-files.test.ts and by
 * scripts/check-dockerfile.ts, which also runs the Dockerfile's steps.
 */

/**
 * Node.js LTS lines an image may be based on, with their end of life (nodejs.org release
 * schedule). Node 20 ended on 2026-04-30 and is not listed; add a line when it becomes LTS.
 */
export const nodeLtsLines: Readonly<Record<number, string>> = { 22: '2027-04-30', 24: '2028-04-30', 26: '2029-04-30' };

export interface DockerStep {
  readonly keyword: string;
  /** The arguments without flags (`COPY --from=build a b` -> `a b`). */
  readonly args: string;
  readonly flags: Readonly<Record<string, string>>;
  readonly line: number;
}

export interface DockerStage {
  readonly name: string | undefined;
  readonly image: string;
  readonly tag: string;
  readonly steps: readonly DockerStep[];
}

function stepOf(instruction: Instruction): DockerStep {
  const flags: Record<string, string> = {};
  const withFlags = instruction as Instruction & { getFlags?: () => Array<{ getName(): string; getValue(): string | null }> };
  for (const flag of withFlags.getFlags?.() ?? []) flags[flag.getName()] = flag.getValue() ?? '';
  return {
    keyword: instruction.getKeyword(),
    args: (instruction.getArgumentsContent() ?? '').replace(/\s+/g, ' ').trim(),
    flags,
    line: instruction.getRange().start.line + 1,
  };
}

/** The stages of a Dockerfile, each with its steps in order (FROM itself excluded). */
export function parseDockerfile(text: string): DockerStage[] {
  const stages: Array<{ name: string | undefined; image: string; tag: string; steps: DockerStep[] }> = [];
  const dockerfile = DockerfileParser.parse(text);
  const froms = dockerfile.getFROMs();
  for (const instruction of dockerfile.getInstructions()) {
    if (instruction.getKeyword() === 'FROM') {
      const from = froms[stages.length];
      stages.push({ name: from?.getBuildStage() ?? undefined, image: from?.getImageName() ?? '', tag: from?.getImageTag() ?? '', steps: [] });
    } else {
      stages.at(-1)?.steps.push(stepOf(instruction));
    }
  }
  return stages;
}

/** The exec-form (JSON array) arguments of CMD, or of HEALTHCHECK after its `CMD` word. */
export function execForm(step: DockerStep): string[] | undefined {
  const json = step.keyword === 'HEALTHCHECK' ? step.args.replace(/^CMD\s+/, '') : step.args;
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? (parsed as string[]) : undefined;
  } catch {
    return undefined;
  }
}

/** What is wrong with the Dockerfile for this platform; empty when nothing is. */
export function dockerfileFindings(stages: readonly DockerStage[]): string[] {
  const findings: string[] = [];
  const final = stages.at(-1);
  if (!final) return ['no FROM: not a Dockerfile'];
  for (const stage of stages) {
    const major = Number(/^(\d+)-/.exec(stage.tag)?.[1]);
    if (stage.image !== 'node' || !/^\d+-bookworm-slim$/.test(stage.tag)) {
      findings.push(`FROM ${stage.image}:${stage.tag}: expected node:<LTS major>-bookworm-slim (the Debian the suite runs on)`);
    } else if (!(major in nodeLtsLines)) {
      findings.push(`FROM node:${stage.tag}: Node ${major} is not a supported LTS line (${Object.keys(nodeLtsLines).join(', ')})`);
    }
  }
  if (stages.length < 2) findings.push('single stage: build with dev dependencies in one stage, run with production dependencies in another');
  const runs = (stage: DockerStage): string[] => stage.steps.filter((s) => s.keyword === 'RUN').map((s) => s.args);
  if (!stages.slice(0, -1).some((s) => runs(s).some((r) => /\bnpm run build(:dist)?\b/.test(r)))) {
    findings.push('no build stage runs `npm run build:dist`');
  }
  if (!runs(final).some((r) => /\bnpm ci\b.*--omit=dev/.test(r))) findings.push('the runtime stage does not install with `npm ci --omit=dev`');
  const copiesDist = final.steps.some((s) => s.keyword === 'COPY' && s.flags['from'] !== undefined && /\bdist\b/.test(s.args));
  if (!copiesDist) findings.push('the runtime stage does not copy dist/ from the build stage');

  const users = final.steps.filter((s) => s.keyword === 'USER');
  const user = users.at(-1)?.args.split(':')[0];
  if (!user) findings.push('no USER: the platform would run as root');
  else if (user === 'root' || user === '0') findings.push(`USER ${user}: the platform must not run as root`);

  const volumeAt = final.steps.findIndex((s) => s.keyword === 'VOLUME' && s.args.includes('/data'));
  if (volumeAt < 0) findings.push('no VOLUME for /data');
  const prepared = final.steps
    .slice(0, volumeAt < 0 ? undefined : volumeAt)
    .some((s) => s.keyword === 'RUN' && /mkdir -p \/data\b/.test(s.args) && new RegExp(`chown (-R )?${user ?? 'node'}(:\\S+)? /data\\b`).test(s.args));
  if (!prepared) findings.push(`/data is not created and chowned to ${user ?? 'the runtime user'} before VOLUME (a new volume would be root-owned)`);
  const env = final.steps.filter((s) => s.keyword === 'ENV').map((s) => s.args).join(' ');
  if (!/\bDATA_DIR=\/data\b/.test(env)) findings.push('ENV DATA_DIR=/data is missing');

  const health = final.steps.filter((s) => s.keyword === 'HEALTHCHECK').at(-1);
  const probe = health ? execForm(health) : undefined;
  if (!health) findings.push('no HEALTHCHECK');
  else if (!probe || !probe.join(' ').includes('/readyz')) findings.push('HEALTHCHECK does not ask /readyz in exec form');

  const exposed = final.steps.filter((s) => s.keyword === 'EXPOSE').flatMap((s) => s.args.split(/\s+/));
  for (const { port, protocol, what } of platformListeners(loadConfig({ env: {} }))) {
    if (!exposed.includes(`${port}/${protocol}`) && !(protocol === 'tcp' && exposed.includes(String(port)))) findings.push(`${what} (${port}/${protocol}) is not in EXPOSE`);
  }

  const cmd = final.steps.filter((s) => s.keyword === 'CMD').at(-1);
  const argv = cmd ? execForm(cmd) : undefined;
  if (!argv) findings.push('no CMD in exec form');
  else {
    if (argv[0] !== 'node' || argv.at(-1) !== 'dist/bin/platform.js') findings.push(`CMD ${JSON.stringify(argv)}: expected plain node running dist/bin/platform.js`);
    if (argv.some((a) => a.includes('tsx'))) findings.push('CMD loads tsx: production runs compiled JavaScript');
  }
  if (final.steps.some((s) => s.keyword === 'ENTRYPOINT')) findings.push('ENTRYPOINT set: CMD alone keeps node as PID 1 receiving SIGTERM');
  return findings;
}

/**
 * Every port the platform listens on with this configuration (all roles): what the image must
 * EXPOSE and compose must publish. Read from the configuration, so a new listener cannot be
 * forgotten in the container files (the provider port 8082 once was).
 */
export function platformListeners(config: ReturnType<typeof loadConfig>): Array<{ port: number; protocol: 'tcp' | 'udp'; what: string }> {
  return [
    { port: config.control.port, protocol: 'tcp', what: 'control API' },
    { port: config.sandbox.port, protocol: 'tcp', what: 'plant sandbox' },
    { port: config.sip.port, protocol: 'udp', what: 'SIP UDP' },
    { port: config.sip.port, protocol: 'tcp', what: 'SIP TCP' },
    { port: config.sip.tlsPort, protocol: 'tcp', what: 'SIP TLS' },
    { port: config.sip.wsPort, protocol: 'tcp', what: 'SIP WebSocket' },
    { port: config.sip.wssPort, protocol: 'tcp', what: 'SIP secure WebSocket' },
    { port: config.providers.port, protocol: 'tcp', what: 'cloud telephony providers (webhooks, media streams)' },
  ];
}

/** The Compose Specification JSON schema, as shipped by the `dclint` package (devDependency). */
export function composeSchema(): Record<string, unknown> {
  const dclint = path.dirname(createRequire(import.meta.url).resolve('dclint/package.json'));
  const schema = JSON.parse(readFileSync(path.join(dclint, 'schemas', 'compose.schema.json'), 'utf8')) as Record<string, unknown>;
  // The file names its draft by a URL ajv does not know (no trailing '#'); ajv's default is that draft (07).
  delete schema['$schema'];
  return schema;
}

/** Schema violations of a compose document, as "path: message" lines; empty when valid. */
export function composeSchemaErrors(document: unknown): string[] {
  const validate = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true }).compile(composeSchema());
  if (validate(document)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
}

/**
 * Compose variable interpolation (Compose Specification, "Interpolation"): `$VAR`, `${VAR}`,
 * `${VAR:-default}` / `${VAR-default}`, `${VAR:?error}` / `${VAR?error}`, `$$` for a dollar.
 * A required variable that is missing throws, as `docker compose` refuses to start then.
 */
export function interpolate(value: string, env: Readonly<Record<string, string | undefined>>): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (match, name?: string, op?: string, arg?: string, bare?: string) => {
    if (match === '$$') return '$';
    const key = name ?? bare ?? '';
    const current = env[key];
    const unset = op?.startsWith(':') ? !current : current === undefined;
    if (op?.endsWith('-')) return unset ? (arg ?? '') : (current ?? '');
    if (op?.endsWith('?') && unset) throw new Error(`required variable ${key} is missing: ${arg ?? ''}`);
    return current ?? '';
  });
}

/** Every string in a parsed compose document, interpolated. */
export function interpolateDocument(document: unknown, env: Readonly<Record<string, string | undefined>>): unknown {
  if (typeof document === 'string') return interpolate(document, env);
  if (Array.isArray(document)) return document.map((d) => interpolateDocument(d, env));
  if (document && typeof document === 'object') {
    return Object.fromEntries(Object.entries(document).map(([k, v]) => [k, interpolateDocument(v, env)]));
  }
  return document;
}

export function loadCompose(file: string): unknown {
  return parseYaml(readFileSync(file, 'utf8'), { merge: true }) as unknown;
}

export interface PublishedPorts {
  readonly host: readonly [number, number];
  readonly container: readonly [number, number];
  readonly protocol: 'tcp' | 'udp';
}

/** A short-syntax port mapping: `[ip:]host[-end]:container[-end][/proto]`. */
export function parsePortMapping(text: string): PublishedPorts | undefined {
  const m = /^(?:[\d.]+:)?(\d+)(?:-(\d+))?:(\d+)(?:-(\d+))?(?:\/(tcp|udp))?$/.exec(text);
  if (!m) return undefined;
  const range = (a: string | undefined, b: string | undefined): [number, number] => [Number(a), Number(b ?? a)];
  return { host: range(m[1], m[2]), container: range(m[3], m[4]), protocol: (m[5] as 'tcp' | 'udp' | undefined) ?? 'tcp' };
}

type Service = { environment?: Record<string, string> | string[]; ports?: string[]; restart?: string; volumes?: string[]; build?: unknown };

function environmentOf(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (!Array.isArray(env)) return env;
  return Object.fromEntries(env.map((line) => [line.split('=')[0] ?? '', line.split('=').slice(1).join('=')]));
}

/**
 * What is wrong with an interpolated compose document for this platform; empty when nothing is.
 * `platform` is the service that runs the platform image.
 */
export function composeFindings(document: unknown, platform = 'platform'): string[] {
  const services = ((document as { services?: Record<string, Service> }).services ?? {}) as Record<string, Service>;
  const service = services[platform];
  if (!service) return [`no "${platform}" service`];
  const findings: string[] = [];
  for (const [name, s] of Object.entries(services)) {
    if (!s.restart || s.restart === 'no') findings.push(`service ${name} has no restart policy`);
  }
  const env = environmentOf(service);
  if (!env['SIP_PUBLIC_ADDRESS']) findings.push('SIP_PUBLIC_ADDRESS is not set: the container would advertise its bridge address');
  if (!(service.volumes ?? []).some((v) => v.split(':')[1] === '/data')) findings.push('no volume at /data');
  const ports = (service.ports ?? []).map((p) => ({ text: p, parsed: parsePortMapping(p) }));
  for (const p of ports) {
    if (!p.parsed) findings.push(`port mapping ${p.text} is not in short syntax`);
    else if (p.parsed.host[0] !== p.parsed.container[0] || p.parsed.host[1] !== p.parsed.container[1]) {
      findings.push(`port mapping ${p.text}: host and container ports differ, but SIP and SDP advertise the container's`);
    }
  }
  const published = (port: number, protocol: 'tcp' | 'udp'): boolean =>
    ports.some((p) => p.parsed && p.parsed.protocol === protocol && p.parsed.container[0] <= port && port <= p.parsed.container[1]);
  for (const { port, protocol, what } of platformListeners(loadConfig({ env }))) {
    if (!published(port, protocol)) findings.push(`${what} (${port}/${protocol}) is not published`);
  }
  const rtpMin = Number(env['RTP_PORT_MIN']);
  const rtpMax = Number(env['RTP_PORT_MAX']);
  if (!Number.isInteger(rtpMin) || !Number.isInteger(rtpMax) || !env['RTP_PORT_MIN'] || !env['RTP_PORT_MAX']) {
    findings.push('RTP_PORT_MIN / RTP_PORT_MAX are not set: the platform would allocate from its own default range');
  } else {
    const udp = ports.filter((p) => p.parsed?.protocol === 'udp' && p.parsed.container[0] !== 5060).map((p) => p.parsed!);
    if (!udp.some((p) => p.container[0] === rtpMin && p.container[1] === rtpMax)) {
      findings.push(`the RTP range ${rtpMin}-${rtpMax} the platform uses is not the published UDP range (${udp.map((p) => p.container.join('-')).join(', ') || 'none'})`);
    }
  }
  return findings;
}
