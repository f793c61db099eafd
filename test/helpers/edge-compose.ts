import { loadConfig } from '../../core/config/load-config.js';

/**
 * Checks of docker-compose.edge.yml (docs/edge.md) that need no Docker engine: that its parts
 * agree with each other, the way they must for a call to get through. Kamailio's dispatcher list
 * names every node at its address and SIP port; every node trusts the edge's internal socket and
 * sends outbound calls to it; Kamailio talks to rtpengine where rtpengine listens; customers are
 * told the public address and the RTP range rtpengine really uses; the nodes share database,
 * secrets and recordings. Used by test/system/container-files.test.ts.
 */
type Service = {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  networks?: Record<string, { ipv4_address?: string } | null>;
  network_mode?: string;
  restart?: string;
};
export type EdgeComposeDocument = { services: Record<string, Service>; networks?: Record<string, { ipam?: { config?: Array<{ subnet?: string; gateway?: string }> } }> };

/** `-A NAME=value` defines of a Kamailio command line, quotes around the value removed. */
export function kamailioDefines(command: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  command.forEach((a, i) => {
    if (a !== '-A') return;
    const [name, ...rest] = (command[i + 1] ?? '').split('=');
    out[name ?? ''] = rest.join('=').replace(/^"(.*)"$/, '$1');
  });
  return out;
}

/** `--name=value` options of an rtpengine command line (repeated options in order). */
function rtpengineOptions(command: readonly string[], name: string): string[] {
  return command.filter((a) => a.startsWith(`--${name}=`)).map((a) => a.slice(name.length + 3));
}

/** `1 sip:10.0.0.11:5060 0 0` lines of a dispatcher list (set 1), as `address:port`. */
export function dispatcherTargets(list: string): string[] {
  return list
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => l.split(/\s+/))
    .filter((f) => f[0] === '1')
    .map((f) => (f[1] ?? '').replace(/^sip:/, '').replace(/;.*$/, ''));
}

const hostOf = (socket: string): string => socket.replace(/^(udp|tcp):/, '').replace(/:\d+$/, '');

export function edgeComposeFindings(doc: EdgeComposeDocument, dispatcherList: string): string[] {
  const findings: string[] = [];
  const services = doc.services;
  for (const [name, s] of Object.entries(services)) if (!s.restart || s.restart === 'no') findings.push(`service ${name} has no restart policy`);
  const edge = services['edge'];
  const rtpengine = services['rtpengine'];
  if (!edge?.command || !rtpengine?.command) return [...findings, 'no edge or rtpengine service with a command'];
  const defines = kamailioDefines(edge.command);
  const internal = defines['INTERNAL_SOCKET'];
  if (!internal) return [...findings, 'Kamailio has no INTERNAL_SOCKET: requests to the nodes would leave from the public address'];
  const listens = edge.command.filter((_a, i) => edge.command?.[i - 1] === '-l');
  if (!listens.includes(internal)) findings.push(`Kamailio does not listen on its INTERNAL_SOCKET ${internal} (-l ${listens.join(', -l ')})`);
  const publicAddress = listens.find((l) => l.startsWith('udp:') && l !== internal)?.replace(/^udp:/, '').replace(/:\d+$/, '');
  if (!listens.includes(`tcp:${publicAddress}:5060`)) findings.push('Kamailio does not listen on TCP 5060 of the public address');
  for (const [what, s] of [['edge', edge], ['rtpengine', rtpengine]] as const) if (s.network_mode !== 'host') findings.push(`${what} is not on the host network: its public side would be a bridge address`);
  const gateway = Object.values(doc.networks ?? {}).flatMap((n) => n.ipam?.config ?? []).map((c) => c.gateway);
  if (!gateway.includes(hostOf(internal))) findings.push(`the nodes' network has no gateway ${hostOf(internal)}: the host-network edge is not reachable there`);
  const ng = rtpengineOptions(rtpengine.command, 'listen-ng')[0];
  if (`udp:${ng}` !== defines['RTPENGINE_SOCK']) findings.push(`Kamailio asks rtpengine at ${defines['RTPENGINE_SOCK']}, rtpengine listens at ${ng}`);
  const interfaces = rtpengineOptions(rtpengine.command, 'interface');
  if (!interfaces.includes(`external/${publicAddress}`)) findings.push(`rtpengine's external interface is not the public address ${publicAddress} (${interfaces.join(', ')})`);
  if (!interfaces.includes(`internal/${hostOf(internal)}`)) findings.push(`rtpengine's internal interface is not ${hostOf(internal)} (${interfaces.join(', ')})`);
  const range = [Number(rtpengineOptions(rtpengine.command, 'port-min')[0]), Number(rtpengineOptions(rtpengine.command, 'port-max')[0])];

  const nodes = Object.entries(services).filter(([, s]) => s.image === services['node-1']?.image && s.environment?.['SIP_EDGE_ADDRESSES'] !== undefined);
  if (nodes.length < 2) findings.push(`${nodes.length} platform node(s) behind the edge, expected at least 2`);
  const targets = dispatcherTargets(dispatcherList);
  const shared = new Set<string>();
  for (const [name, s] of nodes) {
    let config;
    try {
      config = loadConfig({ env: s.environment ?? {} });
    } catch (error) {
      findings.push(`${name}: ${(error as Error).message}`);
      continue;
    }
    const address = Object.values(s.networks ?? {}).find((n) => n?.ipv4_address)?.ipv4_address;
    if (!address) findings.push(`${name} has no fixed address: the dispatcher list cannot name it`);
    else if (!targets.includes(`${address}:${config.sip.port}`)) findings.push(`${name} (${address}:${config.sip.port}) is not in the dispatcher list (${targets.join(', ')})`);
    if (config.sip.publicAddress !== address) findings.push(`${name} advertises ${config.sip.publicAddress} in SIP and SDP, not its own address ${address}`);
    if (!config.sip.edge.addresses.includes(hostOf(internal))) findings.push(`${name} does not take calls from the edge's internal address ${hostOf(internal)}`);
    if (config.sip.edge.outboundProxy?.replace(/;.*$/, '') !== `sip:${internal.replace(/^udp:/, '')}`) findings.push(`${name} sends outbound calls to ${config.sip.edge.outboundProxy}, not the edge's ${internal}`);
    if (config.sip.edge.publicAddress !== publicAddress) findings.push(`${name} tells customers ${config.sip.edge.publicAddress}, the edge listens on ${publicAddress}`);
    if (config.sip.edge.mediaPortMin !== range[0] || config.sip.edge.mediaPortMax !== range[1]) findings.push(`${name} tells customers RTP ${config.sip.edge.mediaPortMin}-${config.sip.edge.mediaPortMax}, rtpengine uses ${range.join('-')}`);
    if (config.recordings.store !== 'database') findings.push(`${name} keeps recordings in its own directory: other nodes could not serve them`);
    shared.add(JSON.stringify([config.database.url, config.security.secretKey, config.security.operatorToken]));
  }
  if (shared.size > 1) findings.push('the nodes do not share one database, secret key and operator token');
  const listed = new Set(nodes.map(([, s]) => Object.values(s.networks ?? {}).find((n) => n?.ipv4_address)?.ipv4_address));
  for (const t of targets) if (!listed.has(t.replace(/:\d+$/, ''))) findings.push(`the dispatcher list names ${t}, which is no node of this file`);
  return findings;
}
