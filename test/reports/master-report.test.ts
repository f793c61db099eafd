import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import type { InsightParameter } from '../../control-api/model/domain/insight-parameter.js';
import { fixedColumns, masterReportCsv } from '../../control-api/features/reports/master-report.js';
import { startCallsApp, type CallsApp } from '../calls/calls-harness.js';
import { forEachStore } from '../helpers/stores.js';
import { createTenant, loanRecipe, provision } from '../insights/insight-fixtures.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

const feedback: InsightParameter = { name: 'feedback', description: 'What the caller thought of the service', type: 'text' };
const tricky = {
  summary: 'Agreed, "finally"\nwill pay ₹2,500 — हाँ, ठीक है\r\nشكرا، مع السلامة',
  feedback: '=HYPERLINK("http://evil")',
};

forEachStore('Master Report (CSV)', (getStore) => {
  let app: CallsApp;
  let tenantId: string;
  let campaignA: string;
  const ids: string[] = [];
  let trickyId = '';

  before(async () => {
    const store = getStore();
    app = await startCallsApp(store);
    tenantId = await createTenant(store, 'reports');
    const other = await createTenant(store, 'elsewhere');
    ({ campaignId: campaignA } = await provision(store, tenantId, '+918000000200'));
    const surveyRecipe = { ...loanRecipe([feedback]), name: 'Survey' };
    await provision(store, tenantId, '+918000000201', surveyRecipe, 'Survey');
    const recorder = new CallRecorder({ db: store.db, onConversationEnded: queueCallAnalysis() });
    const sameInstant = new Date('2026-10-05T09:00:00Z');
    // Seven calls at the very same instant: keyset paging must break the tie by id.
    for (let i = 0; i < 7; i++) {
      const record = await recorder.recordCall({
        tenantId,
        direction: 'outbound',
        startedAt: sameInstant,
        campaignId: campaignA,
        phoneNumber: '+918000000200',
        remoteNumber: `+91980000010${i}`,
        endedAt: new Date(sameInstant.getTime() + 90_500),
        outcome: 'completed',
        sipStatus: 200,
        disposition: i === 0 ? 'promise, "maybe"' : 'done',
        variables: i === 0 ? { name: 'रवि', city: 'دبي' } : {},
        ...(i === 0 ? { answeringMachine: { verdict: 'machine' as const, afterMs: 2460 }, sipCallId: 'a84b4c76e66710@pc33.example.com' } : {}),
        insightParameters: [],
      });
      ids.push(record.id);
      if (i === 0) trickyId = record.id;
    }
    ids.sort();
    // Analysis results as the worker stores them (typed JSON values).
    await store.db
      .updateTable('calls')
      .set({ analysis_status: 'completed', insights: JSON.stringify({ agreed_to_pay: true, amount: 2500, payment_date: '2026-10-09', status: 'paid', ...tricky }) })
      .where('id', '=', trickyId)
      .execute();
    await recorder.recordCall({ tenantId: other, direction: 'inbound', startedAt: sameInstant, endedAt: sameInstant, outcome: 'completed', insightParameters: [] });
  });
  after(() => app.close());

  const download = async (query = '', token?: string | null) => {
    const response = await app.get(`/v1/tenants/reports/reports/master.csv${query}`, token);
    return { ...response, text: response.bytes.toString('utf8') };
  };

  it('has the call columns, then one analysis.<name> column per insight parameter of the tenant\'s recipes', async () => {
    const { status, text } = await download();
    assert.equal(status, 200);
    const [header] = parse(text, { to: 1 }) as string[][];
    assert.deepEqual(header, [
      ...fixedColumns,
      'analysis.agreed_to_pay',
      'analysis.amount',
      'analysis.payment_date',
      'analysis.status',
      'analysis.summary',
      'analysis.feedback',
    ]);
    const [campaignHeader] = parse((await download(`?campaign=${campaignA}`)).text, { to: 1 }) as string[][];
    assert.deepEqual(campaignHeader?.slice(fixedColumns.length), ['analysis.agreed_to_pay', 'analysis.amount', 'analysis.payment_date', 'analysis.status', 'analysis.summary']);
  });

  it('round-trips commas, quotes, newlines, Hindi and Arabic exactly', async () => {
    const rows = parse((await download()).text, { columns: true }) as Array<Record<string, string>>;
    assert.equal(rows.length, 7, 'only this tenant\'s calls');
    assert.deepEqual(rows.map((r) => r.call_id), ids, 'ordered by start time, then id');
    const first = rows.find((r) => r.call_id === trickyId)!;
    assert.equal(first['analysis.summary'], tricky.summary);
    assert.equal(first['analysis.feedback'], tricky.feedback);
    assert.equal(first['analysis.agreed_to_pay'], 'true');
    assert.equal(first['analysis.amount'], '2500');
    assert.equal(first.disposition, 'promise, "maybe"');
    assert.equal(first.amd_verdict, 'machine');
    assert.equal(first.amd_ms, '2460');
    assert.equal(first.sip_call_id, 'a84b4c76e66710@pc33.example.com', 'the SIP Call-ID, to find the call in a SIP trace');
    assert.equal(rows.find((r) => r.call_id !== trickyId)?.amd_verdict, '');
    assert.equal(rows.find((r) => r.call_id !== trickyId)?.sip_call_id, '');
    assert.deepEqual(JSON.parse(first.variables ?? ''), { name: 'रवि', city: 'دبي' });
    assert.equal(first.campaign_name, 'Loan reminders');
    assert.equal(first.duration_seconds, '91');
    assert.equal(first.started_at, '2026-10-05T09:00:00.000Z');
    assert.equal(rows.find((r) => r.call_id !== trickyId)?.['analysis.summary'], '');
  });

  it('offers a BOM for Excel and a formula guard, both off by default', async () => {
    const plain = await download();
    assert.notEqual(plain.bytes[0], 0xef);
    const excel = await download('?bom=true&formulaGuard=true');
    assert.deepEqual([...excel.bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    const rows = parse(excel.text, { columns: true, bom: true }) as Array<Record<string, string>>;
    const guarded = rows.find((r) => r.call_id === trickyId);
    assert.equal(guarded?.['analysis.feedback'], `'${tricky.feedback}`);
    assert.match(guarded?.contact_number ?? '', /^'\+91980000010\d$/, 'a leading + is guarded too: the documented cost');
    const bad = await app.get('/v1/tenants/reports/reports/master.csv?bom=yes');
    assert.equal(bad.status, 400);
    assert.match(String(bad.body.message), /^bom must be true or false/);
  });

  it('pages through the database in keyset batches without losing or repeating a row', async () => {
    for (const batchSize of [1, 2, 3, 7, 100]) {
      const stream = await masterReportCsv(getStore().db, { tenantId, filter: {} }, { batchSize });
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
      const rows = parse(Buffer.concat(chunks).toString('utf8'), { columns: true }) as Array<Record<string, string>>;
      assert.deepEqual(rows.map((r) => r.call_id), ids, `batch size ${batchSize}`);
    }
  });

  it('reads the next batch only when the consumer takes the previous one, and stops when destroyed', async function () {
    this.timeout(30_000);
    const db = getStore().db;
    const bulk = await createTenant(getStore(), 'bulk');
    await sql`insert into calls (tenant_id, direction, started_at, status, outcome, analysis_status, disposition)
              select ${bulk}::uuid, 'inbound', timestamptz '2026-01-01' + g * interval '1 second', 'ended', 'completed', 'completed', repeat('x', 200)
                from generate_series(1, 3000) g`.execute(db);
    const stream = await masterReportCsv(db, { tenantId: bulk, filter: {} }, { batchSize: 100 });
    const first = (await new Promise<Buffer>((resolve) => stream.once('data', resolve))).length;
    stream.pause();
    await new Promise((r) => setTimeout(r, 300));
    // Untaken: at most the stream's buffer plus one batch (~35 kB) is read ahead, not 3,000 rows (~1 MB).
    assert.ok(first + stream.readableLength < 200_000, `read ahead ${first + stream.readableLength} bytes`);
    stream.destroy();
    await new Promise((r) => setTimeout(r, 50));
    // The connection is free again (PGlite has only one): the generator's query loop ended.
    const count = await db.selectFrom('calls').select((eb) => eb.fn.countAll().as('n')).where('tenant_id', '=', bulk).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 3000);
  });

  it('is served as an attachment and only to the tenant', async () => {
    const ok = await download('?from=2026-10-05&to=2026-10-05&outcome=completed');
    assert.equal(ok.headers.get('content-type'), 'text/csv; charset=utf-8; header=present');
    assert.match(ok.headers.get('content-disposition') ?? '', /^attachment; filename="master-report-reports-/);
    const empty = parse((await download('?from=2026-10-06')).text) as string[][];
    assert.equal(empty.length, 1, 'header only');
    assert.equal((await download('', null)).status, 401);
    assert.equal((await app.get('/v1/tenants/nobody/reports/master.csv')).status, 404);
  });
});
