import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { RtpPortPool, RtpPortsExhaustedError } from './port-pool.js';

describe('RTP port pool', () => {
  it('hands out even ports with RTCP reserved, and a typed error when exhausted', async () => {
    const pool = new RtpPortPool({ host: '127.0.0.1', minPort: 47401, maxPort: 47406 });
    assert.equal(pool.capacity, 2); // 47402/3 and 47404/5; 47406 has no room for its RTCP port
    const a = await pool.allocate();
    const b = await pool.allocate();
    assert.deepEqual([a.port, b.port], [47402, 47404]);
    await assert.rejects(pool.allocate(), (e: unknown) => e instanceof RtpPortsExhaustedError && e.code === 'resource_exhausted' && e.retryable);
    await a.release();
    const c = await pool.allocate();
    assert.equal(c.port, 47402);
    await Promise.all([b.release(), c.release()]);
    assert.equal(pool.leased, 0);
  });

  it('skips a port another process holds (the RTCP port counts)', async () => {
    const squatter = createSocket('udp4');
    squatter.bind(47411, '127.0.0.1');
    await once(squatter, 'listening');
    const pool = new RtpPortPool({ host: '127.0.0.1', minPort: 47410, maxPort: 47413 });
    const lease = await pool.allocate();
    assert.equal(lease.port, 47412);
    await lease.release();
    squatter.close();
  });
});
