import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import Koa from 'koa';
import { pino } from 'pino';
import { problemMiddleware } from '../../src/api/problem.js';
import { parseRequestPath } from '../../src/web/request-path.js';
import { StaticFolder } from '../../src/web/static-files.js';
import { tempDir } from '../helpers/temp-dir.js';
import { untilTimeoutMs } from '../helpers/until.js';

const silent = pino({ level: 'silent' });

/** A StaticFolder mounted at /files over real HTTP on loopback. */
async function serveFolder(t: ExecutionContext, folder: string): Promise<string> {
  const files = new StaticFolder({ folder, csp: "default-src 'self'", logger: silent });
  const app = new Koa();
  app.silent = true;
  app.use(problemMiddleware(silent));
  app.use(async (context) => {
    const parsed = parseRequestPath(context.path);
    if (!parsed.ok) throw new Error(parsed.reason);
    await files.serve(context, '/files', parsed.segments.slice(1));
  });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Descriptors this process holds open on files below `folder`. */
async function openFilesIn(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target.startsWith(`${folder}/`)) found.push(target);
  }
  return found;
}

function get(url: string, method = 'GET', headers: Record<string, string> = {}) {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const outgoing = request(url, { method, headers, agent: false }, resolve);
    outgoing.on('error', reject);
    outgoing.end();
  });
}

async function untilNoneOpen(folder: string): Promise<string[]> {
  // The descriptor closes once koa has seen the response finish: a few turns of the loop, but
  // a loaded machine may take longer than 100 polls of 20 ms (the bound is a safety net).
  for (const deadline = performance.now() + untilTimeoutMs; performance.now() < deadline; ) {
    const open = await openFilesIn(folder);
    if (open.length === 0) return open;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return openFilesIn(folder);
}

test('a large file streams whole; GET, HEAD, 304 and refusals leave no descriptor open', async (t) => {
  const folder = await tempDir(t);
  await mkdir(join(folder, 'sub'));
  const big = randomBytes(3 * 1024 * 1024 + 17);
  await writeFile(join(folder, 'big.bin'), big);
  await writeFile(join(folder, 'sub/index.html'), '<p>hi</p>');
  const url = await serveFolder(t, folder);

  const response = await fetch(`${url}/files/big.bin`);
  t.is(response.status, 200);
  t.is(response.headers.get('content-length'), String(big.length));
  const body = Buffer.from(await response.arrayBuffer());
  t.is(
    createHash('sha256').update(body).digest('hex'),
    createHash('sha256').update(big).digest('hex'),
  );

  const etag = response.headers.get('etag') ?? '';
  for (let round = 0; round < 10; round++) {
    const head = await get(`${url}/files/big.bin`, 'HEAD');
    t.is(head.statusCode, 200);
    head.resume();
    const notModified = await get(`${url}/files/sub/`, 'GET', { 'If-None-Match': 'x' });
    notModified.resume();
    const fresh = await get(`${url}/files/big.bin`, 'GET', { 'If-None-Match': etag });
    t.is(fresh.statusCode, 304);
    fresh.resume();
    const refused = await get(`${url}/files/missing`, 'GET');
    t.is(refused.statusCode, 404);
    refused.resume();
  }
  t.deepEqual(await untilNoneOpen(folder), []);
});

test('a client that hangs up mid-file frees the descriptor', async (t) => {
  const folder = await tempDir(t);
  await writeFile(join(folder, 'huge.bin'), Buffer.alloc(32 * 1024 * 1024, 7));
  const url = await serveFolder(t, folder);
  const response = await get(`${url}/files/huge.bin`);
  t.is(response.statusCode, 200);
  await new Promise<void>((resolve) => response.once('data', () => resolve()));
  response.pause();
  t.is((await openFilesIn(folder)).length, 1, 'open while the answer is under way');
  response.destroy();
  t.deepEqual(await untilNoneOpen(folder), []);
});
