import { Agent, request as httpRequest } from 'node:http';
import type { FuzzTarget } from './fuzz-target.js';
import { operationsOf, sendMessageOperation, type FuzzOperation } from './operations.js';
import { Random } from './random.js';
import { FuzzState, RequestBuilder, type FuzzRequest } from './request-builder.js';

export interface FuzzOptions {
  readonly seed: number;
  readonly requests: number;
  readonly concurrency: number;
  /** Body limit the control API was started with (for oversized bodies). */
  readonly bodyLimitBytes: number;
  /** Client-side give-up per request; a hung request is reported, not waited for. */
  readonly timeoutMs?: number;
  readonly onProgress?: (done: number, report: FuzzReport) => void;
}

/** A request that got a 5xx (or no answer at all), and what it was. */
export interface FuzzFailure {
  readonly op: string;
  readonly mutation: string;
  readonly outcome: string;
  readonly request: string;
}

export interface FuzzReport {
  readonly operations: readonly string[];
  readonly requests: number;
  /** Operation -> status (or `error:<code>`) -> count. */
  readonly perOperation: Map<string, Map<string, number>>;
  /** Status code, or `error:<code>` when the client saw no response. */
  readonly histogram: Map<string, number>;
  readonly failures: FuzzFailure[];
  readonly seconds: number;
}

interface Outcome {
  readonly status?: number;
  readonly error?: string;
  readonly body?: string;
  /** The request sent before this one on the same kept-alive connection, when there was one. */
  readonly previous?: string;
}

// A connection reset can be caused by the request before on the same connection, or by the
// server's keep-alive timeout closing it just as it was reused (idle time shown).
const lastOnSocket = new WeakMap<object, { request: string; endedAt: number }>();

function send(agent: Agent, req: FuzzRequest, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { ...req.headers };
    if (req.body && !req.chunked) headers['Content-Length'] = String(req.body.length);
    let settled = false;
    let previous: string | undefined;
    const done = (outcome: Outcome): void => {
      if (!settled) {
        settled = true;
        resolve(previous && outcome.error ? { ...outcome, previous } : outcome);
      }
    };
    const r = httpRequest({ host: '127.0.0.1', port: req.port, method: req.method, path: req.path, headers, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size < 256 * 1024) chunks.push(c);
      });
      res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => done({ status: res.statusCode ?? 0 }));
    });
    r.on('socket', (socket) => {
      const last = lastOnSocket.get(socket);
      if (last) previous = `${last.request} (then idle ${Date.now() - last.endedAt} ms)`;
      lastOnSocket.set(socket, { request: describe(req), endedAt: Number.POSITIVE_INFINITY });
      r.once('response', (res) => res.once('end', () => lastOnSocket.set(socket, { request: describe(req), endedAt: Date.now() })));
    });
    r.on('timeout', () => {
      r.destroy();
      done({ error: 'timeout' });
    });
    r.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
    if (!req.body) r.end();
    else if (!req.chunked) r.end(req.body);
    else {
      // Chunked: write in pieces as a streaming client would, stopping if the server has gone.
      let at = 0;
      const pump = (): void => {
        while (at < req.body!.length && !r.destroyed) {
          const piece = req.body!.subarray(at, at + 64 * 1024);
          at += piece.length;
          if (!r.write(piece)) {
            r.once('drain', pump);
            return;
          }
        }
        if (!r.destroyed) r.end();
      };
      pump();
    }
  });
}

function describe(req: FuzzRequest): string {
  const body = req.body ? ` body(${req.body.length} B${req.chunked ? ', chunked' : ''}): ${JSON.stringify(req.body.subarray(0, 300).toString('utf8'))}` : '';
  const headers = Object.entries(req.headers)
    .map(([k, v]) => (k.toLowerCase() === 'authorization' ? `${k}: ${v.slice(0, 12)}...` : `${k}: ${v}`))
    .join('; ');
  return `${req.method} ${req.path.slice(0, 300)} [${headers}]${body}`;
}

/** Learns ids from successful answers so later requests address existing resources. */
function learn(state: FuzzState, req: FuzzRequest, outcome: Outcome): void {
  if (!outcome.status || outcome.status >= 300 || req.method !== req.op.method) return;
  const { template } = req.op;
  if (req.method === 'DELETE') {
    const id = decodeURIComponent(req.path.split('?')[0]!.split('/').at(-1) ?? '');
    const collection = template.slice(0, template.lastIndexOf('/'));
    const list = state.ids.get(collection);
    if (list?.includes(id)) list.splice(list.indexOf(id), 1);
    return;
  }
  if (!outcome.body) return;
  let body: unknown;
  try {
    body = JSON.parse(outcome.body);
  } catch {
    return;
  }
  const record = body as Record<string, unknown>;
  if (req.op.api === 'sandbox') {
    if (req.method === 'POST' && req.body) {
      const id = /"id":\s*(-?\d+)/.exec(req.body.toString('utf8'))?.[1];
      if (id) state.plants.push(id);
    }
    return;
  }
  // Token lists are not harvested: the fuzz must not revoke its own credentials.
  if (req.method === 'GET' && Array.isArray(record['items']) && !template.endsWith('/tokens')) {
    for (const item of (record['items'] as Array<Record<string, unknown>>).slice(0, 5)) if (typeof item['id'] === 'string') state.remember(template, item['id']);
    return;
  }
  if (req.method !== 'POST' || typeof record['id'] !== 'string') return;
  if (template === '/v1/tenants') {
    const spec = record['spec'] as Record<string, unknown> | undefined;
    if (typeof spec?.['clientId'] === 'string') state.tenants.push(spec['clientId']);
    return;
  }
  if (template.endsWith('/tokens')) state.tokenIds.push(record['id']);
  else if (!template.includes('/turns')) state.remember(template, record['id']);
}

/** Every operation of the served documents plus SendMessage. */
export function fuzzOperations(target: FuzzTarget): FuzzOperation[] {
  const control = operationsOf(target.documents.control as Parameters<typeof operationsOf>[0], 'control');
  const sandbox = operationsOf(target.documents.sandbox as Parameters<typeof operationsOf>[0], 'sandbox');
  return [...control, ...sandbox, sendMessageOperation];
}

export async function runFuzz(target: FuzzTarget, options: FuzzOptions): Promise<FuzzReport> {
  const random = new Random(options.seed);
  const operations = fuzzOperations(target);
  const state = new FuzzState();
  const builder = new RequestBuilder(target, state, random, options.bodyLimitBytes, operations);
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const started = process.hrtime.bigint();
  const report: FuzzReport = { operations: operations.map((o) => o.id), requests: 0, perOperation: new Map(), histogram: new Map(), failures: [], seconds: 0 };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < options.requests) {
      const index = next++;
      // Round robin over operations: every one gets the same share whatever the mutation mix.
      const req = builder.build(operations[index % operations.length]!);
      const outcome = await send(agent, req, options.timeoutMs ?? 30_000);
      const key = outcome.status !== undefined ? String(outcome.status) : `error:${outcome.error}`;
      report.histogram.set(key, (report.histogram.get(key) ?? 0) + 1);
      const statuses = report.perOperation.get(req.op.id) ?? new Map<string, number>();
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      report.perOperation.set(req.op.id, statuses);
      (report as { requests: number }).requests += 1;
      if (outcome.status === undefined || outcome.status >= 500) {
        const previous = outcome.previous ? `\n      after, on the same connection: ${outcome.previous}` : '';
        report.failures.push({ op: req.op.id, mutation: req.mutation, outcome: key + (outcome.body ? ` ${outcome.body.slice(0, 200)}` : ''), request: describe(req) + previous });
      }
      learn(state, req, outcome);
      if (report.requests % 1000 === 0) options.onProgress?.(report.requests, report);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  agent.destroy();
  (report as { seconds: number }).seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return report;
}
