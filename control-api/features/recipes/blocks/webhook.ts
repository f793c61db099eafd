import { isAppError } from '../../../../core/errors.js';
import { webhookSettingsSchema, type WebhookSettings } from '../../../model/recipes/recipe-schema.js';
import type { BlockModule } from '../runtime/block.js';
import { webhookHost, withoutUrlCredentials } from '../../../platform/webhooks/log-safe.js';

/**
 * Webhook: posts the templated payload, signed like every platform webhook. A failed delivery
 * is reported as a warning and the call continues: the caller should not hear our outage.
 */
export const webhookBlock: BlockModule<WebhookSettings> = {
  type: 'webhook',
  settings: webhookSettingsSchema,
  async run(ctx, settings, signal) {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(settings.headers)) headers[name.toLowerCase()] = ctx.render(value).replace(/[\r\n]/g, ' ');
    const payload = ctx.renderDeep(settings.payload);
    try {
      const status = await ctx.services.webhooks.send(ctx.call.tenantId, settings.url, payload, headers, signal);
      if (status < 200 || status >= 300) ctx.warn(`webhook ${webhookHost(settings.url)} answered HTTP ${status}`);
    } catch (error) {
      if (signal.aborted) throw error;
      const cause = isAppError(error) ? `${error.code}: ${error.message}` : `request error: ${error instanceof Error ? error.message : String(error)}`;
      ctx.warn(`webhook ${webhookHost(settings.url)} failed: ${withoutUrlCredentials(cause).slice(0, 300)}`);
    }
    return { exit: 'next' };
  },
};
