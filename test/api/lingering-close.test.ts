import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { maxBodyBytes } from '../../src/api/json-bodies.js';
import { closeAfterAnswer, type LingerLimits } from '../../src/api/lingering-close.js';
import { startApi } from '../helpers/api-harness.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { closed, parseResponse, uploadThenRead } from '../helpers/raw-http.js';

/**
 * Larger than what the kernel buffers between a client and a server that stops reading (a few
 * MiB on loopback): a server that stops reading such a body leaves its client stuck in the
 * upload, and the client reads the answer only if the server keeps reading.
 */
const hugeBody = 12 * 1024 * 1024;
const mib = 1024 * 1024;

const signIn = (framing: string) =>
  `POST /api/v2/Users/Authenticate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`;

test('a client that reads only once it has sent a 12 MiB body gets its 413, then the connection ends without a reset', async (t) => {
  const api = await startApi(t);
  for (const [name, head, chunked] of [
    ['chunked', signIn('Transfer-Encoding: chunked'), true],
    ['declared length', signIn(`Content-Length: ${hugeBody}`), false],
  ] as const) {
    const result = await uploadThenRead(api.baseUrl, head, hugeBody, { chunked });
    t.is(result.error, undefined, `${name}: no reset`);
    t.is(result.written, hugeBody, `${name}: the whole body was taken (and thrown away)`);
    const answer = parseResponse(result.text);
    t.is(answer.status, 413, name);
    t.is(answer.headers['content-type'], 'application/problem+json');
    t.is(answer.headers.connection, 'close', `${name}: the client knows the connection ends`);
    const problem = JSON.parse(answer.body);
    t.is(problem.code, 'payload-too-large');
    t.is(
      problem.detail,
      `The request body is larger than ${maxBodyBytes} bytes (256 KiB), this route's limit.`,
    );
  }
  // The daemon is fine and keeps answering.
  t.is((await api.request('/healthz')).status, 200);
});

/** A bare node:http server answering 413 without reading, with these linger limits. */
async function refusingServer(
  t: ExecutionContext,
  limits: LingerLimits,
): Promise<{ url: string; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((request, response) => {
    closeAfterAnswer(request, response, limits);
    response.writeHead(413, { 'Content-Type': 'text/plain', 'Content-Length': 2 });
    response.end('no');
  });
  server.on('connection', (socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, sockets };
}

const upload = (bytes: number) =>
  `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${bytes}\r\n\r\n`;

/**
 * Opens a connection, sends `head` and `bodyBytes` of body, and resolves with the answer. The
 * client's side stays open after the server's FIN (allowHalfOpen), as a client still uploading.
 */
async function answeredUpload(
  url: string,
  head: string,
  bodyBytes: number,
): Promise<{ socket: Socket; text: string }> {
  const { port } = new URL(url);
  const socket = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
  socket.on('error', () => undefined);
  let text = '';
  const answered = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\nno')) resolve();
    });
  });
  socket.write(head);
  socket.write(Buffer.alloc(bodyBytes, 'a'));
  await answered;
  return { socket, text };
}

test('the discarded rest of a body is bounded: past maxBytes the connection is destroyed', async (t) => {
  const clock = new ManualClock();
  const { url, sockets } = await refusingServer(t, { maxBytes: mib, maxMs: 60_000, clock });
  const result = await uploadThenRead(url, upload(hugeBody), hugeBody);
  t.truthy(result.error, 'the client past the bound is reset');
  t.true(result.written < hugeBody, 'and could not send it all');
  const [socket] = sockets;
  t.true(socket?.destroyed);
  // What the server read: the head, the bound and at most one more read of 64 KiB.
  t.true((socket?.bytesRead ?? Infinity) <= mib + 128 * 1024, `${socket?.bytesRead} bytes read`);
  t.is(clock.pendingTimers(), 0, 'no timer left behind');
});

test('a client that stops sending is cut off at maxMs after the answer, which it has read', async (t) => {
  const clock = new ManualClock();
  const { url, sockets } = await refusingServer(t, { maxBytes: mib, maxMs: 5_000, clock });
  const { socket, text } = await answeredUpload(url, upload(mib), 1024);
  const answer = parseResponse(text);
  t.is(answer.status, 413);
  t.is(answer.headers.connection, 'close');
  const [server] = sockets;
  clock.advance(4_999);
  t.false(server?.destroyed, 'still lingering');
  const gone = closed(server as Socket);
  clock.advance(1);
  t.true(server?.destroyed, 'destroyed at the bound');
  await gone;
  t.is(clock.pendingTimers(), 0);
  socket.destroy();
});

test('a client that ends its side after the answer closes the connection at once', async (t) => {
  const clock = new ManualClock();
  const { url, sockets } = await refusingServer(t, { maxBytes: mib, maxMs: 5_000, clock });
  const { socket } = await answeredUpload(url, upload(mib), 1024);
  const [server] = sockets;
  const serverClosed = closed(server as Socket);
  socket.end();
  await Promise.all([closed(socket), serverClosed]);
  t.is(clock.pendingTimers(), 0, 'closed by the client, not the timer');
});

test('real time: a stalled client is cut off after maxMs', async (t) => {
  const { url, sockets } = await refusingServer(t, { maxBytes: mib, maxMs: 300 });
  const { socket } = await answeredUpload(url, upload(mib), 1024);
  const answeredAt = performance.now();
  await closed(sockets[0] as Socket);
  const lingered = performance.now() - answeredAt;
  socket.destroy();
  // Timers never fire early; the answer reached the client after the timer was set, so allow
  // a little less than 300 ms, and a busy machine's worth more.
  t.true(lingered >= 250, `${lingered} ms`);
  t.true(lingered < 30_000, `${lingered} ms`);
});
