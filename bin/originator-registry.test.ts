import assert from 'node:assert/strict';
import type { OriginateRequest, Originator } from '../core/ports/originator.js';
import { LateBoundOriginator } from './originator-registry.js';

describe('LateBoundOriginator', () => {
  const request = { to: '+14155550100' } as OriginateRequest;

  it('fails with 503 while no gateway is bound, delegates once bound, and fails again after unbind', async () => {
    const late = new LateBoundOriginator();
    assert.deepEqual(await late.originate(request), { outcome: 'failed', sipStatus: 503, reason: 'no SIP gateway role runs in this process' });
    const seen: string[] = [];
    const gateway: Originator = { originate: async (r) => (seen.push(r.to), { outcome: 'busy', sipStatus: 486 }) };
    const unbind = late.bind(gateway);
    assert.equal(late.bound, true);
    assert.deepEqual(await late.originate(request), { outcome: 'busy', sipStatus: 486 });
    assert.deepEqual(seen, ['+14155550100']);
    unbind();
    assert.equal(late.bound, false);
    assert.equal((await late.originate(request)).outcome, 'failed');
  });

  it('an old unbind does not remove a newer binding', async () => {
    const late = new LateBoundOriginator();
    const first = late.bind({ originate: async () => ({ outcome: 'no-answer' }) });
    late.bind({ originate: async () => ({ outcome: 'busy', sipStatus: 600 }) });
    first();
    assert.deepEqual(await late.originate(request), { outcome: 'busy', sipStatus: 600 });
  });
});
