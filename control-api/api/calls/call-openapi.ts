import { z } from 'zod';
import { clientIdParam, type OpenApiBuilder } from '../route-kit/openapi/builder.js';
import type { JsonSchema } from '../route-kit/openapi/json-schema.js';
import { errorResponses, ok, operation, pageOf, pathParam, ref } from '../route-kit/openapi/operations.js';
import { amdVerdicts, analysisStates, callOutcomes } from '../../features/calls/call-types.js';
import { callSorts, sortOrders } from '../../features/calls/call-list.js';

/**
 * The calls and Master Report routes' part of `/v1/openapi.json`. Response schemas mirror
 * `renderCall` / `renderTranscript` in call-routes.ts and `callSteps` in run-record.ts; the query parameters mirror call-query.ts.
 */
const instant = z.iso.datetime({ offset: true });
const nullableText = z.string().nullable();

export const callViewSchema = z.object({
  id: z.uuid().describe("the call's id: also the gateway's, in every log line of the call (`callId`)"),
  sipCallId: nullableText.describe("SIP Call-ID of the call's dialog (null for simulations)"),
  sip: z
    .object({
      transport: nullableText.describe('udp, tcp, tls, ws or wss'),
      remoteAddress: nullableText.describe("the far end's signalling address: the caller's source, or the address we dialled"),
      codec: nullableText.describe('the audio codec negotiated in SDP, e.g. PCMU'),
    })
    .describe('SIP facts of the call; each null for simulations, provider-carried calls and records written before they were kept'),
  tenant: z.string().describe('client ID of the tenant'),
  direction: z.enum(['inbound', 'outbound', 'simulation', 'web']),
  phoneNumber: nullableText.describe("the platform's number, E.164"),
  phoneNumberId: nullableText,
  contactNumber: nullableText.describe('the other party, E.164'),
  campaignId: nullableText,
  messageId: nullableText.describe('SendMessage message_id (outbound campaign calls)'),
  attempt: z.number().int().min(1).nullable().describe('campaign calls: the attempt (1 = first call, 2 = first retry, ...)'),
  recipeId: nullableText,
  language: nullableText,
  status: z.enum(['in_progress', 'ended']),
  startedAt: instant,
  answeredAt: instant.nullable(),
  endedAt: instant.nullable(),
  durationSeconds: z.number().int().nullable(),
  outcome: z.enum(callOutcomes).nullable(),
  sipStatus: z.number().int().nullable(),
  endReason: nullableText,
  disposition: nullableText,
  variables: z.record(z.string(), z.unknown()),
  recording: z.object({ url: z.string() }).nullable(),
  answeringMachine: z
    .object({
      verdict: z.enum(amdVerdicts).describe('`unknown` (nothing heard, or the call ended first) is treated as a person'),
      decidedAfterMs: z.number().int().describe('callee audio heard from answer until the verdict'),
    })
    .nullable()
    .describe('answering-machine detection of an outbound call; null when the call was not screened'),
  analysis: z.object({
    status: z.enum(analysisStates),
    error: nullableText,
    completedAt: instant.nullable(),
    insights: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).nullable(),
  }),
});

export const transcriptLineSchema = z.object({
  at: instant,
  speaker: z.enum(['agent', 'caller']),
  text: z.string(),
  blockId: z.string().optional(),
  dtmf: z.literal(true).optional(),
  interrupted: z.literal(true).optional(),
  tags: z.array(z.literal('Interrupted')).optional(),
  unspoken: z.string().optional().describe('the part of an interrupted reply that was never played'),
  ignored: z
    .enum(['bargeInDisabled', 'backchannel', 'notListening'])
    .optional()
    .describe('caller words that did not drive the flow: said over a line without barge-in, a backchannel, or said before the listening block began'),
});

export const stepTurnSchema = z.object({
  kind: z
    .enum(['reprompt', 'nudge', 'answered', 'confirm', 'confirmed', 'denied', 'saidOver'])
    .describe(
      'reprompt: asked again; nudge: spoke again after the caller stayed silent; answered: a question answered from the knowledge library; confirm: checked its meaning before acting ("Just to check: ...?"); confirmed / denied: the caller\'s answer to it; saidOver: the caller spoke over the closing line and the run went back to the last listening block',
    ),
  reason: z.enum(['noMatch', 'lowConfidence', 'notUnderstood', 'amountInPieces', 'missingValues', 'silence']).optional().describe('why the block reprompted or nudged, or why a confirmation counts as denied'),
  heard: z.string().optional().describe('what the caller said (also in the transcript)'),
  confidence: z.number().optional().describe("the recogniser's confidence in what it heard, 0..1"),
});

export const stepSchema = z.object({
  blockId: z.string(),
  type: z.string().describe('block type (message, smartAi, condition, close, ...)'),
  exit: z.string().optional().describe('the exit the block left by (next, fallback, an intent, a branch, ...)'),
  end: z.enum(['closed', 'transferred', 'callerHangup', 'exitNotConnected', 'error', 'stepLimit']).optional().describe('the run ended in this block, and why'),
  turns: z.array(stepTurnSchema).describe('caller turns the block did not simply act on, in order'),
});

export const callDetailSchema = callViewSchema.extend({
  analysis: callViewSchema.shape.analysis.extend({
    webhook: z
      .object({
        state: z.enum(['pending', 'running', 'done', 'failed', 'skipped']),
        attempts: z.number().int(),
        lastStatus: z.number().int().nullable(),
        lastError: nullableText,
        deliveredAt: instant.nullable(),
      })
      .nullable()
      .describe('delivery of the analysis_success webhook'),
  }),
  transcript: z.array(transcriptLineSchema),
  steps: z.array(stepSchema).describe('the blocks the recipe visited, in order; empty while the call is live and for calls that ran no recipe'),
});

const query = (name: string, description: string, schema: JsonSchema): JsonSchema => ({ name, in: 'query', required: false, description, schema });
const manyOf = (values: readonly string[] | undefined): JsonSchema => ({ type: 'array', items: values ? { type: 'string', enum: [...values] } : { type: 'string' } });

const filterParams: readonly JsonSchema[] = [
  query('from', 'from this day (YYYY-MM-DD in the tenant timezone) or instant with offset, inclusive', { type: 'string' }),
  query('to', 'through this day (YYYY-MM-DD) or until this instant with offset, exclusive', { type: 'string' }),
  query('campaign', 'campaign id', { type: 'string', format: 'uuid' }),
  query('number', "the platform's number or the other party's, E.164 (`+` optional)", { type: 'string' }),
  query('sipCallId', "the SIP Call-ID of the call's dialog (how a web page finds the record of the call it placed)", { type: 'string' }),
  { ...query('outcome', 'outcome(s); repeat or comma-separate', manyOf(callOutcomes)), style: 'form', explode: true },
  { ...query('disposition', 'Close block disposition(s)', manyOf(undefined)), style: 'form', explode: true },
  { ...query('endReason', "the record's end reason(s): closed, callerHangup, transferred, silenceTimeout, maxDuration, voicemail, ...", manyOf(undefined)), style: 'form', explode: true },
  { ...query('direction', 'direction(s)', manyOf(['inbound', 'outbound', 'simulation', 'web'])), style: 'form', explode: true },
  { ...query('analysis', 'analysis state(s)', manyOf(analysisStates)), style: 'form', explode: true },
];

export function callsOpenApi(b: OpenApiBuilder): void {
  b.addZod('Call', callViewSchema, 'output');
  const detail = b.addZod('CallDetail', callDetailSchema, 'output');
  const page = pageOf(ref('Call'));
  b.schemas['CallPage'] = {
    ...page,
    properties: { ...(page['properties'] as Record<string, JsonSchema>), prevCursor: { type: 'string', description: 'the page before this one; absent on the first page' } },
  };
  const collection = '/v1/tenants/{clientId}/calls';
  const id = pathParam('id', 'call id');
  const tag = 'Call';
  b.tag(tag, 'Call records of a tenant, inbound, outbound (every campaign attempt) and simulated: transcript, the recipe\'s path, post-call insights and the recording.');
  b.path(collection, 'get', operation({
    operationId: 'listCalls', summary: 'List call records, newest first (sortable, filterable, paged both ways)', tag,
    description: 'Sorted by `sort` and `order` (default `startedAt` `desc`: the newest call first). `nextCursor` and `prevCursor` page forwards and back; a cursor is only valid with the `sort` and `order` it was issued for.',
    parameters: [
      clientIdParam,
      { name: 'limit', in: 'query', required: false, description: 'Page size, 1 to 200 (default 50)', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
      query('cursor', '`nextCursor` or `prevCursor` of a page of the same sort and order', { type: 'string' }),
      query('sort', 'sort key: start time, or duration (calls in progress count as shortest)', { type: 'string', enum: [...callSorts], default: 'startedAt' }),
      query('order', '`desc` (newest or longest first) or `asc`', { type: 'string', enum: [...sortOrders], default: 'desc' }),
      ...filterParams,
    ],
    responses: { '200': ok('A page of calls', ref('CallPage')), ...errorResponses(400, 401, 404) },
  }));
  b.path(`${collection}/{id}`, 'get', operation({
    operationId: 'getCall', summary: 'One call with its transcript, recipe path, insights and webhook delivery state', tag, parameters: [clientIdParam, id],
    responses: { '200': ok('The call', detail), ...errorResponses(401, 404) },
  }));
  const audio = { 'audio/*': { schema: { type: 'string', contentMediaType: 'audio/wav' } } };
  const rangeHeaders = { 'Accept-Ranges': { required: true, schema: { type: 'string', const: 'bytes' } } };
  b.path(`${collection}/{id}/recording`, 'get', operation({
    operationId: 'getCallRecording', summary: "The call's recording; a single byte `Range` is honoured", tag,
    parameters: [clientIdParam, id, { name: 'Range', in: 'header', required: false, description: 'one byte range (RFC 9110 section 14.2)', schema: { type: 'string' } }],
    responses: {
      '200': { description: 'The whole recording', headers: rangeHeaders, content: audio },
      '206': { description: 'The requested range', headers: { ...rangeHeaders, 'Content-Range': { required: true, schema: { type: 'string' } } }, content: audio },
      ...errorResponses(401, 404),
      '416': { description: 'The range lies outside the recording (`Content-Range: bytes */size`)', content: { 'application/json': { schema: ref('Error') } } },
    },
  }));
}

export function masterReportOpenApi(b: OpenApiBuilder): void {
  b.tag('Report', 'The Master Report: one CSV row per call, one `analysis.<parameter>` column per insight parameter.');
  const flag = (name: string, description: string): JsonSchema => query(name, description, { type: 'boolean', default: false });
  const reportParams = [clientIdParam, ...filterParams, flag('bom', 'start with a UTF-8 byte order mark (Excel)'), flag('formulaGuard', 'prefix cells that a spreadsheet would run as formulas')];
  const csvReport: JsonSchema = {
    description: 'CSV with a header row (`Content-Disposition: attachment`)',
    headers: { 'Content-Disposition': { required: true, schema: { type: 'string' } } },
    content: { 'text/csv': { schema: { type: 'string' } } },
  };
  b.path('/v1/tenants/{clientId}/reports/master.csv', 'get', operation({
    operationId: 'downloadMasterReport', summary: 'The Master Report as CSV (streamed), for the same filters as the call list', tag: 'Report',
    parameters: reportParams,
    responses: {
      '200': csvReport,
      ...errorResponses(400, 401, 404),
    },
  }));
  b.path('/v1/tenants/{clientId}/reports/master.csv/links', 'post', operation({
    operationId: 'createMasterReportLink', summary: 'A signed link to download the Master Report without a header, valid for a minute', tag: 'Report',
    description: 'Takes the query of `downloadMasterReport` and checks it now (a bad filter is a 400 here). The browser downloads `url` natively: the CSV streams to a file.',
    parameters: reportParams,
    responses: {
      '201': ok('The link', {
        type: 'object',
        required: ['url', 'expiresAt', 'calls'],
        properties: {
          url: { type: 'string', description: '`/v1/report-downloads/{token}`, relative to the control API' },
          expiresAt: { type: 'string', format: 'date-time' },
          calls: { type: 'integer', description: 'how many calls (rows) the report holds now' },
        },
        additionalProperties: false,
      }),
      ...errorResponses(400, 401, 404),
    },
  }));
  b.path('/v1/report-downloads/{token}', 'get', {
    ...operation({
    operationId: 'downloadMasterReportByLink', summary: 'The Master Report through a signed link (no Authorization header)', tag: 'Report',
    parameters: [pathParam('token', 'the token of a link from `createMasterReportLink`')],
    responses: {
      '200': csvReport,
      ...errorResponses(400, 401, 404),
    },
    }),
    // The link's token is the credential: no bearer token.
    security: [],
  });
}
