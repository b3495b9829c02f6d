/**
 * The body of a request whose method takes none (GET, HEAD, DELETE, OPTIONS…): no route reads
 * it, so it is read and thrown away before the route runs, up to {@link maxBodyBytes}. Left
 * unread, node closes a `Connection: close` socket with the body's bytes still arriving, the
 * kernel answers them with a reset, and a large answer (the 1.7 MB Swagger UI bundle) is cut off
 * at the client. A body over the limit is 413 `payload-too-large`, as for a JSON body; its rest
 * is left unread and the connection closes after the answer (lingering-close.ts).
 */
import type { IncomingMessage } from 'node:http';
import { RequestError } from '../errors.js';

/** True when `request` announces a body: a Content-Length above 0, or a Transfer-Encoding. */
export function hasBody(request: IncomingMessage): boolean {
  const { headers } = request;
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0';
}

/**
 * Reads `request`'s body to its end and discards it.
 * @param maxBytes most bytes read; beyond, the reading stops.
 * @throws RequestError 413 `payload-too-large` over `maxBytes`; 400 `bad-request` when the
 *   body breaks off (the client closed or aborted).
 */
export function discardBody(request: IncomingMessage, maxBytes: number): Promise<void> {
  const tooLarge = () =>
    new RequestError(
      'payload-too-large',
      413,
      `The request body is larger than ${maxBytes} bytes (a ${request.method} request's body is not used).`,
    );
  // Announced too large: refused before a byte is read.
  if (Number(request.headers['content-length']) > maxBytes) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    let received = 0;
    const cleanup = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) {
        cleanup();
        // Paused, so no more is read for a body that will not be used.
        request.pause();
        reject(tooLarge());
      }
    };
    const onEnd = () => {
      cleanup();
      resolve();
    };
    const broken = () =>
      new RequestError('bad-request', 400, 'The request body broke off before its end.');
    const onError = () => {
      cleanup();
      reject(broken());
    };
    const onAborted = () => {
      cleanup();
      reject(broken());
    };
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('error', onError);
    request.once('aborted', onAborted);
  });
}
