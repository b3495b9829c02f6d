import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import { HttpListener, type HttpListenerOptions, isLoopback } from '../../src/api/http-listener.js';
import { profileSchema } from '../../src/profile/schema.js';
import { captureLogs } from '../helpers/log-capture.js';
import { closed, getOn, openSocket, parseResponse, sendUntilClosed } from '../helpers/raw-http.js';

const handler = (_request: unknown, response: { end: (body: string) => void }) =>
  response.end('ok');

test('loopback addresses are recognised', (t) => {
  for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) t.true(isLoopback(host), host);
  for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.10', 'plc.local', '128.0.0.1']) {
    t.false(isLoopback(host), host);
  }
});

test('plain HTTP on a non-loopback address is refused without allowInsecure', async (t) => {
  const listener = new HttpListener({
    host: '0.0.0.0',
    port: 0,
    handler,
    logger: pino({ level: 'silent' }),
  });
  const error = await t.throwsAsync(() => listener.start());
  t.is((error as { code?: string }).code, 'listener-failed');
  t.regex(error?.message ?? '', /allowInsecure/);
  t.is(listener.url(), undefined, 'nothing is listening');
});

test('allowInsecure permits a non-loopback address and logs a warning', async (t) => {
  const { logger, lines } = captureLogs();
  const listener = new HttpListener({
    host: '0.0.0.0',
    port: 0,
    allowInsecure: true,
    handler,
    logger,
  });
  await listener.start();
  t.teardown(() => listener.stop());
  t.truthy(listener.url());
  t.true(lines.some((line) => line.level === 40 && /in clear/.test(String(line.msg))));
});

test('a port in use is reported as a listener error', async (t) => {
  const logger = pino({ level: 'silent' });
  const first = new HttpListener({ host: '127.0.0.1', port: 0, handler, logger });
  await first.start();
  t.teardown(() => first.stop());
  const port = Number(new URL(first.url() as string).port);
  const second = new HttpListener({ host: '127.0.0.1', port, handler, logger });
  const error = await t.throwsAsync(() => second.start());
  t.is((error as { code?: string }).code, 'listener-failed');
  t.regex(error?.message ?? '', new RegExp(`127\\.0\\.0\\.1:${port}`));
});

test('stop closes the port and is idempotent', async (t) => {
  const listener = new HttpListener({
    host: '127.0.0.1',
    port: 0,
    handler,
    logger: pino({ level: 'silent' }),
  });
  await listener.start();
  const url = listener.url() as string;
  t.is(await (await fetch(url)).text(), 'ok');
  await listener.stop();
  await listener.stop();
  await t.throwsAsync(() => fetch(url));
});

async function startedHttp(
  t: ExecutionContext,
  options: Partial<HttpListenerOptions> = {},
): Promise<string> {
  const listener = new HttpListener({
    host: '127.0.0.1',
    port: 0,
    handler,
    logger: pino({ level: 'silent' }),
    ...options,
  });
  await listener.start();
  t.teardown(() => listener.stop());
  return listener.url() as string;
}

/** Checks a problem document answered by the listener itself, before any route. */
function assertEarlyProblem(
  t: ExecutionContext,
  text: string,
  status: number,
  code: string,
  detail: RegExp,
) {
  const response = parseResponse(text);
  t.is(response.status, status, text);
  t.is(response.headers['content-type'], 'application/problem+json');
  t.is(response.headers.connection, 'close');
  t.is(response.rest, '', 'one response, then the connection closed');
  const problem = JSON.parse(response.body);
  t.deepEqual(Object.keys(problem).sort(), ['code', 'detail', 'status', 'title', 'type']);
  t.is(problem.type, `urn:tagd:problem:${code}`);
  t.is(problem.status, status);
  t.is(problem.code, code);
  t.regex(problem.detail, detail);
}

test('headers over 16 KiB are answered 431 with a problem document, then closed', async (t) => {
  const url = await startedHttp(t);
  const socket = await openSocket(url);
  const text = await sendUntilClosed(
    socket,
    `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Filler: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
  );
  assertEarlyProblem(t, text, 431, 'headers-too-large', /over the limit of 16 KiB/);
  t.is(JSON.parse(parseResponse(text).body).title, 'Request Header Fields Too Large');
});

test('a garbage request line is answered 400 with a problem document, then closed', async (t) => {
  const url = await startedHttp(t);
  for (const garbage of [
    'HELLO THERE\r\n\r\n',
    'GET / HTTP/9.9\r\n\r\n',
    '\x16\x03\x01\x02\x00\x01',
  ]) {
    const socket = await openSocket(url);
    const text = await sendUntilClosed(socket, Buffer.from(garbage, 'latin1'));
    assertEarlyProblem(t, text, 400, 'bad-request', /^The request is not valid HTTP\/1\.1/);
  }
});

test('an HTTP/1.1 request without Host gets 400 and an Expect other than 100-continue 417, as problems', async (t) => {
  const url = await startedHttp(t);
  const noHost = parseResponse(
    await sendUntilClosed(await openSocket(url), 'GET /healthz?x=1 HTTP/1.1\r\n\r\n'),
  );
  t.is(noHost.status, 400);
  t.is(noHost.headers['content-type'], 'application/problem+json');
  t.is(noHost.headers.connection, 'close');
  t.like(JSON.parse(noHost.body), {
    code: 'bad-request',
    instance: '/healthz',
    detail: 'An HTTP/1.1 request needs a Host header.',
  });

  const expect = parseResponse(
    await sendUntilClosed(
      await openSocket(url),
      'POST / HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nContent-Length: 2\r\n\r\n{}',
    ),
  );
  t.is(expect.status, 417);
  t.is(expect.headers['content-type'], 'application/problem+json');
  t.like(JSON.parse(expect.body), { code: 'expectation-failed', title: 'Expectation Failed' });

  const http10 = await sendUntilClosed(await openSocket(url), 'GET / HTTP/1.0\r\n\r\n');
  t.is(parseResponse(http10).status, 200, 'HTTP/1.0 needs no Host');
  t.true(http10.endsWith('\r\n\r\nok'), http10);
});

test('garbage after an answered request on a kept-alive connection gets its own 400', async (t) => {
  const url = await startedHttp(t);
  const socket = await openSocket(url);
  const first = await getOn(socket, '/');
  t.is(first.status, 200);
  t.is(first.body, 'ok');
  const text = await sendUntilClosed(socket, 'NOT HTTP AT ALL\r\n\r\n');
  assertEarlyProblem(t, text, 400, 'bad-request', /not valid HTTP/);
});

test('a request that does not arrive within headersTimeoutMs is answered 408, then closed', async (t) => {
  const url = await startedHttp(t, { headersTimeoutMs: 200, requestTimeoutMs: 200 });
  const socket = await openSocket(url);
  const began = performance.now();
  // Half a request head, and then nothing.
  const text = await sendUntilClosed(socket, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
  t.true(performance.now() - began >= 190, 'not before the timeout');
  assertEarlyProblem(t, text, 408, 'request-timeout', /did not arrive completely in time/);
});

test('connections over maxConnections are closed on arrival; the open ones keep working', async (t) => {
  const { logger, lines } = captureLogs();
  const url = await startedHttp(t, { maxConnections: 2, logger });
  const first = await openSocket(url);
  const second = await openSocket(url);
  t.teardown(() => {
    first.destroy();
    second.destroy();
  });
  t.is((await getOn(first, '/')).status, 200);
  t.is((await getOn(second, '/')).status, 200);

  for (let extra = 0; extra < 3; extra += 1) {
    const third = await openSocket(url);
    t.is(await sendUntilClosed(third, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n'), '');
  }
  t.is((await getOn(first, '/')).body, 'ok', 'the first connection still works');
  t.is((await getOn(second, '/')).body, 'ok', 'the second too');
  const warnings = lines.filter((line) => /too many open connections/.test(String(line.msg)));
  t.is(warnings.filter((line) => line.level === 40).length, 1, 'one warning per start');
  t.is(warnings[0]?.maxConnections, 2);

  // A freed slot takes a new connection. The server learns of the close asynchronously, so
  // retry until it has (each attempt waits for its own answer or close).
  first.destroy();
  await closed(first);
  const deadline = performance.now() + 30_000;
  let served = false;
  while (!served && performance.now() < deadline) {
    const next = await openSocket(url);
    served = await getOn(next, '/').then(
      () => true,
      () => false,
    );
    next.destroy();
  }
  t.true(served, 'a connection is accepted again once one has closed');
});

test('the profile section server.http: connection limits with defaults', (t) => {
  t.deepEqual(profileSchema.parse({}).server.http, {
    host: '127.0.0.1',
    port: 8080,
    allowInsecure: false,
    maxConnections: 256,
    maxConnectionsPerAddress: 32,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
  });
  const paths = (http: unknown) => {
    const result = profileSchema.safeParse({ server: { http } });
    return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
  };
  t.deepEqual(paths({ maxConnections: 0 }), ['server.http.maxConnections']);
  t.deepEqual(paths({ headersTimeoutMs: 50, requestTimeoutMs: 4_000_000 }), [
    'server.http.headersTimeoutMs',
    'server.http.requestTimeoutMs',
  ]);
  t.deepEqual(paths({ headersTimeoutMs: 20_000, requestTimeoutMs: 15_000 }), [
    'server.http.headersTimeoutMs',
  ]);
});
