import test from 'ava';
import { pino } from 'pino';
import { HttpListener, isLoopback } from '../../src/api/http-listener.js';
import { captureLogs } from '../helpers/log-capture.js';

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
