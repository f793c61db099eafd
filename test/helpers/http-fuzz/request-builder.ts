import { stringify as toYaml } from 'yaml';
import { campaignDoc, numberDoc, recipeDoc, trunkDoc, authDoc } from '../resource-documents.js';
import type { FuzzTarget } from './fuzz-target.js';
import { badPathValues, badQuery, bodyMutations, type BodyPlan } from './mutations.js';
import type { FuzzOperation, FuzzParameter } from './operations.js';
import type { Random } from './random.js';
import { deref, sampleSchema, type FieldHints, type Schema } from './schema-sample.js';

/** One request as it goes on the wire, with what produced it. */
export interface FuzzRequest {
  readonly op: FuzzOperation;
  readonly mutation: string;
  readonly port: number;
  readonly method: string;
  /** Percent-encoded path and query, as sent. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  /** Send without Content-Length (Transfer-Encoding: chunked). */
  readonly chunked?: boolean;
}

/** What the fuzz learnt from earlier answers: ids it may address. */
export class FuzzState {
  /** Collection template -> ids created there (`/v1/tenants/{clientId}/recipes` -> uuids). */
  readonly ids = new Map<string, string[]>();
  readonly tenants: string[] = [];
  readonly tokenIds: string[] = [];
  readonly plants: string[] = [];

  remember(collection: string, id: string): void {
    const list = this.ids.get(collection) ?? [];
    if (list.includes(id)) return;
    list.push(id);
    // Bounded, newest kept: deterministic for a seed (no Math.random here).
    if (list.length > 200) list.shift();
    this.ids.set(collection, list);
  }
}

const hugeBodyBytes = (limit: number, random: Random): number => limit + random.pick([1, 64 * 1024, limit, 4 * limit]);
const wrongContentTypes = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '', 'application/json; charset=latin1', 'application/xml', 'application/json;;', '*/*'];
const kinds = ['BusinessHours', 'SipTrunk', 'AuthProfile', 'SpeechProfile', 'PronunciationEntry', 'KnowledgeDocument', 'Recipe', 'PhoneNumber', 'Campaign', 'Tenant'];

export class RequestBuilder {
  private readonly hints: FieldHints;
  private readonly specSchemas = new Map<string, Schema>();

  constructor(
    private readonly target: FuzzTarget,
    private readonly state: FuzzState,
    private readonly random: Random,
    private readonly bodyLimitBytes: number,
    operations: readonly FuzzOperation[],
  ) {
    const r = random;
    this.hints = {
      recipe: () => r.pick(target.recipes),
      phoneNumber: () => r.pick(target.numbers),
      number: () => `+9144${String(r.int(10_000_000, 99_999_999))}`,
      CampaignID: () => r.pick(target.campaignIds),
      timezone: () => r.pick(['UTC', 'Asia/Kolkata', 'Europe/London', 'America/New_York']),
      clientId: () => `f${r.word(4, 12)}`,
      name: () => `fz ${r.word()} ${r.int(0, 1e9)}`,
      word: () => `${r.word()}${r.int(0, 1e6)}`,
      scopes: () => [r.pick(['management', 'sandbox', 'campaign'])],
    };
    for (const op of operations) if (op.method === 'PUT' && op.body) this.specSchemas.set(op.template, op.body.schema);
  }

  build(op: FuzzOperation): FuzzRequest {
    const r = this.random;
    const mutations: Array<readonly [number, string]> = [
      [30, 'valid'],
      [8, 'bad query'],
      [3, 'wrong method'],
      [4, 'bad token'],
    ];
    if (op.parameters.some((p) => p.in === 'path')) mutations.push([8, 'bad path parameter']);
    if (op.body) {
      for (const name of Object.keys(bodyMutations)) mutations.push([3, name]);
      mutations.push([4, 'wrong content type'], [2, 'empty body'], [1, 'huge body (Content-Length)'], [1, 'huge body (chunked)']);
    }
    const mutation = r.weighted(mutations);
    // Never DELETE by mistake: it would remove the fuzz's own tenant or credentials for good.
    const method = mutation === 'wrong method' ? r.pick(['GET', 'POST', 'PUT', 'PATCH', 'OPTIONS', 'HEAD'].filter((m) => m !== op.method)) : op.method;
    const headers: Record<string, string> = { ...this.auth(op, mutation === 'bad token') };
    let path = this.path(op, mutation === 'bad path parameter');
    const query = mutation === 'bad query' ? badQuery(op.parameters.filter((p) => p.in === 'query').map((p) => p.name), r) : this.query(op);
    if (query) path += `?${query}`;
    if (!op.body) return { op, mutation, port: this.portOf(op), method, path, headers };

    const contentType = r.pick(op.body.contentTypes);
    headers['Content-Type'] = contentType;
    let body: Buffer;
    let chunked = false;
    if (mutation === 'empty body') body = Buffer.alloc(0);
    else if (mutation.startsWith('huge body')) {
      body = Buffer.alloc(hugeBodyBytes(op.api === 'sandbox' ? 64 * 1024 : this.bodyLimitBytes, r), 0x20);
      body.write('{"a":"');
      chunked = mutation.endsWith('(chunked)');
    } else {
      const value = this.bodyValue(op);
      const plan: BodyPlan = bodyMutations[mutation] ? bodyMutations[mutation](value, r) : { kind: 'value', value };
      const yaml = contentType.includes('yaml');
      const text = plan.kind === 'text' ? plan.text : yaml ? toYaml(plan.value) : (JSON.stringify(plan.value) ?? '');
      body = Buffer.from(text, 'utf8');
    }
    if (mutation === 'wrong content type') {
      const wrong = r.pick(wrongContentTypes);
      if (wrong === '') delete headers['Content-Type'];
      else headers['Content-Type'] = wrong;
      if (r.chance(0.2)) headers['Content-Encoding'] = r.pick(['gzip', 'br', 'x-unknown']);
    }
    return { op, mutation, port: this.portOf(op), method, path, headers, body, ...(chunked ? { chunked } : {}) };
  }

  private portOf(op: FuzzOperation): number {
    return op.api === 'sandbox' ? this.target.sandboxPort : this.target.controlPort;
  }

  private auth(op: FuzzOperation, bad: boolean): Record<string, string> {
    const r = this.random;
    const t = this.target.tokens;
    const host: Record<string, string> = op.api === 'twirp' ? { Host: r.chance(0.95) ? `${this.target.clientId}.localhost` : r.pick(['nope.localhost', 'localhost', 'FUZZ.LOCALHOST.', '-x.localhost']) } : {};
    if (bad) {
      const value = r.pick([`Bearer ${r.word(20, 40)}`, 'Bearer', 'Basic dXNlcjpwYXNz', `Bearer ${t.operator}x`, 'Bearer a b', `bearer ${'z'.repeat(5000)}`, '', 'Bearer \u00e9\u00e8']);
      return value ? { ...host, Authorization: value } : host;
    }
    let token: string;
    if (op.api === 'sandbox') token = r.chance(0.8) ? t.sandbox : t.staticSandbox;
    else if (op.api === 'twirp') return { ...host, Authorization: r.chance(0.5) ? t.campaign : `Bearer ${t.campaign}` };
    else token = r.weighted([[6, t.operator], [3, t.management], [0.3, t.otherManagement]] as const);
    return { ...host, Authorization: `Bearer ${token}` };
  }

  private pathValue(op: FuzzOperation, param: FuzzParameter): string {
    const r = this.random;
    const collection = op.template.slice(0, op.template.indexOf(`{${param.name}}`) - 1);
    if (param.name === 'clientId') {
      if (op.method === 'DELETE' && op.template === '/v1/tenants/{clientId}') return this.state.tenants.length > 0 && r.chance(0.7) ? r.pick(this.state.tenants) : r.word();
      return r.chance(0.95) ? this.target.clientId : r.pick([this.target.otherClientId, r.word()]);
    }
    if (param.name === 'tokenId' && this.state.tokenIds.length > 0 && r.chance(0.7)) return r.pick(this.state.tokenIds);
    if (op.api === 'sandbox' && this.state.plants.length > 0 && r.chance(0.7)) return r.pick(this.state.plants);
    const known = this.state.ids.get(collection);
    if (known && known.length > 0 && r.chance(0.8)) return r.pick(known);
    return String(sampleSchema(param.schema, { root: {}, random: r }));
  }

  private path(op: FuzzOperation, bad: boolean): string {
    const params = op.parameters.filter((p) => p.in === 'path');
    const broken = bad && params.length > 0 ? this.random.pick(params).name : undefined;
    return op.template.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      if (name === broken) return this.random.pick(badPathValues);
      const param = params.find((p) => p.name === name);
      return encodeURIComponent(param ? this.pathValue(op, param) : 'x');
    });
  }

  private query(op: FuzzOperation): string {
    const parts: string[] = [];
    for (const p of op.parameters.filter((q) => q.in === 'query')) {
      if (!p.required && !this.random.chance(0.3)) continue;
      if (p.name === 'cursor') continue;
      const value = sampleSchema(p.schema, { root: this.target.documents.control, random: this.random, hints: this.hints }, 0, p.name);
      for (const v of Array.isArray(value) ? value : [value]) parts.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(String(v))}`);
    }
    return parts.join('&');
  }

  private bodyValue(op: FuzzOperation): unknown {
    const r = this.random;
    const root = op.api === 'sandbox' ? this.target.documents.sandbox : this.target.documents.control;
    const ctx = { root, random: r, hints: this.hints };
    if (op.template === '/v1/apply') {
      const documents = Array.from({ length: r.int(1, 3) }, () => {
        const kind = r.pick(kinds);
        const schema = (root as { components: { schemas: Record<string, Schema> } }).components.schemas[`${kind}Spec`] ?? {};
        return { apiVersion: 'vap/v1', kind, ...(kind === 'Tenant' ? {} : { tenant: this.target.clientId }), spec: sampleSchema(schema, ctx) };
      });
      return r.chance(0.5) ? documents : { documents };
    }
    const fixture = this.fixture(op.template);
    if (fixture !== undefined && (op.method === 'POST' || op.method === 'PUT') && r.chance(0.5)) return fixture;
    if (op.method === 'PATCH') {
      const spec = this.specSchemas.get(op.template);
      const whole = spec ? sampleSchema(spec, ctx) : {};
      if (typeof whole !== 'object' || whole === null) return {};
      return Object.fromEntries(Object.entries(whole).filter(() => r.chance(0.4)));
    }
    if (op.api === 'sandbox' && op.method === 'POST') return { id: r.int(-5, 1e6), name: r.word(), ...(r.chance(0.5) ? { tag: r.word() } : {}) };
    return sampleSchema(deref(op.body!.schema, root), ctx);
  }

  private fixture(template: string): unknown {
    const r = this.random;
    const name = `fx ${r.word()} ${r.int(0, 1e9)}`;
    const number = `+9144${String(r.int(10_000_000, 99_999_999))}`;
    if (template.endsWith('/recipes') || template.endsWith('/recipes/{id}')) return recipeDoc(name);
    if (template.endsWith('/phone-numbers') || template.endsWith('/phone-numbers/{id}')) return numberDoc(number, r.pick(this.target.recipes));
    if (template.endsWith('/campaigns') || template.endsWith('/campaigns/{id}')) return campaignDoc(name, r.pick(this.target.numbers), r.pick(this.target.recipes));
    if (template.endsWith('/sip-trunks') || template.endsWith('/sip-trunks/{id}')) return trunkDoc(name, { inbound: { terminationAddresses: ['127.0.0.10'], dids: [number] } });
    if (template.endsWith('/auth-profiles') || template.endsWith('/auth-profiles/{id}')) return authDoc(name);
    return undefined;
  }
}
