import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
import { edgeComposeFindings, type EdgeComposeDocument } from '../helpers/edge-compose.js';

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
    assert.match(findingsOf(swap(/^(EXPOSE .*) 8082 /m, '$1 ')), /cloud telephony providers \(webhooks, media streams\) \(8082\/tcp\) is not in EXPOSE/);
    assert.match(findingsOf(swap(/^(EXPOSE .*) 5063\/tcp/m, '$1')), /SIP secure WebSocket \(5063\/tcp\) is not in EXPOSE/);
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
    assert.match(variant((p) => (p.ports = p.ports.filter((x) => !x.startsWith('8082')))), /cloud telephony providers \(webhooks, media streams\) \(8082\/tcp\) is not published/);
    assert.match(variant((p) => p.ports.push('15060:5060/udp')), /15060:5060\/udp: host and container ports differ/);
    assert.match(variant((_p, doc) => delete doc.services['postgres']!.restart), /service postgres has no restart policy/);
  });
});

describe('docker-compose.edge.yml (scale-out behind Kamailio and rtpengine)', () => {
  const edgeFile = path.join(repoRoot, 'docker-compose.edge.yml');
  const dispatcherList = readFileSync(path.join(repoRoot, 'edge-conf/dispatcher.list'), 'utf8');
  const interpolated = (): EdgeComposeDocument => interpolateDocument(loadCompose(edgeFile), operatorEnv) as EdgeComposeDocument;

  it('is valid against the Compose Specification schema, as written and once interpolated', () => {
    const written = loadCompose(edgeFile);
    assert.deepEqual(composeSchemaErrors(written), []);
    assert.deepEqual(composeSchemaErrors(interpolated()), []);
    assert.throws(() => interpolateDocument(written, { ...operatorEnv, SIP_PUBLIC_ADDRESS: '' }), /SIP_PUBLIC_ADDRESS/);
  });

  it('its parts agree: dispatcher list and nodes, trusted edge and outbound proxy, rtpengine socket, interfaces and range, shared store', () => {
    assert.deepEqual(edgeComposeFindings(interpolated(), dispatcherList), []);
    const wide = interpolateDocument(loadCompose(edgeFile), { ...operatorEnv, RTP_PORT_MIN: '40000', RTP_PORT_MAX: '40999' }) as EdgeComposeDocument;
    assert.deepEqual(edgeComposeFindings(wide, dispatcherList), []);
    assert.equal(loadConfig({ env: wide.services['node-2']!.environment! }).sip.edge.mediaPortMax, 40999);
  });

  it('the findings catch parts that disagree', () => {
    const variant = (change: (doc: EdgeComposeDocument) => void, list = dispatcherList): string => {
      const doc = copy(interpolated());
      change(doc);
      return edgeComposeFindings(doc, list).join('\n');
    };
    const env = (doc: EdgeComposeDocument, node: string): Record<string, string> => doc.services[node]!.environment!;
    assert.match(variant(() => undefined, dispatcherList.replace('172.28.0.12', '172.28.0.13')), /node-2 \(172\.28\.0\.12:5060\) is not in the dispatcher list/);
    assert.match(variant((d) => delete env(d, 'node-1')['SIP_OUTBOUND_PROXY']), /node-1 sends outbound calls to undefined/);
    assert.match(variant((d) => (env(d, 'node-2')['SIP_EDGE_ADDRESSES'] = '172.28.0.9')), /node-2 does not take calls from the edge's internal address 172\.28\.0\.1/);
    assert.match(variant((d) => (env(d, 'node-2')['RECORDINGS_STORE'] = 'directory')), /node-2 keeps recordings in its own directory/);
    assert.match(variant((d) => (env(d, 'node-2')['SECRET_KEY'] = 'ab'.repeat(32))), /do not share one database, secret key and operator token/);
    assert.match(variant((d) => (env(d, 'node-1')['SIP_EDGE_RTP_PORT_MAX'] = '30999')), /node-1 tells customers RTP 30000-30999, rtpengine uses 30000-39999/);
    assert.match(variant((d) => (d.services['rtpengine']!.command = d.services['rtpengine']!.command!.map((a) => a.replace('127.0.0.1:22222', '127.0.0.1:2223')))), /Kamailio asks rtpengine at udp:127\.0\.0\.1:22222, rtpengine listens at 127\.0\.0\.1:2223/);
    assert.match(variant((d) => delete d.services['edge']!.network_mode), /edge is not on the host network/);
  });

  it("runs Kamailio on edge-conf/kamailio.cfg with the compose file's sockets and settings: `kamailio -c` accepts them", () => {
    const command = interpolated().services['edge']!.command!;
    const dir = mkdtempSync(path.join(tmpdir(), 'vap-edge-compose-'));
    try {
      const list = path.join(dir, 'dispatcher.list');
      writeFileSync(list, dispatcherList);
      // The image's paths, mapped to this checkout: the config file and the dispatcher list.
      const args = command.slice(1).map((a) => a.replace('/etc/vap-edge/kamailio.cfg', path.join(repoRoot, 'edge-conf/kamailio.cfg')).replace('/etc/vap-edge/dispatcher.list', list)).filter((a, i, all) => a !== '-u' && a !== '-g' && all[i - 1] !== '-u' && all[i - 1] !== '-g');
      const check = spawnSync('kamailio', ['-c', ...args.filter((a) => a !== '-DD' && a !== '-E')], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
      assert.match(`${check.stdout}${check.stderr}`, /config file ok/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('builds Kamailio and rtpengine from the Debian packages the test suite runs, with the configuration where the command reads it', () => {
    const packages = readFileSync(path.join(repoRoot, 'test/setup/system-packages.txt'), 'utf8');
    for (const [file, pkg] of [['kamailio.Dockerfile', 'kamailio'], ['rtpengine.Dockerfile', 'rtpengine-daemon']] as const) {
      const stages = parseDockerfile(readFileSync(path.join(repoRoot, 'edge-conf', file), 'utf8'));
      assert.equal(stages.length, 1);
      const stage = stages[0]!;
      assert.equal(`${stage.image}:${stage.tag}`, 'debian:bookworm-slim', file);
      assert.ok(stage.steps.some((s) => s.keyword === 'RUN' && new RegExp(`apt-get install .*\\b${pkg}\\b`).test(s.args)), `${file} installs ${pkg}`);
      assert.match(packages, new RegExp(` ${pkg}$`, 'm'), `the suite installs and tests ${pkg}`);
    }
    const kamailio = parseDockerfile(readFileSync(path.join(repoRoot, 'edge-conf/kamailio.Dockerfile'), 'utf8'))[0]!;
    assert.ok(kamailio.steps.some((s) => s.keyword === 'COPY' && s.args === 'kamailio.cfg dispatcher.list /etc/vap-edge/'));
  });
});
