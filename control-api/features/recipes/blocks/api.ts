import { isAppError } from '../../../../core/errors.js';
import { apiSettingsSchema, type ApiSettings } from '../../../model/recipes/recipe-schema.js';
import type { BlockContext, BlockModule } from '../runtime/block.js';
import type { AuthProfile } from '../runtime/services.js';
import { getPath } from '../runtime/templating.js';

/**
 * API: one HTTP call through the SSRF-safe client. URL values are URL-encoded, JSON body values
 * JSON-escaped, so what a caller says cannot change the request's structure. Auth profile
 * secrets go into headers only; warnings name the host and status, never headers or bodies.
 */
export const apiBlock: BlockModule<ApiSettings> = {
  type: 'api',
  settings: apiSettingsSchema,
  async run(ctx, settings, signal) {
    let url = resolveUrl(ctx, settings);
    if (!url) return { exit: 'failure' };
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(settings.headers)) headers[name.toLowerCase()] = ctx.render(value).replace(/[\r\n]/g, ' ');
    if (settings.authProfile) {
      const profile = await ctx.services.authProfiles?.resolve(ctx.call.tenantId, settings.authProfile);
      if (!profile) {
        ctx.warn(`auth profile '${settings.authProfile}' not found`);
        return { exit: 'failure' };
      }
      if (profile.type === 'apiKey' && profile.in === 'query') url = withQuery(url, profile.name, profile.value);
      else Object.assign(headers, authHeaders(profile));
    }
    const template = settings.body;
    const body = template === undefined ? undefined : renderBody(ctx, template);
    if (template !== undefined && looksLikeJson(template) && !headers['content-type']) headers['content-type'] = 'application/json';
    headers.accept ??= 'application/json';
    let response;
    try {
      response = await ctx.services.http.request(ctx.call.tenantId, { method: settings.method, url, headers, body, timeoutMs: settings.timeoutMs, signal });
    } catch (error) {
      if (signal.aborted) throw error;
      ctx.warn(`API ${settings.method} ${safeHost(url)} failed: ${isAppError(error) ? `${error.code}: ${error.message}` : 'request error'}`);
      return { exit: 'failure' };
    }
    if (response.status < 200 || response.status >= 300) {
      ctx.warn(`API ${settings.method} ${safeHost(url)} answered HTTP ${response.status}`);
      return { exit: 'failure' };
    }
    if (settings.responseMappings.length > 0) {
      let json: unknown;
      try {
        json = JSON.parse(response.body);
      } catch {
        ctx.warn(`API ${settings.method} ${safeHost(url)} did not return JSON; no response fields saved`);
        return { exit: 'failure' };
      }
      for (const mapping of settings.responseMappings) {
        const value = mapping.path.split('.').reduce<unknown>((node, key) => getPath(node, key), json);
        if (value === undefined) ctx.warn(`response has no field '${mapping.path}'`);
        else ctx.setVariable(mapping.variable, value);
      }
    }
    return { exit: 'success' };
  },
};

function resolveUrl(ctx: BlockContext, settings: ApiSettings): string | undefined {
  const rendered = ctx.render(settings.url, encodeURIComponent);
  if (!rendered.startsWith('/')) return rendered;
  const base = ctx.global.baseUrl;
  if (!base) {
    ctx.warn(`relative API url '${settings.url}' but the recipe has no Base URL`);
    return undefined;
  }
  return `${base.replace(/\/+$/, '')}${rendered}`;
}

export function authHeaders(profile: AuthProfile): Record<string, string> {
  switch (profile.type) {
    case 'basic':
      return { authorization: `Basic ${Buffer.from(`${profile.username}:${profile.password}`, 'utf8').toString('base64')}` };
    case 'bearer':
      return { authorization: `Bearer ${profile.token}` };
    case 'apiKey':
      return { [profile.name.toLowerCase()]: profile.value };
  }
}

function withQuery(url: string, name: string, value: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set(name, value);
  return parsed.toString();
}

function looksLikeJson(body: string): boolean {
  return /^\s*[{[]/.test(body);
}

function renderBody(ctx: BlockContext, template: string): string {
  // Inside a JSON template a value lands between quotes or as a bare number: escaping it as
  // JSON string content keeps a caller's words from closing the quote and adding fields.
  return looksLikeJson(template) ? ctx.render(template, (value) => JSON.stringify(value).slice(1, -1)) : ctx.render(template);
}

function safeHost(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(invalid url)';
  }
}
