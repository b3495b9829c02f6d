import { connect } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import { createApp } from '../../src/api/app.js';
import { HttpListener } from '../../src/api/http-listener.js';
import { maxBodyBytes } from '../../src/api/json-bodies.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { parseResponse } from '../helpers/raw-http.js';

// The API app behind the real listener: the answer and the way the connection ends are what
// a client sees.
async function startedApp(t: ExecutionContext): Promise<number> {
  const logger = pino({ level: 'silent' });
  const app = createApp({
    store: new TagStore({}),
    logger,
    version: '0.0.0-test',
    now: Date.now,
  } as unknown as Parameters<typeof createApp>[0]);
  const listener = new HttpListener({
    host: '127.0.0.1',
    port: 0,
    handler: app.callback(),
    logger,
  });
  await listener.start();
  t.teardown(() => listener.stop());
  return Number(new URL(listener.url() as string).port);
}

/**
 * Sends `head` then `bodyBytes` bytes of body, reads until the server closes, and returns what
 * arrived (latin1) and the socket error, if any (a reset loses the rest of the answer).
 */
function exchange(
  port: number,
  head: string,
  bodyBytes: number,
): Promise<{ text: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (failure: Error & { code?: string }) => {
      error = failure.code ?? failure.message;
    });
    socket.on('close', () =>
      resolve({ text: Buffer.concat(chunks).toString('latin1'), ...(error ? { error } : {}) }),
    );
    socket.write(head);
    socket.write(Buffer.alloc(bodyBytes, 'a'));
  });
}

const getWithBody = (path: string, bytes: number, connection = 'close') =>
  `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: ${connection}\r\nContent-Type: text/plain\r\nContent-Length: ${bytes}\r\n\r\n`;

test('a GET with a body up to the limit on a large Swagger asset gets the whole file', async (t) => {
  const port = await startedApp(t);
  const plain = await fetch(`http://127.0.0.1:${port}/swagger/swagger-ui-bundle.js`);
  const expected = Buffer.from(await plain.arrayBuffer()).length;
  t.true(expected > 1_000_000, 'the bundle is over a megabyte');
  // The reported range: bodies of 100–262 kB cut the answer short or reset it.
  for (const bytes of [100_000, 200_000, maxBodyBytes]) {
    const { text, error } = await exchange(
      port,
      getWithBody('/swagger/swagger-ui-bundle.js', bytes),
      bytes,
    );
    t.is(error, undefined, `${bytes}: no reset`);
    const response = parseResponse(text);
    t.is(response.status, 200, `${bytes}`);
    t.is(Number(response.headers['content-length']), expected);
    t.is(Buffer.byteLength(text, 'latin1') - text.indexOf('\r\n\r\n') - 4, expected, `${bytes}`);
  }
});

test('a GET body over the limit is 413 payload-too-large', async (t) => {
  const port = await startedApp(t);
  const bytes = maxBodyBytes + 1;
  const { text } = await exchange(port, getWithBody('/swagger/swagger-ui-bundle.js', bytes), bytes);
  const response = parseResponse(text);
  t.is(response.status, 413);
  t.is(response.headers['content-type'], 'application/problem+json');
  const problem = JSON.parse(response.body);
  t.is(problem.code, 'payload-too-large');
  t.is(problem.instance, '/swagger/swagger-ui-bundle.js');
  t.regex(problem.detail, /262144 bytes/);
});

test('a body sent with GET is read to its end: the next request on the connection is answered', async (t) => {
  const port = await startedApp(t);
  // Keep-alive: the body must be consumed, not taken for the next request's head.
  const bytes = 150_000;
  const second = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n';
  const text = await new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(getWithBody('/swagger/swagger-initializer.js', bytes, 'keep-alive'));
    socket.write(Buffer.alloc(bytes, 'a'));
    socket.write(second);
  });
  const first = parseResponse(text);
  t.is(first.status, 200);
  t.regex(first.body, /SwaggerUIBundle/);
  const next = parseResponse(first.rest);
  t.is(next.status, 200);
  t.regex(next.body, /"status"/);
});
