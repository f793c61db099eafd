import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { RtpPortPool, RtpPortsExhaustedError } from './port-pool.js';

describe('RTP port pool', () => {
  // Ports below the kernel's ephemeral range (32768-60999): no socket bound to port 0 elsewhere
  // in the suite can hold them (47402 once was, and the pool was "exhausted").
  it('hands out even ports with RTCP reserved, and a typed error when exhausted', async () => {
    const pool = new RtpPortPool({ host: '127.0.0.1', minPort: 29401, maxPort: 29406 });
    assert.equal(pool.capacity, 2); // 29402/3 and 29404/5; 29406 has no room for its RTCP port
    const a = await pool.allocate();
    const b = await pool.allocate();
    assert.deepEqual([a.port, b.port], [29402, 29404]);
    await assert.rejects(pool.allocate(), (e: unknown) => e instanceof RtpPortsExhaustedError && e.code === 'resource_exhausted' && e.retryable);
    await a.release();
    const c = await pool.allocate();
    assert.equal(c.port, 29402);
    await Promise.all([b.release(), c.release()]);
    assert.equal(pool.leased, 0);
  });

  it('skips a port another process holds (the RTCP port counts)', async () => {
    const squatter = createSocket('udp4');
    squatter.bind(29411, '127.0.0.1');
    await once(squatter, 'listening');
    const pool = new RtpPortPool({ host: '127.0.0.1', minPort: 29410, maxPort: 29413 });
    const lease = await pool.allocate();
    assert.equal(lease.port, 29412);
    await lease.release();
    squatter.close();
  });
});
