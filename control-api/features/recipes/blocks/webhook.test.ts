import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeContext } from '../../../../test/fakes/fake-block-context.js';
import { SafeHttp } from '../../../platform/net/safe-http.js';
import { verifySignature } from '../../../platform/webhooks/signing.js';
import { SignedWebhookSender } from '../../../platform/webhooks/webhook-sender.js';
import { webhookSettingsSchema } from '../../../model/recipes/recipe-schema.js';
import { webhookBlock } from './webhook.js';

describe('Webhook block', () => {
  let server: Server;
  let url: string;
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  let status = 200;
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const webhooks = (allow: string[]) => new SignedWebhookSender({ http: new SafeHttp({ allowlist: () => allow }), secretFor: () => 'whsec-test' });

  it('posts the templated payload with an HMAC signature the receiver can verify', async () => {
    const ctx = fakeContext({ variables: { amount: 2500, promise_date: '2026-11-25' }, services: { webhooks: webhooks(['127.0.0.1']) } });
    const settings = webhookSettingsSchema.parse({ url, headers: { 'X-Source': 'recipe' }, payload: { event: 'promise_to_pay', amount: '{{amount}}', nested: { on: '{{promise_date}}', caller: '{{caller_number}}' }, fixed: 3 } });
    assert.deepEqual(await webhookBlock.run(ctx, settings, ctx.signal), { exit: 'next' });
    const delivery = received.at(-1);
    assert.deepEqual(JSON.parse(delivery?.body ?? ''), { event: 'promise_to_pay', amount: '2500', nested: { on: '2026-11-25', caller: '+919812345678' }, fixed: 3 });
    assert.equal(delivery?.headers['x-source'], 'recipe');
    assert.deepEqual(verifySignature('whsec-test', String(delivery?.headers['x-vap-signature']), delivery?.body ?? ''), { ok: true });
  });

  it('continues through next with a warning when delivery fails or is refused', async () => {
    status = 500;
    const failed = fakeContext({ services: { webhooks: webhooks(['127.0.0.1']) } });
    assert.deepEqual(await webhookBlock.run(failed, webhookSettingsSchema.parse({ url }), failed.signal), { exit: 'next' });
    assert.match(failed.warnings[0] ?? '', /HTTP 500/);
    const refused = fakeContext({ services: { webhooks: webhooks([]) } });
    const before = received.length;
    assert.deepEqual(await webhookBlock.run(refused, webhookSettingsSchema.parse({ url }), refused.signal), { exit: 'next' });
    assert.equal(received.length, before);
    assert.match(refused.warnings[0] ?? '', /permission_denied/);
  });
});
