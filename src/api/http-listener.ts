import { createServer } from 'node:http';
import { isIP } from 'node:net';
import { ListenerError } from '../errors.js';
import {
  BoundListener,
  bindServer,
  guardRequests,
  type ListenerOptions,
  serverOptions,
  watchServer,
} from './server-lifecycle.js';

/** Options of {@link HttpListener}; the connection limits default as in {@link ConnectionLimits}. */
export interface HttpListenerOptions extends ListenerOptions {
  /** Allow a non-loopback address over plain HTTP (logged as a warning). Default: false. */
  allowInsecure?: boolean;
}

/**
 * Plain HTTP listener for apps on the same host. Passwords and tokens cross it in clear, so a
 * non-loopback address is refused unless the profile says `allowInsecure: true`.
 */
export class HttpListener extends BoundListener {
  constructor(private readonly options: HttpListenerOptions) {
    super('http', options.drainMs);
  }

  /** Binds the port. @throws ListenerError when refused or the port cannot be bound. */
  async start(): Promise<void> {
    if (this.server) return;
    const { host, port, allowInsecure, logger } = this.options;
    if (!isLoopback(host)) {
      if (!allowInsecure) {
        throw new ListenerError(
          `Refusing plain HTTP on non-loopback address ${host}: passwords and tokens would cross the network in clear. Use the HTTPS listener, or set server.http.allowInsecure to true.`,
        );
      }
      logger.warn(
        { host, port },
        'plain HTTP on a non-loopback address: credentials cross the network in clear',
      );
    }
    const server = createServer(serverOptions(this.options), guardRequests(this.options.handler));
    watchServer(server, this.options, logger);
    await bindServer(server, host, port, 'HTTP');
    this.server = server;
    logger.info({ url: this.url() }, `${this.options.label ?? 'API'} listening`);
  }
}

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host.toLowerCase() === '::ffff:127.0.0.1';
  return false;
}
