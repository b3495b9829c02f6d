/**
 * The close of a connection whose request body was answered before it was read to its end (a
 * body over the route's limit, a caller refused before its body was read, a 404): a lingering
 * close, as RFC 9112 §9.6 asks of a server.
 *
 * Node ends such a connection, once the answer is written, with `socket.destroySoon()`: a FIN,
 * then the socket destroyed as soon as the FIN is out. The client is usually still sending its
 * body; bytes that arrive at (or are still unread in) a closed socket make the kernel answer
 * with a reset, and a reset can destroy the answer in the client's receive buffer before the
 * client reads it: a client that reads only once it has sent its request (most do) sees
 * ECONNRESET instead of the 413 it was sent. So here the answer is followed by the FIN alone (a
 * half-close), the rest of the request is read and thrown away, and the socket is destroyed
 * once the client has ended its side, or at the first bound: {@link LingerLimits}.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Clock, systemClock } from '../clock.js';
import { hasBody } from './unread-bodies.js';

/** Bounds of a lingering close: past either, the socket is destroyed (the client may see a reset). */
export interface LingerLimits {
  /** Most bytes read and discarded after the answer; default 16 MiB. Nothing is kept. */
  maxBytes: number;
  /** Longest time the connection lingers, ms from the answer; default 5000. */
  maxMs: number;
  /** Timers; default the system clock. */
  clock?: Clock;
}

/**
 * Default bounds: 16 MiB (the largest body a route takes, so a client that sent a little over
 * any limit still reads its 413) and 5 s (a client on a slow link gets its answer too; a
 * client that keeps sending holds the connection no longer).
 */
export const defaultLingerLimits: LingerLimits = { maxBytes: 16 * 1024 * 1024, maxMs: 5_000 };

/** Sockets already lingering: a second call for one of them changes nothing. */
const lingering = new WeakSet<object>();

/**
 * True when `request` announced a body whose end has not arrived: the answer is given (or was)
 * with the body left unread, and the connection must close with {@link closeAfterAnswer}.
 */
export function bodyLeftUnread(request: IncomingMessage): boolean {
  // `complete` first: the one test every request without a body (every GET) pays.
  return !request.complete && hasBody(request);
}

/**
 * Makes the answer to `request` the last on its connection (`Connection: close`, when its
 * headers are not sent yet) and closes the connection by lingering: the answer, a FIN, then
 * whatever the client still sends is read and discarded, counted but never kept, until the
 * client ends its side (the socket then closes at once), `limits.maxBytes` have been discarded
 * or `limits.maxMs` have passed (the socket is destroyed). Call it before or after the answer is
 * written; idempotent per connection.
 */
export function closeAfterAnswer(
  request: IncomingMessage,
  response: ServerResponse,
  limits: LingerLimits = defaultLingerLimits,
): void {
  const socket = request.socket;
  if (socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  if (!response.headersSent) response.setHeader('Connection', 'close');
  // Node calls destroySoon() once the last answer is written (http server, resOnFinish): an
  // end() alone here, so the client reads the answer then our FIN. The socket ends when both
  // sides have (net.Socket destroys itself then), or at a bound below.
  (socket as { destroySoon?: () => void }).destroySoon = () => {
    socket.end();
  };
  const clock = limits.clock ?? systemClock;
  const timer = clock.setTimeout(() => socket.destroy(), limits.maxMs);
  socket.once('close', () => clock.clearTimer(timer));
  // The rest of the body is read off the wire, counted and dropped. Counted on the request, not
  // the socket: a 'data' listener on the socket would take it from node's HTTP parser, which
  // reads it natively. A body the parser refused is left paused (and a compressed one piped
  // into its decoder, which would pause it again): a paused body stops the socket.
  let discarded = 0;
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > limits.maxBytes) socket.destroy();
  });
  request.unpipe();
  request.resume();
}
