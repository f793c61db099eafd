import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../core/config/load-config.js';
import {
  composeFindings,
  composeSchemaErrors,
  dockerfileFindings,
  interpolateDocument,
  loadCompose,
  nodeLtsLines,
  parseDockerfile,
  parsePortMapping,
} from '../helpers/container-files.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const dockerfileText = readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8');
const composeFile = path.join(repoRoot, 'docker-compose.yml');
/** What an operator sets before `docker compose up` (docker-compose.yml's header). */
const operatorEnv = {
  SIP_PUBLIC_ADDRESS: '198.51.100.7',
  OPERATOR_TOKEN: 'operator-token-for-the-compose-test',
  SECRET_KEY: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
};

type Doc = { services: Record<string, { environment: Record<string, string>; ports: string[]; restart?: string }> };
const copy = <T>(value: T): T => structuredClone(value);

describe('Dockerfile, checked without a Docker engine', () => {
  it('builds in a build stage, then runs compiled JavaScript on an LTS node as a non-root user with a writable /data and a /readyz healthcheck', () => {
    const stages = parseDockerfile(dockerfileText);
    assert.deepEqual(dockerfileFindings(stages), []);
    const final = stages.at(-1)!;
    assert.ok(Number(final.tag.split('-')[0]) in nodeLtsLines, final.tag);
    assert.equal(final.steps.filter((s) => s.keyword === 'USER').at(-1)?.args, 'node');
    assert.ok(stages.every((s) => s.tag === final.tag), 'build and runtime stages use the same node');
  });

  it('the checks catch each defect they look for', () => {
    const findingsOf = (text: string): string => dockerfileFindings(parseDockerfile(text)).join('\n');
    const swap = (from: string | RegExp, to: string): string => {
      const changed = dockerfileText.replace(from, to);
      assert.notEqual(changed, dockerfileText, `the Dockerfile has no ${String(from)} to change`);
      return changed;
    };
    assert.match(findingsOf(swap(/node:24-bookworm-slim/g, 'node:20-bookworm-slim')), /Node 20 is not a supported LTS line/);
    assert.match(findingsOf(swap(/node:24-bookworm-slim/g, 'node:24-alpine')), /expected node:<LTS major>-bookworm-slim/);
    assert.match(findingsOf(swap(/^USER node$/m, 'USER root')), /USER root: the platform must not run as root/);
    assert.match(findingsOf(swap(/^USER node\n/m, '')), /no USER/);
    assert.match(findingsOf(swap(/ && chown node:node \/data/, '')), /\/data is not created and chowned to node before VOLUME/);
    assert.match(findingsOf(swap(/^HEALTHCHECK [\s\S]*?\n(?=CMD)/m, '')), /no HEALTHCHECK/);
    assert.match(findingsOf(swap(/"--enable-source-maps", "dist\/bin\/platform.js"/, '"--import", "tsx", "bin/platform.ts"')), /CMD loads tsx/);
    assert.match(findingsOf(swap(/--omit=dev /, '')), /does not install with `npm ci --omit=dev`/);
    assert.match(findingsOf(swap(/^COPY --from=build .*$/m, '')), /does not copy dist\/ from the build stage/);
  });
});

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification schema, as written and once interpolated', () => {
    const written = loadCompose(composeFile);
    assert.deepEqual(composeSchemaErrors(written), []);
    assert.deepEqual(composeSchemaErrors(interpolateDocument(written, operatorEnv)), []);
  });

  it('the schema refuses what docker compose would refuse', () => {
    const bad = copy(loadCompose(composeFile)) as { services: Record<string, Record<string, unknown>> };
    bad.services['platform']!['restart_policy'] = 'always';
    bad.services['postgres']!['ports'] = 5432;
    const errors = composeSchemaErrors(bad).join('\n');
    assert.match(errors, /\/services\/platform: must NOT have additional properties \{"additionalProperty":"restart_policy"\}/);
    assert.match(errors, /\/services\/postgres\/ports: must be array/);
  });

  it('carries audio on the RTP range the platform allocates from, advertises the host address, publishes every SIP transport and restarts', () => {
    const doc = interpolateDocument(loadCompose(composeFile), operatorEnv) as Doc;
    assert.deepEqual(composeFindings(doc), []);
    // The platform's own configuration loader, given the service's environment, allocates media
    // ports from exactly the published UDP range and advertises the operator's address.
    const platform = doc.services['platform']!;
    const config = loadConfig({ env: platform.environment });
    const rtp = platform.ports.map(parsePortMapping).find((p) => p?.protocol === 'udp' && p.container[0] !== 5060);
    assert.deepEqual([config.media.portMin, config.media.portMax], rtp?.container);
    assert.deepEqual(rtp?.host, rtp?.container);
    assert.equal(config.sip.publicAddress, '198.51.100.7');
    assert.equal(config.database.url, 'postgresql://vap:vap-local-only@postgres:5432/vap');

    // A wider range set by the operator moves both together.
    const wide = interpolateDocument(loadCompose(composeFile), { ...operatorEnv, RTP_PORT_MIN: '30000', RTP_PORT_MAX: '30999' }) as Doc;
    assert.deepEqual(composeFindings(wide), []);
    const wideConfig = loadConfig({ env: wide.services['platform']!.environment });
    assert.deepEqual([wideConfig.media.portMin, wideConfig.media.portMax], [30000, 30999]);
    assert.ok(wide.services['platform']!.ports.includes('30000-30999:30000-30999/udp'));
  });

  it('refuses to start without the address to advertise', () => {
    const { SIP_PUBLIC_ADDRESS: _unset, ...rest } = operatorEnv;
    assert.throws(() => interpolateDocument(loadCompose(composeFile), rest), /required variable SIP_PUBLIC_ADDRESS is missing: set SIP_PUBLIC_ADDRESS/);
    assert.throws(() => interpolateDocument(loadCompose(composeFile), { ...operatorEnv, SIP_PUBLIC_ADDRESS: '' }), /SIP_PUBLIC_ADDRESS/);
  });

  it('the findings catch a compose file that would carry no audio or advertise its bridge address', () => {
    const base = interpolateDocument(loadCompose(composeFile), operatorEnv) as Doc;
    const variant = (change: (platform: Doc['services'][string], doc: Doc) => void): string => {
      const doc = copy(base);
      change(doc.services['platform']!, doc);
      return composeFindings(doc).join('\n');
    };
    assert.match(variant((p) => (p.ports = p.ports.filter((x) => !x.endsWith('/udp') || x.startsWith('5060')))), /RTP range 20000-20199 the platform uses is not the published UDP range \(none\)/);
    assert.match(variant((p) => (p.environment['RTP_PORT_MAX'] = '29999')), /RTP range 20000-29999 the platform uses is not the published UDP range \(20000-20199, 40000-40099\)/);
    assert.match(variant((p) => delete p.environment['RTP_PORT_MIN']), /RTP_PORT_MIN \/ RTP_PORT_MAX are not set/);
    assert.match(variant((p) => delete p.environment['SIP_PUBLIC_ADDRESS']), /SIP_PUBLIC_ADDRESS is not set/);
    assert.match(variant((p) => (p.ports = p.ports.filter((x) => !x.startsWith('5062')))), /SIP WebSocket \(5062\/tcp\) is not published/);
    assert.match(variant((p) => p.ports.push('15060:5060/udp')), /15060:5060\/udp: host and container ports differ/);
    assert.match(variant((_p, doc) => delete doc.services['postgres']!.restart), /service postgres has no restart policy/);
  });
});
