import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { AppError } from '../../../../core/errors.js';
import { maskedSecret } from '../../../platform/crypto/secret.js';
import type { PhoneNumberSpec } from '../../domain/phone-number.js';
import type { Recipe } from '../../recipes/recipe-schema.js';
import { forEachStore } from '../../../../test/helpers/stores.js';
import { createResourceDefinitions } from '../registry.js';
import { authDoc, campaignDoc, numberDoc, recipeDoc, testBox, trunkDoc } from '../../../../test/helpers/resource-documents.js';

const rejects = async (promise: Promise<unknown>, code: string, message: RegExp): Promise<void> => {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof AppError, `expected AppError, got ${String(error)}`);
    assert.equal(error.code, code);
    assert.match(error.message, message);
    return true;
  });
};

forEachStore('resource repositories', (store) => {
  const defs = createResourceDefinitions({ secretBox: testBox() });
  const db = () => store().db;
  let tenantA: string;
  let tenantB: string;

  before(async () => {
    const rows = await db()
      .insertInto('tenants')
      .values([{ client_id: 'alpha', name: 'Alpha' }, { client_id: 'beta', name: 'Beta' }])
      .returning(['id', 'client_id'])
      .execute();
    tenantA = rows.find((r) => r.client_id === 'alpha')?.id as string;
    tenantB = rows.find((r) => r.client_id === 'beta')?.id as string;
  });

  describe('CRUD', () => {
    it('creates, reads, lists with a cursor, replaces and deletes a recipe', async () => {
      const repo = defs.recipe.repository;
      const created = await repo.create(db(), tenantA, recipeDoc('Greeter') as Recipe);
      assert.equal(created.spec.name, 'Greeter');
      assert.equal(created.spec.globalSettings.voicemail.action, 'disconnect');
      assert.deepEqual((await repo.get(db(), tenantA, created.id))?.spec, created.spec);
      assert.equal((await repo.findByNaturalKey(db(), tenantA, 'Greeter'))?.id, created.id);
      await repo.create(db(), tenantA, recipeDoc('Helper') as Recipe);
      await repo.create(db(), tenantA, recipeDoc('Intake') as Recipe);
      const first = await repo.list(db(), tenantA, { limit: 2 });
      assert.deepEqual(first.items.map((i) => i.spec.name), ['Greeter', 'Helper']);
      assert.ok(first.nextCursor);
      const second = await repo.list(db(), tenantA, { limit: 2, cursor: first.nextCursor });
      assert.deepEqual(second.items.map((i) => i.spec.name), ['Intake']);
      assert.equal(second.nextCursor, undefined);
      const replaced = await repo.update(db(), tenantA, created.id, recipeDoc('Greeter', { description: 'v2' }) as Recipe);
      assert.equal(replaced.spec.description, 'v2');
      assert.ok(replaced.updatedAt.getTime() >= created.updatedAt.getTime());
      await repo.delete(db(), tenantA, created.id);
      assert.equal(await repo.get(db(), tenantA, created.id), undefined);
      await rejects(repo.delete(db(), tenantA, created.id), 'not_found', /recipe .* not found/);
    });

    it('rejects an invalid spec with invalid_argument and the precise field issue', async () => {
      await rejects(
        defs.phoneNumber.repository.create(db(), tenantA, { ...numberDoc('+14155550100', 'Helper'), maxCallDurationMinutes: 31 } as PhoneNumberSpec),
        'invalid_argument',
        /^invalid phone number: maxCallDurationMinutes must be between 5 and 30 minutes$/,
      );
    });
  });

  describe('tenant isolation', () => {
    it('never shows, changes or deletes another tenant\'s resources', async () => {
      const repo = defs.recipe.repository;
      const own = await repo.create(db(), tenantB, recipeDoc('Helper') as Recipe); // same name as tenant A's: allowed
      assert.equal(await repo.get(db(), tenantA, own.id), undefined);
      assert.equal((await repo.findByNaturalKey(db(), tenantA, 'Helper'))?.tenantId, tenantA);
      assert.deepEqual((await repo.list(db(), tenantB, { limit: 50 })).items.map((i) => i.id), [own.id]);
      await rejects(repo.update(db(), tenantA, own.id, recipeDoc('Helper') as Recipe), 'not_found', /not found/);
      await rejects(repo.delete(db(), tenantA, own.id), 'not_found', /not found/);
      assert.ok(await repo.get(db(), tenantB, own.id));
    });

    it('resolves references only inside the tenant', async () => {
      await rejects(
        defs.phoneNumber.repository.create(db(), tenantB, numberDoc('+14155550111', 'Intake') as PhoneNumberSpec),
        'invalid_argument',
        /recipe refers to recipe 'Intake', which does not exist/,
      );
    });
  });

  describe('natural keys', () => {
    it('refuses a second resource with the same natural key', async () => {
      await rejects(defs.recipe.repository.create(db(), tenantA, recipeDoc('Helper') as Recipe), 'already_exists', /recipe 'Helper' already exists/);
    });

    it('refuses a number another tenant already has, whatever its formatting', async () => {
      await defs.phoneNumber.repository.create(db(), tenantA, numberDoc('+91 98765 43210', 'Helper') as PhoneNumberSpec);
      await rejects(
        defs.phoneNumber.repository.create(db(), tenantB, numberDoc('0091-98765-43210', 'Helper') as PhoneNumberSpec),
        'already_exists',
        /phone number \+919876543210 is already provisioned/,
      );
    });

    it('refuses a trunk extension that another tenant uses', async () => {
      await defs.sipTrunk.repository.create(db(), tenantA, trunkDoc('carrier') as never);
      await rejects(defs.sipTrunk.repository.create(db(), tenantB, trunkDoc('carrier') as never), 'already_exists', /extension 7001 is already used/);
    });
  });

  describe('references in use', () => {
    it('refuses to delete a recipe a phone number or campaign uses, naming them', async () => {
      const number = await defs.phoneNumber.repository.create(db(), tenantA, numberDoc('+14155550123', 'Intake') as PhoneNumberSpec);
      await defs.campaign.repository.create(db(), tenantA, campaignDoc('Renewals', '+14155550123', 'Intake') as never);
      const recipe = await defs.recipe.repository.findByNaturalKey(db(), tenantA, 'Intake');
      assert.ok(recipe && number);
      await rejects(
        defs.recipe.repository.delete(db(), tenantA, recipe.id),
        'failed_precondition',
        /cannot delete recipe 'Intake': it is used by phone number \+14155550123, campaign 'Renewals'/,
      );
      assert.ok(await defs.recipe.repository.get(db(), tenantA, recipe.id));
    });

    it('refuses renaming a recipe that others name, and deleting a number a campaign uses', async () => {
      const recipe = await defs.recipe.repository.findByNaturalKey(db(), tenantA, 'Intake');
      assert.ok(recipe);
      await rejects(defs.recipe.repository.update(db(), tenantA, recipe.id, recipeDoc('Intake 2') as Recipe), 'failed_precondition', /^cannot rename recipe 'Intake' to 'Intake 2': it is used by /);
      const number = await defs.phoneNumber.repository.findByNaturalKey(db(), tenantA, '+14155550123');
      assert.ok(number);
      await rejects(defs.phoneNumber.repository.delete(db(), tenantA, number.id), 'failed_precondition', /used by campaign 'Renewals'/);
    });

    it('the database itself refuses deleting a used recipe (foreign key)', async () => {
      const recipe = await defs.recipe.repository.findByNaturalKey(db(), tenantA, 'Intake');
      assert.ok(recipe);
      await assert.rejects(sql`delete from recipes where id = ${recipe.id}`.execute(db()), (e: unknown) => (e as { code?: string }).code === '23503');
    });

    it('refuses deleting an auth profile an API block uses', async () => {
      const profile = await defs.authProfile.repository.create(db(), tenantA, authDoc('crm') as never);
      await defs.recipe.repository.create(db(), tenantA, {
        ...recipeDoc('Crm lookup'),
        blocks: [
          { id: 'greet', type: 'message', settings: { text: 'One moment' } },
          { id: 'lookup', type: 'api', settings: { method: 'GET', url: 'http://127.0.0.1:9/crm', authProfile: 'crm' } },
          { id: 'bye', type: 'close', settings: {} },
        ],
        connections: [
          { from: 'greet', exit: 'next', to: 'lookup' },
          { from: 'lookup', exit: 'success', to: 'bye' },
        ],
      } as Recipe);
      await rejects(defs.authProfile.repository.delete(db(), tenantA, profile.id), 'failed_precondition', /used by recipe 'Crm lookup'/);
    });
  });

  describe('secrets at rest', () => {
    it('stores provider and SIP secrets encrypted, returns them masked and keeps them when sent back masked', async () => {
      const number = await defs.phoneNumber.repository.findByNaturalKey(db(), tenantA, '+14155550123');
      assert.ok(number && number.spec.provider.type === 'providerA');
      assert.equal(number.spec.provider.authToken, maskedSecret);
      const raw = await sql<{ spec: unknown }>`select spec from phone_numbers where id = ${number.id}`.execute(db());
      const rawText = JSON.stringify(raw.rows[0]?.spec);
      assert.ok(!rawText.includes('clear-provider-token-1'), 'clear token found in the stored row');
      assert.match(rawText, /"authToken":"vap1\./);

      const trunk = await defs.sipTrunk.repository.findByNaturalKey(db(), tenantA, 'carrier');
      assert.ok(trunk);
      assert.equal(trunk.spec.outbound.password, maskedSecret);
      const trunkRaw = await sql<{ spec: unknown }>`select spec::text as spec from sip_trunks where id = ${trunk.id}`.execute(db());
      assert.ok(!String(trunkRaw.rows[0]?.spec).includes('clear-sip-password-1'));

      // Re-applying what was read keeps the secret and counts as unchanged.
      assert.equal(await defs.phoneNumber.repository.isUnchanged(db(), number, number.spec), true);
      await defs.phoneNumber.repository.update(db(), tenantA, number.id, number.spec);
      const opened = await defs.phoneNumber.repository.findWithSecrets(db(), tenantA, '+14155550123');
      assert.ok(opened && opened.spec.provider.type === 'providerA');
      assert.equal(opened.spec.provider.authToken, 'clear-provider-token-1');
    });

    it('isUnchanged compares a clear secret without revealing it', async () => {
      const number = await defs.phoneNumber.repository.findByNaturalKey(db(), tenantA, '+14155550123');
      assert.ok(number);
      const same = { ...number.spec, provider: { type: 'providerA', accountSid: 'AC123', authToken: 'clear-provider-token-1' } } as PhoneNumberSpec;
      const other = { ...number.spec, provider: { type: 'providerA', accountSid: 'AC123', authToken: 'another-token' } } as PhoneNumberSpec;
      assert.equal(await defs.phoneNumber.repository.isUnchanged(db(), number, same), true);
      assert.equal(await defs.phoneNumber.repository.isUnchanged(db(), number, other), false);
      assert.equal(await defs.phoneNumber.repository.isUnchanged(db(), number, { ...number.spec, enabled: false }), false);
    });

    it('requires the secret on create and after switching provider', async () => {
      await rejects(
        defs.phoneNumber.repository.create(db(), tenantA, {
          ...numberDoc('+14155550199', 'Intake'),
          provider: { type: 'providerA', accountSid: 'AC1' },
        } as PhoneNumberSpec),
        'invalid_argument',
        /provider.authToken is required/,
      );
      const number = await defs.phoneNumber.repository.findByNaturalKey(db(), tenantA, '+14155550123');
      assert.ok(number);
      await rejects(
        defs.phoneNumber.repository.update(db(), tenantA, number.id, {
          ...number.spec,
          provider: { type: 'providerB', accountSid: 'AC1', apiKey: maskedSecret, outboundAppId: '1', subDomain: 'x' },
        } as PhoneNumberSpec),
        'invalid_argument',
        /provider.apiKey is required/,
      );
    });
  });

  it('deleting a tenant removes its resources, used recipes included', async () => {
    const tenant = await db().insertInto('tenants').values({ client_id: 'gamma', name: 'Gamma' }).returning('id').executeTakeFirstOrThrow();
    await defs.recipe.repository.create(db(), tenant.id, recipeDoc('Flow') as Recipe);
    await defs.phoneNumber.repository.create(db(), tenant.id, numberDoc('+14155550777', 'Flow') as PhoneNumberSpec);
    await db().deleteFrom('tenants').where('id', '=', tenant.id).execute();
    const left = await sql<{ n: number }>`select count(*)::int as n from recipes where tenant_id = ${tenant.id}`.execute(db());
    assert.equal(left.rows[0]?.n, 0);
  });
});
