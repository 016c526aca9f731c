import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A TCP port of 127.0.0.1 that was free a moment ago (the OS picks it; the listener is closed again). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
