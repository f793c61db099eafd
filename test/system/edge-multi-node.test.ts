import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openStore, type Store } from '../../control-api/platform/store/database.js';
import { CountingUas } from '../helpers/counting-uas.js';
import { clusterSecrets, edgeAddresses, freePort, nodeEnv, startKamailio, startRtpengine, type Daemon, type NodeSettings } from '../helpers/edge-cluster.js';
import { dueCalls, edgeDid, seedEdgeTenant, type EdgeTenant } from '../helpers/edge-tenant.js';
import { exitCode, spawnPlatform, waitForLine, type PlatformProcess } from '../helpers/platform-process.js';
import { testPostgres } from '../helpers/postgres-cluster.js';
import { runSipp, type SippResult } from '../helpers/sipp.js';

/**
 * Issue 15: the deployment telephony operators run. Kamailio (edge-conf/kamailio.cfg, as shipped)
 * is the one signalling address, rtpengine anchors the media, and two platform nodes (the real
 * platform process: gateway, control and worker roles) share one private PostgreSQL; every part
 * has its own loopback address (docs/edge.md). SIPp is the carrier placing inbound calls; a UDP
 * callee counting calls per number is the carrier's side of outbound campaign calls.
 */
const PROBE_INTERVAL_S = 1;
const NODE_TIMEOUT_MS = 2000;

/**
 * When SIPp sent each call's first INVITE, by Call-ID, from its message log (`-trace_msg`):
 * entries start with a dashed line ending in the local time, then "UDP message sent".
 */
function inviteSendTimes(log: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of log.split(/^-{20,} /m)) {
    const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}\.\d{3})\d*\s+UDP message sent[^\n]*\n\s*INVITE [\s\S]*?^Call-ID: (\S+)/m.exec(entry);
    // An ISO date-time without an offset is local time, as SIPp writes it.
    if (m && !out.has(m[3] as string)) out.set(m[3] as string, Date.parse(`${m[1]}T${m[2]}`));
  }
  return out;
}

const answeredBy = (p: PlatformProcess, after = 0): Array<Record<string, unknown>> =>
  p.lines.filter((l) => l['msg'] === 'inbound call answered' && Date.parse(String(l['time'])) >= after);

describe('scale-out: Kamailio and rtpengine in front of two platform nodes on one PostgreSQL', function () {
  this.timeout(300_000);
  const work = mkdtempSync(path.join(tmpdir(), 'vap-edge-'));
  const secrets = clusterSecrets();
  const callee = new CountingUas({ ringMs: 100, address: edgeAddresses.callee });
  let url: string;
  let store: Store;
  let tenant: EdgeTenant;
  let rtpengine: Daemon | undefined;
  let kamailio: Daemon | undefined;
  let kamailioPort: number;
  let kamailioInternalPort: number;
  let nodes: NodeSettings[];
  const procs: Array<PlatformProcess | undefined> = [];
  let sippRuns = 0;

  const startNode = async (i: number): Promise<PlatformProcess> => {
    const env = nodeEnv(nodes[i] as NodeSettings, {
      databaseUrl: url,
      secrets,
      edge: { kamailio: kamailioPort, kamailioInternal: kamailioInternalPort, rtpMin: 50_000, rtpMax: 59_999 },
      // Campaign messages are stored here straight into the table (as SendMessage stores them),
      // without an Agenda job: each worker's store poller finds them, every 500 ms.
      // Admission by capacity is not what this file tests: after a kill or during a drain one node
      // takes the whole offered rate (5/s, over the default 2/s per core), and with the suite
      // beside it its event loop lags; both nodes refusing made Kamailio answer 500.
      extra: {
        SCHEDULER_RECONCILE_POLL_MS: '500', SCHEDULER_RECONCILE_GRACE_MS: '0', DRAIN_TIMEOUT_MS: '60000',
        SIP_ADMISSION_MAX_CALLS_PER_SECOND: '50', SIP_ADMISSION_MAX_EVENT_LOOP_LAG_MS: '2000',
      },
    });
    const p = spawnPlatform(env);
    procs[i] = p;
    await waitForLine(p, 'platform started', 120_000);
    return p;
  };
  const node = (i: number): PlatformProcess => procs[i] as PlatformProcess;

  /** Inbound calls from the carrier to the edge; SIPp's message log is kept for SDP checks. */
  const callEdge = async (calls: number, rate: number): Promise<SippResult & { messages: string }> => {
    const file = path.join(work, `sipp-${++sippRuns}.log`);
    const result = await runSipp({
      scenario: 'uac-invite-via-proxy-expect-200-gateway-bye.xml',
      target: `${edgeAddresses.kamailio}:${kamailioPort}`,
      localIp: edgeAddresses.carrier,
      service: edgeDid,
      calls,
      rate,
      timeoutMs: 60_000,
      extraArgs: ['-trace_msg', '-message_file', file],
    });
    return { ...result, messages: existsSync(file) ? readFileSync(file, 'utf8') : '' };
  };

  before(async function () {
    this.timeout(240_000);
    url = await (await testPostgres()).createDatabase();
    store = await openStore({ url, poolSize: 4 });
    tenant = await seedEdgeTenant(store, secrets.secretKey, await callee.start());
    const ngPort = await freePort(edgeAddresses.rtpExternal);
    rtpengine = await startRtpengine({ ngPort, portMin: 50_000, portMax: 59_999 });
    kamailioPort = await freePort(edgeAddresses.kamailio);
    kamailioInternalPort = await freePort(edgeAddresses.kamailioInternal);
    nodes = await Promise.all(
      edgeAddresses.nodes.map(async (address, i) => ({
        name: `node-${i}`,
        address,
        sipPort: await freePort(address),
        controlPort: await freePort(address),
        rtpPortMin: 30_000 + i * 4_000,
        dataDir: path.join(work, `node-${i}`),
      })),
    );
    await Promise.all(nodes.map((_, i) => startNode(i)));
    kamailio = await startKamailio({ port: kamailioPort, internalPort: kamailioInternalPort, nodes, rtpengineNgPort: ngPort, workDir: path.join(work, 'kamailio'), probeIntervalSeconds: PROBE_INTERVAL_S, nodeTimeoutMs: NODE_TIMEOUT_MS });
  });

  after(async function () {
    this.timeout(60_000);
    for (const p of procs) if (p && p.child.exitCode === null) p.child.kill('SIGKILL');
    await kamailio?.stop();
    await rtpengine?.stop();
    await callee.stop();
    await store?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("spreads inbound calls over both nodes, and the carrier sees only rtpengine's media address", async () => {
    const run = await callEdge(12, 4);
    assert.equal(run.failed, 0, `${run.errors}\n${kamailio?.output().slice(-3000)}`);
    assert.equal(run.successful, 12);
    const counts = [answeredBy(node(0)).length, answeredBy(node(1)).length];
    assert.equal(counts[0]! + counts[1]!, 12, `answered per node: ${counts.join(', ')}`);
    assert.ok(counts.every((n) => n >= 3), `round-robin over both nodes: ${counts.join(', ')}`);
    // Every answer the carrier got names rtpengine's external address, never a node's or the internal one.
    // SIPp's message log: entries between dashed lines, each a "received"/"sent" line and the
    // message. Retransmitted 200s are in it too (an ACK late under load): one per Call-ID counts.
    const received = run.messages.split(/^-{20,}.*$/m).filter((e) => /message received/.test(e)).map((e) => e.slice(e.indexOf('SIP/2.0')));
    const answers = received.filter((m) => m.startsWith('SIP/2.0 200 OK') && /CSeq: 1 INVITE/.test(m));
    assert.equal(new Set(answers.map((a) => /Call-ID: (.*)/.exec(a)?.[1])).size, 12);
    for (const a of answers) {
      assert.match(a, new RegExp(`c=IN IP4 ${edgeAddresses.rtpExternal.replace(/\./g, '\\.')}\\b`));
      for (const hidden of [...edgeAddresses.nodes, edgeAddresses.rtpInternal]) assert.ok(!a.includes(`c=IN IP4 ${hidden}`), `the 200 shows ${hidden}`);
      // Two sockets, two Record-Route entries (RFC 3261 sec. 16.6 step 4 allows a proxy several):
      // the carrier's in-dialog requests go to the external one, the nodes' to the internal one.
      assert.match(a, new RegExp(`Record-Route: <sip:${edgeAddresses.kamailio.replace(/\./g, '\\.')}:${kamailioPort};r2=on;lr`));
    }
    assert.ok(!run.messages.includes('X-VAP-Source'), 'the carrier never sees the header the edge adds for the nodes');
    // And what a customer is told to configure names the edge and rtpengine, whichever node answers.
    for (const n of nodes) {
      const res = await fetch(`http://${n.address}:${n.controlPort}/v1/tenants/edge/sip-info`, { headers: { authorization: `Bearer ${secrets.operatorToken}` } });
      const info = (await res.json()) as { signalingAddress: string; media: { address: string; rtpPortMin: number } };
      assert.equal(info.signalingAddress, edgeAddresses.kamailio);
      assert.deepEqual([info.media.address, info.media.rtpPortMin], [edgeAddresses.kamailio, 50_000]);
    }
  });

  it('serves from either node the recording made on the other, with the caller audio relayed by rtpengine', async () => {
    const made = answeredBy(node(0))[0];
    assert.ok(made, 'node 0 answered a call');
    const callId = String(made['callId']);
    // The call record names its recording once the call has ended and the copy is in the store.
    const deadline = Date.now() + 30_000;
    let ref: string | null = null;
    while (!ref) {
      const row = await store.db.selectFrom('calls').select(['recording_ref', 'status']).where('id', '=', callId).executeTakeFirst();
      ref = row?.status === 'ended' ? row.recording_ref : null;
      if (Date.now() > deadline) throw new Error(`call ${callId} has no recording yet`);
      if (!ref) await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(existsSync(path.join(nodes[0]!.dataDir, 'recordings', ref)), false, 'node 0 moved it to the shared store');
    const other = nodes[1] as NodeSettings;
    const res = await fetch(`http://${other.address}:${other.controlPort}/v1/tenants/edge/calls/${callId}/recording`, { headers: { authorization: `Bearer ${secrets.operatorToken}` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'audio/wav');
    const wav = Buffer.from(await res.arrayBuffer());
    assert.equal(wav.toString('ascii', 0, 4), 'RIFF');
    assert.equal(wav.readUInt16LE(22), 2, 'stereo: caller left, agent right');
    // The caller streamed a 440 Hz tone through rtpengine; the agent spoke.
    let caller = 0;
    let agent = 0;
    for (let i = 44; i + 3 < wav.length; i += 4) {
      caller += Math.abs(wav.readInt16LE(i));
      agent += Math.abs(wav.readInt16LE(i + 2));
    }
    const frames = (wav.length - 44) / 4;
    assert.ok(caller / frames > 500, `caller channel mean level ${Math.round(caller / frames)}`);
    assert.ok(agent / frames > 50, `agent channel mean level ${Math.round(agent / frames)}`);
  });

  it('dials 1,000 due campaign calls from both nodes exactly once each, every one through the edge', async function () {
    this.timeout(180_000);
    await dueCalls(store, tenant, 1000, Date.now());
    const deadline = Date.now() + 150_000;
    const open = async (): Promise<number> =>
      Number((await store.db.selectFrom('campaign_messages').where('status', 'in', ['scheduled', 'calling']).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
    while (callee.total < 1000 || (await open()) > 0) {
      if (Date.now() > deadline || ((await open()) === 0 && Date.now() - callee.lastCallAt > 5000)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    await new Promise((r) => setTimeout(r, 1000)); // a second call would show up now
    const outcomes = await store.db
      .selectFrom('campaign_attempts')
      .select(['status', 'sip_status', 'reason', (eb) => eb.fn.countAll<string>().as('n')])
      .groupBy(['status', 'sip_status', 'reason'])
      .execute();
    assert.equal(callee.calls.size, 1000, `${callee.total} callees called, ${await open()} messages open; attempts: ${JSON.stringify(outcomes, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v))}`);
    assert.deepEqual(callee.rangMoreThanOnce(), []);
    assert.deepEqual([...callee.sources], [[edgeAddresses.kamailio, 1000]], 'every INVITE reached the carrier from the edge');
    const origins = Object.fromEntries(callee.origins);
    assert.deepEqual(Object.keys(origins).sort(), [...edgeAddresses.nodes].sort(), `the UACs behind the edge: ${JSON.stringify(origins)}`);
    const attempts = await store.db.selectFrom('campaign_attempts').select(['worker_id', 'attempt_no', 'status']).execute();
    assert.equal(attempts.length, 1000);
    assert.ok(attempts.every((a) => a.attempt_no === 1 && a.status === 'busy'), `one attempt per message, busy: ${JSON.stringify(outcomes, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))}`);
    assert.equal(new Set(attempts.map((a) => a.worker_id)).size, 2, 'both workers dialled');
  });

  it('drains a node (SIGTERM) without failing a call: its live calls finish, new calls go to the other node', async () => {
    const drained = node(1);
    const answeredBefore = [answeredBy(node(0)).length, answeredBy(drained).length];
    const loadAt = Date.now();
    const load = callEdge(16, 4);
    await new Promise((r) => setTimeout(r, 1500));
    drained.child.kill('SIGTERM');
    const run = await load;
    assert.equal(run.failed, 0, `${run.errors}\n${kamailio?.output().slice(-3000)}`);
    assert.equal(run.successful, 16);
    const drainedAt = Date.parse(String((await waitForLine(drained, 'draining'))['time']));
    const answered = [answeredBy(node(0)).length - answeredBefore[0]!, answeredBy(drained).length - answeredBefore[1]!];
    assert.equal(answered[0]! + answered[1]!, 16);
    assert.ok(answeredBy(drained, loadAt).some((l) => Date.parse(String(l['time'])) < drainedAt), 'the drained node had taken calls of this load before');
    // An INVITE already being set up when the drain began is still answered (docs/operations.md):
    // every call the draining node answered must have been sent by SIPp before the drain began.
    const sent = inviteSendTimes(run.messages);
    const late = answeredBy(drained, loadAt).filter((l) => (sent.get(String(l['sipCallId'])) ?? 0) > drainedAt);
    assert.deepEqual(late.map((l) => l['sipCallId']), [], 'calls sent after the drain began, answered by the draining node');
    assert.ok([...sent.values()].some((t) => t > drainedAt + 500), 'calls were placed well after the drain began');
    const done = await waitForLine(drained, 'gateway drained', 60_000);
    assert.equal(done['endedAtTimeout'], 0, 'every live call of the drained node ended by itself');
    const code = await exitCode(drained, 30_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\nlast log lines: ${drained.lines.slice(-15).map((l) => JSON.stringify(l)).join('\n')}`);
    });
    assert.equal(code, 0);
    // Back in the rotation for the next case: the next probe answered 200 marks it up.
    const upBefore = kamailio?.lines.filter((l) => l.text.includes('platform node up')).length ?? 0;
    await startNode(1);
    const upDeadline = Date.now() + 10_000;
    while ((kamailio?.lines.filter((l) => l.text.includes('platform node up')).length ?? 0) <= upBefore) {
      if (Date.now() > upDeadline) throw new Error(`the restarted node was not marked up:\n${kamailio?.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('takes a SIGKILLed node out within a probe interval plus the probe timeout; calls fail neither then nor after', async () => {
    const killed = node(0);
    const survivor = node(1);
    const downBefore = kamailio?.lines.filter((l) => l.text.includes('platform node down')).length ?? 0;
    const killedAt = Date.now();
    killed.child.kill('SIGKILL');
    // At once, before any probe noticed: a call the edge still sends to the dead node waits for
    // NODE_TIMEOUT_MS, then goes to the next node (failure_route), so none of these fail either.
    const during = callEdge(4, 4);
    const downDeadline = Date.now() + 15_000;
    let down: { at: number } | undefined;
    while (!(down = kamailio?.lines.filter((l) => l.text.includes('platform node down'))[downBefore])) {
      if (Date.now() > downDeadline) throw new Error(`the killed node was never marked down:\n${kamailio?.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const detectedMs = down.at - killedAt;
    assert.ok(detectedMs <= PROBE_INTERVAL_S * 1000 + NODE_TIMEOUT_MS + 2500, `marked down ${detectedMs} ms after the kill`);
    const duringRun = await during;
    assert.equal(duringRun.failed, 0, duringRun.errors);
    const after = Date.now();
    const run = await callEdge(10, 5);
    assert.equal(run.failed, 0, `${run.errors}\n${kamailio?.output().slice(-3000)}`);
    assert.equal(answeredBy(survivor, after).length, 10, 'every new call went to the surviving node');
    console.log(`      killed node marked down after ${detectedMs} ms (probe every ${PROBE_INTERVAL_S} s, timeout ${NODE_TIMEOUT_MS} ms); ${duringRun.successful} calls placed right after the kill all answered`);
  });
});
