/**
 * What the HTTP and HTTPS listeners share: binding a server with a clear error, its connection
 * limits, answering what node refuses before any route runs, closing it gracefully, and naming
 * the bound address.
 */
import {
  type IncomingMessage,
  maxHeaderSize,
  type RequestListener,
  type Server,
  type ServerOptions,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { ListenerError, RequestError } from '../errors.js';
import { type ConnectionSlotLimits, guardConnectionSlots } from './connection-slots.js';
import { problemFor, problemMediaType, problemOf } from './problem.js';

/**
 * Connection limits of a listener (profile `server.http` / `server.https`): the connection
 * slots of {@link ConnectionSlotLimits} (256 in all, 32 per address off this machine, an eighth
 * kept for loopback peers) and the timeouts.
 */
export interface ConnectionLimits extends ConnectionSlotLimits {
  /** Time a client has to send the request headers, ms. Default 10000. */
  headersTimeoutMs?: number;
  /** Time a client has to send the whole request, ms. Default 30000. */
  requestTimeoutMs?: number;
}

/** Node server options for `limits`; {@link watchServer} applies the rest once created. */
export function serverOptions(limits: ConnectionLimits): ServerOptions {
  const headersTimeout = limits.headersTimeoutMs ?? 10_000;
  const requestTimeout = limits.requestTimeoutMs ?? 30_000;
  return {
    headersTimeout,
    requestTimeout,
    // Node checks these timeouts only every connectionsCheckingInterval (30 s by default), so a
    // short timeout would be overrun by up to 30 s; half the shorter one keeps the overrun small.
    connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(headersTimeout / 2))),
    // Node would answer a missing Host with a bare 400; {@link guardRequests} answers a problem.
    requireHostHeader: false,
  };
}

/**
 * Wraps the app's handler with what node checks itself when left to it, answered as problem
 * documents instead of bare statuses: an HTTP/1.1 request without a Host header (RFC 9112
 * §3.2) gets 400 and the connection closes.
 */
export function guardRequests(handler: RequestListener): RequestListener {
  return (request, response) => {
    if (request.httpVersionMajor === 1 && request.httpVersionMinor === 1 && !request.headers.host) {
      answerEarly(
        request,
        response,
        new RequestError('bad-request', 400, 'An HTTP/1.1 request needs a Host header.'),
      );
      return;
    }
    handler(request, response);
  };
}

// A problem answered with node's response object, before the app: no body read, so close.
function answerEarly(
  request: IncomingMessage,
  response: ServerResponse,
  error: RequestError,
): void {
  const path = (request.url ?? '/').split('?')[0] ?? '/';
  const body = JSON.stringify(problemFor(error, path.slice(0, 300)));
  response.shouldKeepAlive = false;
  response.writeHead(error.status, {
    'Content-Type': problemMediaType,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    Connection: 'close',
  });
  response.end(body);
}

/**
 * Sets the connection limits (connection-slots.ts) and keep-alive, and answers the requests
 * node refuses before the app sees them (see {@link answerClientError}).
 */
export function watchServer(server: Server, limits: ConnectionLimits, logger: Logger): void {
  guardConnectionSlots(server, limits, logger);
  server.keepAliveTimeout = 5_000;
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) =>
    answerClientError(error, socket, logger),
  );
  // Only `Expect: 100-continue` means something to node; it would answer any other bare 417.
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
    answerEarly(
      request,
      response,
      new RequestError(
        'expectation-failed',
        417,
        `The expectation '${String(request.headers.expect).slice(0, 100)}' is not supported; only 100-continue is.`,
      ),
    ),
  );
}

/**
 * Answers a request node's HTTP parser refused, or one that timed out, with a problem document
 * instead of node's bare status line: 431 `headers-too-large` for headers over the limit, 408
 * `request-timeout`, 400 `bad-request` for anything else unparsable. Written only while the
 * socket is writable and no response has started on it (else the bytes would corrupt that
 * response); the connection is closed either way, as the parser cannot resynchronise.
 */
export function answerClientError(
  error: Error & { code?: string },
  socket: Duplex,
  logger: Logger,
): void {
  // The HTTPS server reports its TLS failures (handshake timeout, bad hello) here too, and
  // leaves closing the socket to this listener: no HTTP can be spoken on it.
  const http = error.code?.startsWith('HPE_') || error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  if (!http) {
    socket.destroy();
    return;
  }
  logger.debug(
    { code: error.code, remoteAddress: (socket as { remoteAddress?: string }).remoteAddress },
    'request refused before routing',
  );
  // node's own condition: the response in flight on this socket (keep-alive) has sent nothing.
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const problem = problemOf(clientErrorOf(error));
  const body = JSON.stringify(problem);
  const head = [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? problem.title}`,
    `Content-Type: ${problemMediaType}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'Connection: close',
  ].join('\r\n');
  // Destroyed once written: waiting for the client to close would let it hold the slot. A
  // client that does not read at all cannot hold it either: the answer is dropped after 5 s.
  const stuck = setTimeout(() => socket.destroy(), 5_000);
  stuck.unref();
  socket.once('close', () => clearTimeout(stuck));
  socket.end(`${head}\r\n\r\n${body}`, () => socket.destroy());
}

function clientErrorOf(error: Error & { code?: string }): RequestError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new RequestError(
        'headers-too-large',
        431,
        `The request headers are over the limit of ${maxHeaderSize / 1024} KiB.`,
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestError(
        'request-timeout',
        408,
        'The request did not arrive completely in time; the connection is closed.',
      );
    default:
      return new RequestError(
        'bad-request',
        400,
        `The request is not valid HTTP/1.1${error.code ? ` (${error.code})` : ''}.`,
      );
  }
}

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

/** What every listener is told, besides its connection limits. */
export interface ListenerOptions extends ConnectionLimits {
  /** Address to bind, e.g. `127.0.0.1`, or `0.0.0.0` for every IPv4 interface. */
  host: string;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Request handler, e.g. `app.callback()`. */
  handler: RequestListener;
  logger: Logger;
  /** How long stop() lets open requests finish before closing their sockets, ms. Default 3000. */
  drainMs?: number;
  /** Names what listens in the log line, e.g. `Extensions server`. Default `API`. */
  label?: string;
}

/**
 * A listener and the server it bound. Starting is each kind's own (the plain listener's
 * loopback rule, the TLS listener's files); stopping and naming the address are the same.
 */
export abstract class BoundListener {
  protected server: Server | undefined;

  protected constructor(
    private readonly scheme: 'http' | 'https',
    private readonly drainMs: number | undefined,
  ) {}

  /** Binds the port. Idempotent. @throws ListenerError when the port cannot be bound. */
  abstract start(): Promise<void>;

  /** Stops accepting, lets open requests finish within `drainMs`, then closes. Idempotent. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await closeServer(server, this.drainMs ?? 3_000);
  }

  /** The bound address as a URL, e.g. `http://127.0.0.1:8080`; undefined while stopped. */
  url(): string | undefined {
    return serverUrl(this.server, this.scheme);
  }
}
