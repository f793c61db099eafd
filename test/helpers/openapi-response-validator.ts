import { AssertionError } from 'node:assert';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * Checks real HTTP responses against an OpenAPI 3.0 or 3.1 document: the status must be documented
 * for the operation (exact, `4XX` range or `default`), the Content-Type must be one the response
 * declares, required headers must be present, and the body must match the declared schema (or be
 * empty when the response declares no content). Any app that serves an OpenAPI document can reuse it:
 *
 *   const validator = new OpenApiResponseValidator(document);
 *   const { status, body } = await validator.check('GET', '/plants', await fetch(url, init));
 */

interface MediaTypeObject {
  readonly schema?: unknown;
}
interface HeaderObject {
  readonly required?: boolean;
}
interface ResponseObject {
  readonly content?: Readonly<Record<string, MediaTypeObject>>;
  readonly headers?: Readonly<Record<string, HeaderObject>>;
}
type OperationObject = { readonly responses?: Readonly<Record<string, ResponseObject>> };
export interface OpenApiDocument {
  readonly openapi: string;
  readonly paths?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly components?: unknown;
}

export interface ObservedResponse {
  readonly method: string;
  /** Request path without query string, e.g. `/plants/42`. */
  readonly path: string;
  readonly status: number;
  readonly headers: Headers;
  readonly bodyText: string;
}

export interface CheckedResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  readonly body: unknown;
}

const documentId = 'https://openapi.invalid/document.json';
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const isJsonMedia = (type: string): boolean => type === 'application/json' || /^application\/[^;]+\+json$/.test(type);

function mediaTypeMatches(declared: string, actual: string): boolean {
  if (declared === '*/*' || declared === actual) return true;
  return declared.endsWith('/*') && actual.startsWith(declared.slice(0, -1));
}

export class OpenApiResponseValidator {
  private readonly ajv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: ReadonlyArray<{ template: string; pattern: RegExp; literal: boolean }>;

  constructor(private readonly document: OpenApiDocument) {
    // 3.1 schemas are JSON Schema 2020-12; 3.0 schemas are the draft-07-like subset with `nullable`,
    // which Ajv supports natively. strict: false lets OpenAPI's own keywords (example, xml) pass.
    this.ajv = document.openapi.startsWith('3.1') ? new Ajv2020({ strict: false, allErrors: true }) : new Ajv({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...document, $id: documentId });
    this.templates = Object.keys(document.paths ?? {}).map((template) => ({
      template,
      literal: !template.includes('{'),
      pattern: new RegExp(`^${template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}$`),
    }));
  }

  /** Validates a value against a schema of the document, e.g. `#/components/schemas/Error`. */
  assertSchema(pointer: string, value: unknown, what = pointer): void {
    const validate = this.compile(pointer);
    if (!validate(value)) {
      throw new AssertionError({ message: `${what} does not match the OpenAPI document: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}` });
    }
  }

  assertResponse(observed: ObservedResponse): unknown {
    const where = `${observed.method} ${observed.path} -> ${observed.status}`;
    const template = this.templates.filter((t) => t.pattern.test(observed.path)).sort((a, b) => Number(b.literal) - Number(a.literal))[0];
    if (!template) throw new AssertionError({ message: `${where}: path is not in the OpenAPI document` });
    const method = observed.method.toLowerCase();
    const operation = this.document.paths?.[template.template]?.[method] as OperationObject | undefined;
    if (!operation) throw new AssertionError({ message: `${where}: ${method.toUpperCase()} ${template.template} is not in the OpenAPI document` });
    const responses = operation.responses ?? {};
    const key = [String(observed.status), `${String(observed.status)[0]}XX`, 'default'].find((k) => k in responses);
    if (!key) throw new AssertionError({ message: `${where}: status not documented (documented: ${Object.keys(responses).join(', ')})` });
    const response = responses[key]!;
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      if (header.required && !observed.headers.has(name)) throw new AssertionError({ message: `${where}: required header ${name} missing` });
    }
    const declared = Object.keys(response.content ?? {});
    if (declared.length === 0) {
      if (observed.bodyText !== '') throw new AssertionError({ message: `${where}: documented without content, but the body is ${JSON.stringify(observed.bodyText.slice(0, 200))}` });
      return undefined;
    }
    const actualType = (observed.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const media = declared.find((d) => mediaTypeMatches(d.toLowerCase(), actualType));
    if (!media) throw new AssertionError({ message: `${where}: Content-Type "${actualType}" is not one of ${declared.join(', ')}` });
    if (!isJsonMedia(actualType)) return undefined;
    let body: unknown;
    try {
      body = JSON.parse(observed.bodyText);
    } catch (error) {
      throw new AssertionError({ message: `${where}: body is not JSON (${(error as Error).message}): ${observed.bodyText.slice(0, 200)}` });
    }
    if (response.content?.[media]?.schema !== undefined) {
      const pointer = `#/paths/${escapePointer(template.template)}/${method}/responses/${key}/content/${escapePointer(media)}/schema`;
      this.assertSchema(pointer, body, `${where} body`);
    }
    return body;
  }

  /** Reads a fetch Response, validates it, and returns its status, headers and parsed body. */
  async check(method: string, path: string, response: Response): Promise<CheckedResponse> {
    const text = await response.text();
    const bare = path.split('?')[0]!;
    const body = this.assertResponse({ method, path: bare, status: response.status, headers: response.headers, bodyText: text });
    return { status: response.status, headers: response.headers, text, body };
  }

  private compile(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${documentId}${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }
}
