import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import type { CallEnd, CallStart, CallStep } from '../../control-api/features/calls/call-types.js';
import { issueToken } from '../../control-api/model/tenants/api-tokens.js';
import { forEachStore } from '../helpers/stores.js';
import { createTenant, provision } from '../insights/insight-fixtures.js';
import { startCallsApp, type CallsApp } from './calls-harness.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

type Item = { id: string; startedAt: string; outcome: string; disposition: string | null; contactNumber: string; recording: { url: string } | null };

/** A recipe path with every kind of step: an exit, a reprompt, a confirmation, an end. */
const c1Steps: CallStep[] = [
  { blockId: 'greet', type: 'message', exit: 'next', turns: [] },
  {
    blockId: 'question',
    type: 'smartAi',
    exit: 'confirm',
    turns: [
      { kind: 'nudge', reason: 'silence' },
      { kind: 'reprompt', reason: 'lowConfidence', heard: 'yes I will go', confidence: 0.31 },
      { kind: 'confirm', heard: 'yes', confidence: 0.62 },
      { kind: 'confirmed', heard: 'yes' },
    ],
  },
  { blockId: 'amount', type: 'ask', exit: 'fallback', turns: [{ kind: 'reprompt', reason: 'noMatch', heard: 'tomorrow' }, { kind: 'denied', reason: 'silence' }] },
  { blockId: 'bye', type: 'close', end: 'closed', turns: [] },
];

forEachStore('call records API: list, filter, get, recording', (getStore) => {
  let app: CallsApp;
  let campaignId: string;
  let southToken: string;
  const ids: Record<string, string> = {};
  const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(40, 1), Buffer.alloc(160, 0x7f)]);

  before(async () => {
    const store = getStore();
    app = await startCallsApp(store);
    const north = await createTenant(store, 'north', undefined, 'Asia/Kolkata');
    const south = await createTenant(store, 'south');
    southToken = (await issueToken(store.db, { tenantId: south, name: 'south', scopes: ['management'] })).token;
    ({ campaignId } = await provision(store, north, '+918000000100'));
    mkdirSync(path.join(app.recordingsDir, 'north'), { recursive: true });
    writeFileSync(path.join(app.recordingsDir, 'north', 'c1.wav'), wav);
    const recorder = new CallRecorder({ db: store.db, onConversationEnded: queueCallAnalysis() });
    const call = async (key: string, start: Partial<CallStart> & { startedAt: Date }, end: Partial<CallEnd> = {}, tenantId = north) => {
      const record = await recorder.recordCall({
        tenantId,
        direction: 'outbound',
        phoneNumber: '+918000000100',
        remoteNumber: '+919800000001',
        ...start,
        endedAt: new Date(start.startedAt.getTime() + 60_000),
        outcome: 'completed',
        transcript: [{ at: start.startedAt.getTime(), speaker: 'agent', text: `hello ${key}` }],
        insightParameters: [],
        ...end,
      });
      ids[key] = record.id;
    };
    // 20:00 UTC on 1 Nov is 01:30 on 2 Nov in Kolkata: the tenant's day decides date filters.
    await call('c1', { startedAt: new Date('2026-11-01T20:00:00Z'), campaignId, messageId: '6b0f6a8e-1111-4c1e-9d55-000000000001' }, { disposition: 'promise_to_pay', recordingRef: 'north/c1.wav', answeringMachine: { verdict: 'human', afterMs: 1740 }, steps: c1Steps });
    await call('c2', { startedAt: new Date('2026-11-02T05:00:00Z'), campaignId, remoteNumber: '+919800000002' }, { outcome: 'busy', sipStatus: 486 });
    await call('c3', { startedAt: new Date('2026-11-03T05:00:00Z'), direction: 'inbound' }, { disposition: 'callback', recordingRef: '../../../etc/passwd' });
    await call('c4', { startedAt: new Date('2026-11-04T05:00:00Z') }, { outcome: 'no_answer' });
    await call('s1', { startedAt: new Date('2026-11-02T05:00:00Z') }, {}, south);
  });
  after(() => app.close());

  const list = async (query: string, token?: string) => {
    const response = await app.get(`/v1/tenants/north/calls${query}`, token);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as { items: Item[]; nextCursor?: string };
  };
  const keys = (items: readonly Item[]) => items.map((i) => Object.entries(ids).find(([, id]) => id === i.id)?.[0]);

  it('lists a tenant\'s calls newest first (oldest first on request), never another tenant\'s', async () => {
    assert.deepEqual(keys((await list('')).items), ['c4', 'c3', 'c2', 'c1']);
    assert.deepEqual(keys((await list('?order=asc')).items), ['c1', 'c2', 'c3', 'c4']);
  });

  it('sorts by duration either way, and filters by end reason and SIP Call-ID', async () => {
    const durations = (await list('?sort=duration')).items.map((i) => (i as unknown as { durationSeconds: number }).durationSeconds);
    assert.deepEqual(durations, [...durations].sort((a, b) => b - a));
    const up = (await list('?sort=duration&order=asc')).items.map((i) => (i as unknown as { durationSeconds: number }).durationSeconds);
    assert.deepEqual(up, [...durations].reverse());
    const reasons = (await list('')).items.map((i) => (i as unknown as { endReason: string | null }).endReason);
    const reason = reasons.find((r) => r !== null) as string;
    assert.deepEqual((await list(`?endReason=${reason}`)).items.length, reasons.filter((r) => r === reason).length);
    assert.deepEqual((await list('?sipCallId=no-such-call-id')).items, []);
  });

  it('reads a date range in the tenant\'s timezone, an instant as given', async () => {
    assert.deepEqual(keys((await list('?from=2026-11-02&to=2026-11-02')).items), ['c2', 'c1']);
    assert.deepEqual(keys((await list('?from=2026-11-02T00:00:00Z&to=2026-11-03T05:00:00Z')).items), ['c2']);
  });

  it('filters by campaign, number (with or without +), outcome and disposition', async () => {
    assert.deepEqual(keys((await list(`?campaign=${campaignId}`)).items), ['c2', 'c1']);
    assert.deepEqual(keys((await list('?number=919800000001')).items), ['c4', 'c3', 'c1']);
    assert.deepEqual(keys((await list('?number=%2B919800000002')).items), ['c2']);
    assert.deepEqual(keys((await list('?outcome=busy&outcome=no_answer')).items), ['c4', 'c2']);
    assert.deepEqual(keys((await list('?disposition=callback')).items), ['c3']);
    assert.deepEqual(keys((await list('?direction=inbound&analysis=analyzing')).items), ['c3']);
  });

  it('shows the answering-machine verdict of screened calls and null on the others', async () => {
    const items = (await list('?order=asc')).items as unknown as Array<{ answeringMachine: unknown }>;
    assert.deepEqual(items.map((i) => i.answeringMachine), [{ verdict: 'human', decidedAfterMs: 1740 }, null, null, null]);
  });

  it('pages with opaque cursors both ways and no overlap', async () => {
    const first = await list('?limit=3');
    assert.deepEqual(keys(first.items), ['c4', 'c3', 'c2']);
    assert.ok(first.nextCursor);
    assert.equal((first as { prevCursor?: string }).prevCursor, undefined);
    const second = await list(`?limit=3&cursor=${first.nextCursor}`);
    assert.deepEqual(keys(second.items), ['c1']);
    assert.equal(second.nextCursor, undefined);
    const back = await list(`?limit=3&cursor=${(second as { prevCursor?: string }).prevCursor}`);
    assert.deepEqual(keys(back.items), ['c4', 'c3', 'c2']);
    const oldest = await list('?limit=3&order=asc');
    assert.deepEqual(keys(oldest.items), ['c1', 'c2', 'c3']);
    assert.deepEqual(keys((await list(`?limit=3&order=asc&cursor=${oldest.nextCursor}`)).items), ['c4']);
  });

  it('answers precise 400s for bad queries', async () => {
    const cases: Array<[string, RegExp]> = [
      ['?sort=desc', /^sort must be one of startedAt, duration \(got "desc"\)/],
      ['?order=newest', /^order must be one of desc, asc/],
      ['?sort=duration&sort=startedAt', /^sort may be given once/],
      ['?direction=sideways', /^direction must be one of inbound, outbound, simulation, web/],
      ['?page=2', /unknown query parameter "page"/],
      ['?from=yesterday', /^from must be a date YYYY-MM-DD or an ISO 8601 date-time with offset/],
      ['?from=2026-11-02T00:00:00', /^from must carry a UTC offset/],
      ['?from=2026-11-03&to=2026-11-01', /^to must be after from/],
      ['?outcome=voicemail', /^outcome must be one of completed, busy, no_answer, failed, canceled/],
      ['?campaign=abc', /^campaign must be a campaign id/],
      ['?limit=0', /limit must be between 1 and 200/],
      ['?cursor=bm90LWEtY3Vyc29y', /cursor is not a cursor returned by this list/],
    ];
    for (const [query, message] of cases) {
      const response = await app.get(`/v1/tenants/north/calls${query}`);
      assert.equal(response.status, 400, query);
      assert.equal(response.body.code, 'invalid_argument', query);
      assert.match(String(response.body.message), message, query);
    }
  });

  it('gets one call with its record, analysis and transcript', async () => {
    const response = await app.get(`/v1/tenants/north/calls/${ids.c1}`);
    assert.equal(response.status, 200);
    const body = response.body as Record<string, unknown> & { analysis: Record<string, unknown>; transcript: unknown[] };
    assert.equal(body.tenant, 'north');
    assert.equal(body.messageId, '6b0f6a8e-1111-4c1e-9d55-000000000001');
    assert.equal(body.campaignId, campaignId);
    assert.equal(body.durationSeconds, 60);
    assert.equal(body.sipStatus, null);
    assert.deepEqual(body.recording, { url: `/v1/tenants/north/calls/${ids.c1}/recording` });
    assert.equal(body.analysis.status, 'analyzing');
    assert.deepEqual(body.answeringMachine, { verdict: 'human', decidedAfterMs: 1740 });
    assert.deepEqual(body.transcript, [{ at: '2026-11-01T20:00:00.000Z', speaker: 'agent', text: 'hello c1' }]);
  });

  it('gets one call with the path its recipe took: exits, reprompts, confirmations and the end', async () => {
    const withPath = await app.get(`/v1/tenants/north/calls/${ids.c1}`);
    assert.equal(withPath.status, 200);
    assert.deepEqual((withPath.body as { steps: unknown }).steps, c1Steps);
    // A call that ran no recipe (a busy dial) has an empty path, not a missing field.
    const none = await app.get(`/v1/tenants/north/calls/${ids.c2}`);
    assert.deepEqual((none.body as { steps: unknown }).steps, []);
  });

  it('keeps tenants apart: another tenant\'s call or path is 404, no token is 401', async () => {
    assert.equal((await app.get(`/v1/tenants/north/calls/${ids.s1}`)).status, 404);
    assert.equal((await app.get(`/v1/tenants/north/calls`, southToken)).status, 404);
    assert.equal((await app.get(`/v1/tenants/north/calls/${ids.c1}`, southToken)).status, 404);
    assert.equal((await app.get(`/v1/tenants/south/calls/${ids.s1}`, southToken)).status, 200);
    assert.equal((await app.get(`/v1/tenants/north/calls/not-a-uuid`)).status, 404);
    const anonymous = await app.get(`/v1/tenants/north/calls`, null);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.code, 'unauthenticated');
  });

  it('streams the recording, whole or by byte range', async () => {
    const whole = await app.get(`/v1/tenants/north/calls/${ids.c1}/recording`);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'audio/wav');
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    assert.deepEqual(whole.bytes, wav);
    const part = await app.get(`/v1/tenants/north/calls/${ids.c1}/recording`, undefined, { Range: 'bytes=4-11' });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 4-11/${wav.length}`);
    assert.deepEqual(part.bytes, wav.subarray(4, 12));
    const tail = await app.get(`/v1/tenants/north/calls/${ids.c1}/recording`, undefined, { Range: 'bytes=-10' });
    assert.deepEqual(tail.bytes, wav.subarray(wav.length - 10));
    const beyond = await app.get(`/v1/tenants/north/calls/${ids.c1}/recording`, undefined, { Range: 'bytes=9999-' });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers.get('content-range'), `bytes */${wav.length}`);
  });

  it('answers 404 for a call without a recording and never leaves the recordings directory', async () => {
    const none = await app.get(`/v1/tenants/north/calls/${ids.c2}/recording`);
    assert.equal(none.status, 404);
    assert.match(String(none.body.message), /^recording of call ".+" not found$/);
    assert.equal((await app.get(`/v1/tenants/north/calls/${ids.c3}/recording`)).status, 404);
  });
});
