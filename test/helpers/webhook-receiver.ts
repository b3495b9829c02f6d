import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { gunzipSync } from 'node:zlib';
import type { ExecutionContext } from 'ava';
import { until, untilTimeoutMs } from './until.js';

/** One request as the receiver got it. */
export interface ReceivedRequest {
  method: string;
  /** Path and query. */
  url: string;
  /** Header names in lower case, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** The body bytes as sent (still gzipped when `content-encoding: gzip`). */
  raw: Buffer;
  /** The body as text, gunzipped when it was sent gzipped. */
  text: string;
  /** `text` parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  /** performance.now() when the request arrived (its headers), ms. */
  at: number;
  /** The reply given. */
  reply: Reply;
}

/**
 * How the receiver answers a request: an HTTP status (with optional headers), `hang` (read the
 * request, never answer), or `reset` (read the request, then destroy the connection).
 */
export type Reply =
  | number
  | { status: number; headers?: Record<string, string> }
  | 'hang'
  | 'reset';

/** Options of {@link startReceiver}. */
export interface ReceiverOptions {
  /** Serve HTTPS with this certificate and key (PEM). Default: plain HTTP. */
  tls?: { cert: Buffer | string; key: Buffer | string };
  /** Port to listen on. Default: any free port. */
  port?: number;
  /** Start down: the port is reserved, then released, so connecting is refused until up(). */
  down?: boolean;
}

/** A webhook receiver on 127.0.0.1 that records every request and answers as scripted. */
export interface WebhookReceiver {
  /** `http(s)://127.0.0.1:<port>/hook`. */
  url: string;
  port: number;
  /** Every request received, in arrival order. */
  requests: ReceivedRequest[];
  /** Queues the answers of the next requests, in order; after them `defaultReply` is used. */
  script(...replies: Reply[]): void;
  /** The answer when the script is empty. Default: 200. */
  defaultReply: Reply;
  /**
   * Resolves once `count` requests have arrived (and their bodies were read); `timeoutMs` is a
   * safety net (default {@link untilTimeoutMs}, 60 s), not a timing assertion.
   */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Stops listening and drops every connection: connecting is refused. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** Stops for good (also done at test end). */
  close(): Promise<void>;
}

/** Starts a receiver; it is closed when the test ends. */
export async function startReceiver(
  t: ExecutionContext,
  options: ReceiverOptions = {},
): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const queue: Reply[] = [];
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = options.port ?? 0;
  let listening = false;

  const receiver: WebhookReceiver = {
    url: '',
    port: 0,
    requests,
    defaultReply: 200,
    script: (...replies) => {
      queue.push(...replies);
    },
    async waitForRequests(count, timeoutMs = untilTimeoutMs) {
      await until(() => requests.length >= count, `${count} requests`, timeoutMs);
      return requests.slice(0, count);
    },
    async down() {
      if (!listening || server === undefined) return;
      const closing = server;
      listening = false;
      await new Promise<void>((resolve) => {
        closing.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
    async up() {
      if (listening) return;
      server = makeServer();
      await listen(server);
    },
    async close() {
      await receiver.down();
    },
  };

  function makeServer(): Server {
    const handler = (request: IncomingMessage, response: ServerResponse) => {
      const at = performance.now();
      const reply = queue.shift() ?? receiver.defaultReply;
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks);
        let text: string;
        try {
          text =
            request.headers['content-encoding'] === 'gzip'
              ? gunzipSync(raw).toString('utf8')
              : raw.toString('utf8');
        } catch {
          text = '';
        }
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        requests.push({
          method: request.method ?? '',
          url: request.url ?? '',
          headers: request.headers,
          raw,
          text,
          json,
          at,
          reply,
        });
        if (reply === 'hang') return;
        if (reply === 'reset') {
          request.socket.destroy();
          return;
        }
        const { status, headers } = typeof reply === 'number' ? { status: reply } : reply;
        response.writeHead(status, { 'content-type': 'text/plain', ...headers });
        response.end(`status ${status}`);
      });
    };
    const created = options.tls
      ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler)
      : createHttpServer(handler);
    created.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    // For HTTPS too, 'connection' hands over the TCP socket, so down() can cut TLS sessions.
    return created;
  }

  async function listen(target: Server): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      target.once('error', reject);
      target.listen(port, '127.0.0.1', () => {
        target.off('error', reject);
        resolve();
      });
    });
    port = (target.address() as AddressInfo).port;
    listening = true;
    receiver.port = port;
    receiver.url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}/hook`;
  }

  server = makeServer();
  await listen(server);
  if (options.down) await receiver.down();
  t.teardown(() => receiver.close());
  return receiver;
}
