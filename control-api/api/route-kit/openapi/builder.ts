import type { z } from 'zod';
import { componentSchema, type JsonSchema } from './json-schema.js';
import { errorResponses, ok, operation, pathParam, ref } from './operations.js';

/**
 * Collects path items and component schemas. Route modules outside the generic resource routes
 * (calls, reports, simulations) describe their own paths through an `OpenApiContribution`, from
 * the same zod schemas they validate with, so the document cannot drift from the code.
 */
export class OpenApiBuilder {
  readonly schemas: Record<string, JsonSchema>;
  readonly paths: Record<string, Record<string, JsonSchema>> = {};
  /** Tag name -> description; every tag an operation uses must be declared (checked when the document is built). */
  readonly tags = new Map<string, string>();

  constructor(errorSchema: JsonSchema) {
    this.schemas = { Error: errorSchema };
  }

  /** Adds `schema` as component `name` (request side: `input`, response side: `output`) and returns its `$ref`. */
  addZod(name: string, schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const built = componentSchema(schema, io, name);
    this.schemas[name] = built.schema;
    Object.assign(this.schemas, built.extra);
    return ref(name);
  }

  /**
   * Declares an operation tag with its description (the document's top-level `tags`). The first
   * declaration wins: a resource kind's own, made before contributions add routes under its tag.
   */
  tag(name: string, description: string): void {
    if (!this.tags.has(name)) this.tags.set(name, description);
  }

  /**
   * A GET that answers one JSON body, the shape of the small read-only routes (whoami, sip-info,
   * endpoints, trunk registrations): its response schema added as a component, the tag declared
   * (a kind's own description, declared first, wins), 401 always and 404 when a tenant is named.
   */
  read(path: string, o: { operationId: string; summary: string; tag: readonly [name: string, description: string]; response: readonly [component: string, schema: z.ZodType, description: string]; parameters: readonly JsonSchema[] }): void {
    const [component, schema, description] = o.response;
    const body = this.addZod(component, schema, 'output');
    this.tag(...o.tag);
    this.path(path, 'get', operation({
      operationId: o.operationId,
      summary: o.summary,
      tag: o.tag[0],
      parameters: [...o.parameters],
      responses: { '200': ok(description, body), ...errorResponses(...(o.parameters.length > 0 ? [401, 404] : [401])) },
    }));
  }

  path(path: string, method: string, op: JsonSchema): void {
    const item = (this.paths[path] ??= {});
    if (item[method]) throw new Error(`OpenAPI: ${method.toUpperCase()} ${path} is described twice`);
    item[method] = op;
  }
}

/** A route module's part of the management OpenAPI document. */
export type OpenApiContribution = (builder: OpenApiBuilder) => void;

export const clientIdParam = pathParam('clientId', 'Client ID of the tenant (its subdomain)');
