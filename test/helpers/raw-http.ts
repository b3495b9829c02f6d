/**
 * HTTP/1.1 spoken by hand over a socket, for what fetch cannot send (a garbage request line,
 * headers over the limit, half a request) or cannot show (whether the server closed the
 * connection, several requests on one connection under our control).
 */
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** A response as read off the wire. */
export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

/** Opens a TCP connection to `url`'s host and port; resolves once connected. */
export function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Resolves once `socket` has closed (for whatever reason). */
export function closed(socket: Duplex): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) resolve();
    socket.on('error', () => undefined);
    socket.once('close', () => resolve());
  });
}

/**
 * Writes `bytes` and collects everything the server sends until it closes the connection.
 * @returns the bytes received as latin1 text (empty when the server closed without a word).
 */
export async function sendUntilClosed(socket: Duplex, bytes: string | Buffer): Promise<string> {
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = closed(socket);
  socket.write(bytes);
  await done;
  return Buffer.concat(chunks).toString('latin1');
}

/** Parses one complete response (head and a Content-Length body) from `text`. */
export function parseResponse(text: string): RawResponse & { rest: string } {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no complete response head in ${JSON.stringify(text)}`);
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const bodyStart = end + 4;
  const body = Buffer.from(text.slice(bodyStart), 'latin1').subarray(0, length).toString('utf8');
  const rest = text.slice(bodyStart + Buffer.byteLength(body));
  return { status, headers, body, rest };
}

/**
 * Sends `GET path` on a kept-alive connection and resolves with the response, leaving the
 * connection open for the next request. Rejects if the connection closes first.
 */
export function getOn(socket: Duplex, path: string, host = 'localhost'): Promise<RawResponse> {
  return answerTo(
    socket,
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`,
  );
}

/** What {@link uploadThenRead} saw. */
export interface UploadResult {
  /** Everything the server sent, as latin1 text. */
  text: string;
  /** Body bytes the socket accepted before writing ended or failed. */
  written: number;
  /** The socket's error code, if any (`ECONNRESET`, `EPIPE`): a reset can destroy the answer. */
  error?: string;
}

/**
 * Sends `head`, then a body of `bodyBytes` bytes ('a's, 64 KiB at a time; chunk-framed when
 * `chunked`), and reads nothing until the whole body is written or writing failed, the way most
 * clients send a request; then reads what the server sent until the connection closes.
 * @param target the server's URL (plain TCP), or a function opening the connection (TLS).
 */
export function uploadThenRead(
  target: string | (() => Duplex),
  head: string,
  bodyBytes: number,
  options: { chunked?: boolean } = {},
): Promise<UploadResult> {
  return new Promise((resolve) => {
    const socket = typeof target === 'string' ? connectTo(target) : target();
    // Paused before it connects: nothing is read off the wire until the upload is over.
    socket.pause();
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let written = 0;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (failure: Error & { code?: string }) => {
      error ??= failure.code ?? failure.message;
      socket.resume();
    });
    socket.once('close', () =>
      resolve({
        text: Buffer.concat(chunks).toString('latin1'),
        written,
        ...(error ? { error } : {}),
      }),
    );
    const slice = Buffer.alloc(64 * 1024, 'a');
    socket.write(head);
    let left = bodyBytes;
    const pump = () => {
      while (left > 0 && !socket.destroyed) {
        const piece = slice.subarray(0, Math.min(slice.length, left));
        left -= piece.length;
        const framed = options.chunked
          ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, crlf])
          : piece;
        const more = socket.write(framed, (failed) => {
          if (!failed) written += piece.length;
        });
        if (!more) {
          socket.once('drain', pump);
          return;
        }
      }
      if (socket.destroyed) return;
      // Written (handed to the kernel): now the answer is read.
      socket.write(options.chunked ? '0\r\n\r\n' : '', () => socket.resume());
    };
    pump();
  });
}

const crlf = Buffer.from('\r\n');

function connectTo(url: string): Socket {
  const { hostname, port } = new URL(url);
  return connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
}

/**
 * Writes `bytes` (a request, or only its start) on `socket` and resolves with the first complete
 * response (its head and Content-Length body), whether or not the request was all sent. Rejects
 * if the connection closes first.
 */
export function answerTo(socket: Duplex, bytes: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (Buffer.byteLength(text, 'latin1') < end + 4 + length) return;
      cleanup();
      resolve(parseResponse(text));
    };
    const onClose = () => {
      cleanup();
      reject(new Error(`the connection closed before the response; got ${JSON.stringify(text)}`));
    };
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('close', onClose);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(bytes);
  });
}
