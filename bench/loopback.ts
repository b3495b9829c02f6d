/**
 * Ports and servers on the loopback interface, for benchmarks that serve or start something on
 * 127.0.0.1.
 */
import type { Server } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';

/** Listens on a free loopback port; resolves with the server's base URL, `http://127.0.0.1:PORT`. */
export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A loopback port that was free a moment ago, for a child process to listen on. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
