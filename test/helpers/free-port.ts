import { createServer } from 'node:net';

/** A TCP port free on `address` now (the kernel's pick; another process may still take it before use). */
export async function freeTcpPort(address = '127.0.0.1'): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, address, resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
