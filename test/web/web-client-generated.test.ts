import assert from 'node:assert/strict';
import { webClientTypesCurrent, webClientTypesFile } from '../../scripts/web-client.js';

describe('the dashboard\'s typed API client', () => {
  it(`${webClientTypesFile} is what openapi-typescript makes of docs/openapi/management.json (else: npm run openapi)`, async function () {
    this.timeout(60_000);
    assert.ok(await webClientTypesCurrent(), `${webClientTypesFile} is stale: run npm run openapi`);
  });
});
