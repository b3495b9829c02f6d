/**
 * What the HTTP and HTTPS listeners share: binding a server with a clear error, closing it
 * gracefully, and naming the bound address.
 */
import type { Server } from 'node:http';
import { ListenerError } from '../errors.js';

/**
 * Binds `server` to host:port.
 * @param what names the listener in the error, e.g. `HTTPS`.
 * @throws ListenerError naming the address when the port cannot be bound.
 */
export async function bindServer(
  server: Server,
  host: string,
  port: number,
  what: string,
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        new ListenerError(`Cannot listen on ${host}:${port} (${what}): ${error.message}`, {
          cause: error,
        }),
      ),
    );
    server.listen(port, host, () => resolve());
  });
}

/**
 * Stops accepting, closes idle keep-alive sockets at once, and lets open requests finish for
 * at most `drainMs` before their sockets are closed too.
 */
export async function closeServer(server: Server, drainMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), drainMs);
  await closed;
  clearTimeout(timer);
}

/** The bound address as a URL, e.g. `https://[::1]:8443`; undefined when not listening. */
export function serverUrl(
  server: Server | undefined,
  scheme: 'http' | 'https',
): string | undefined {
  const address = server?.address();
  if (!address || typeof address === 'string') return undefined;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${scheme}://${host}:${address.port}`;
}
