import assert from 'node:assert/strict';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ManagementHarness } from '../helpers/management-app.js';

/** Speech profiles are listed with the dashboard's filter semantics (the kind's own list filter). */
const voice = (name: string, language: string, gender: 'male' | 'female', tags: string[], favourite = false, provider = 'espeak-ng') => ({
  name, language, gender, tags, favourite, provider, voiceName: `${name}-voice`,
});

forEachStore('speech profile list filters over HTTP', (store) => {
  let h: ManagementHarness;
  const names = async (query: string): Promise<string[]> => {
    const res = await h.client().get(`/v1/tenants/voices/speech-profiles${query}`);
    assert.equal(res.status, 200, res.text);
    // The platform's built-in profiles are listed too (test/management/builtin-speech-profiles.test.ts).
    return (res.body.items ?? []).filter((i) => i['builtIn'] === false).map((i) => String((i['spec'] as { name: string }).name)).sort();
  };

  before(async () => {
    h = await startManagementApp(store());
    const op = h.client();
    assert.equal((await op.post('/v1/tenants', { clientId: 'voices', name: 'Voices' })).status, 201);
    for (const spec of [
      voice('asha', 'en-IN', 'female', ['Indian', 'Multi-lingual'], true),
      voice('ravi', 'hi-IN', 'male', ['Indian']),
      voice('emma', 'en-GB', 'female', ['Standard'], false, 'google'),
      voice('omar', 'ar-AE', 'male', ['Multi-lingual'], true),
      voice('eng', 'en', 'male', []),
    ]) {
      const created = await op.post('/v1/tenants/voices/speech-profiles', spec);
      assert.equal(created.status, 201, created.text);
    }
  });
  after(() => h.close());

  it('language matches the tag or its primary subtag, case-insensitively', async () => {
    assert.deepEqual(await names('?language=en'), ['asha', 'emma', 'eng']);
    assert.deepEqual(await names('?language=EN-in'), ['asha']);
    assert.deepEqual(await names('?language=e'), [], 'a prefix that is not a subtag does not match');
  });

  it("gender takes male, female or all ('all' is no filter)", async () => {
    assert.deepEqual(await names('?gender=female'), ['asha', 'emma']);
    assert.deepEqual(await names('?gender=all'), ['asha', 'emma', 'eng', 'omar', 'ravi']);
    assert.deepEqual(await names('?gender=Male&language=hi'), ['ravi']);
  });

  it('tags must all be present; favourite and provider narrow further', async () => {
    assert.deepEqual(await names('?tags=indian'), ['asha', 'ravi']);
    assert.deepEqual(await names('?tags=Indian&tags=Multi-lingual'), ['asha']);
    assert.deepEqual(await names('?favourite=true'), ['asha', 'omar']);
    assert.deepEqual(await names('?favourite=false&gender=male'), ['eng', 'ravi']);
    assert.deepEqual(await names('?provider=google'), ['emma']);
  });

  it('pages through filtered results with limit and cursor', async () => {
    const first = await h.client().get('/v1/tenants/voices/speech-profiles?language=en&limit=2');
    const seen = (first.body.items ?? []).map((i) => String((i['spec'] as { name: string }).name));
    let cursor = first.body['nextCursor'] as string | undefined;
    while (cursor) {
      const next = await h.client().get(`/v1/tenants/voices/speech-profiles?language=en&limit=2&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...(next.body.items ?? []).map((i) => String((i['spec'] as { name: string }).name)));
      cursor = next.body['nextCursor'] as string | undefined;
    }
    // The walk crosses from the built-in catalogue (first) into the tenant's profiles.
    assert.deepEqual(seen.sort(), ['English India Female (espeak-ng)', 'English India Male (espeak-ng)', 'English US Female (espeak-ng)', 'English US Male (espeak-ng)', 'asha', 'emma', 'eng']);
  });

  it('answers 400 naming the parameter for bad values and unknown parameters', async () => {
    const bad = async (query: string, param: string) => {
      const res = await h.client().get(`/v1/tenants/voices/speech-profiles${query}`);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body['code'], 'invalid_argument');
      assert.deepEqual((res.body['issues'] as Array<{ path: string }>).map((i) => i.path), [param]);
    };
    await bad('?gender=robot', 'gender');
    const robot = await h.client().get('/v1/tenants/voices/speech-profiles?gender=robot');
    assert.equal(robot.body['message'], "gender filter must be 'male', 'female' or 'all'", 'the parameter is named once');
    const provider = await h.client().get('/v1/tenants/voices/speech-profiles?provider=nope');
    assert.match(String(provider.body['message']), /^provider must be one of espeak-ng, /);
    await bad('?gender=male&gender=female', 'gender');
    await bad('?favourite=yes', 'favourite');
    await bad('?provider=nope', 'provider');
    await bad('?voiceName=x', 'voiceName');
  });

  it('documents the filter parameters in the OpenAPI document', () => {
    const op = (h.document.paths?.['/v1/tenants/{clientId}/speech-profiles'] as { get: { parameters: Array<{ name: string; schema: { enum?: string[] } }> } }).get;
    const params = Object.fromEntries(op.parameters.map((p) => [p.name, p.schema]));
    assert.deepEqual(Object.keys(params).sort(), ['builtIn', 'clientId', 'cursor', 'favourite', 'gender', 'language', 'limit', 'provider', 'tags']);
    assert.deepEqual(params['gender']?.enum, ['male', 'female', 'all']);
  });
});
