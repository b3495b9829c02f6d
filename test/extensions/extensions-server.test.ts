import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { request as plainRequest } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import { apiRoutes } from '../../src/api/app.js';
import { defaultAppCsp, extensionsSchema } from '../../src/extensions/extensions-config.js';
import { ExtensionsServer } from '../../src/extensions/extensions-server.js';
import { type ApiHarness, startApi } from '../helpers/api-harness.js';
import { makeCertificates } from '../helpers/certificates.js';
import { getOn, openSocket, type RawResponse } from '../helpers/raw-http.js';
import { tempDir } from '../helpers/temp-dir.js';

const silent = pino({ level: 'silent' });
const secret = 'outside-secret-7f3a';
const indexHtml = '<!doctype html><title>andon</title><script src="app.js"></script>';

/** A folder with the app `andon` (and things it must not serve around it). */
async function appFolder(t: ExecutionContext): Promise<string> {
  const folder = await tempDir(t);
  const app = join(folder, 'apps/andon');
  await mkdir(join(app, 'css'), { recursive: true });
  await mkdir(join(app, 'empty'));
  await writeFile(join(app, 'index.html'), indexHtml);
  await writeFile(join(app, 'app.js'), 'console.log(1);\n');
  await writeFile(join(app, 'css/site.css'), 'body{}\n');
  await writeFile(join(app, 'data.bin'), Buffer.from([1, 2, 3]));
  await writeFile(join(app, 'empty.txt'), '');
  await writeFile(join(app, 'Grüße 1.txt'), 'hello');
  await writeFile(join(app, '.env'), secret);
  await writeFile(join(folder, 'outside.txt'), secret);
  await mkdir(join(folder, 'outside-dir'));
  await writeFile(join(folder, 'outside-dir/index.html'), secret);
  // Links that stay inside are followed; links that lead out are not.
  await symlink('app.js', join(app, 'alias.js'));
  await symlink('../../outside.txt', join(app, 'escape.txt'));
  await symlink(join(folder, 'outside.txt'), join(app, 'escape-absolute.txt'));
  await symlink('../../outside-dir', join(app, 'escape-dir'));
  await symlink('/dev/zero', join(app, 'zero.bin'));
  await symlink('/etc/passwd', join(app, 'passwd.txt'));
  execFileSync('mkfifo', [join(app, 'pipe.txt')]);
  return folder;
}

interface Started {
  api: ApiHarness;
  server: ExtensionsServer;
  /** The extensions server's URL. */
  url: string;
  folder: string;
}

async function startExtensions(
  t: ExecutionContext,
  section: Record<string, unknown> = {},
  harness?: ApiHarness,
): Promise<Started> {
  const api = harness ?? (await startApi(t));
  const folder = await appFolder(t);
  const server = new ExtensionsServer({
    config: extensionsSchema.parse({
      apps: [{ name: 'andon', folder: 'apps/andon' }],
      ...section,
    }),
    profileFolder: folder,
    deps: api.deps,
    routes: apiRoutes(api.deps),
    logger: silent,
    listen: { host: '127.0.0.1', port: 0 },
  });
  await server.start();
  t.teardown(() => server.stop());
  return { api, server, url: server.url() as string, folder };
}

/** One raw GET (the path exactly as given, nothing normalised) on a fresh connection. */
async function rawGet(url: string, path: string): Promise<RawResponse> {
  const socket = await openSocket(url);
  try {
    return await getOn(socket, path);
  } finally {
    socket.destroy();
  }
}

test('an app is served at /name/: index.html, media types, validators and security headers', async (t) => {
  const { url } = await startExtensions(t);
  const index = await fetch(`${url}/andon/`);
  t.is(index.status, 200);
  t.is(await index.text(), indexHtml);
  t.is(index.headers.get('content-type'), 'text/html; charset=utf-8');
  t.is(index.headers.get('content-security-policy'), defaultAppCsp);
  t.is(index.headers.get('x-content-type-options'), 'nosniff');
  t.is(index.headers.get('x-frame-options'), 'DENY');
  t.is(index.headers.get('referrer-policy'), 'no-referrer');
  t.is(index.headers.get('cache-control'), 'no-cache');
  t.is(index.headers.get('strict-transport-security'), null, 'no HSTS over plain HTTP');
  const etag = index.headers.get('etag') ?? '';
  t.regex(etag, /^W\/"[0-9a-f]+-[0-9a-f]+"$/);
  t.truthy(index.headers.get('last-modified'));

  const types: [string, string][] = [
    ['/andon/index.html', 'text/html; charset=utf-8'],
    ['/andon/app.js', 'text/javascript; charset=utf-8'],
    ['/andon/css/site.css', 'text/css; charset=utf-8'],
    ['/andon/data.bin', 'application/octet-stream'],
    ['/andon/alias.js', 'text/javascript; charset=utf-8'],
    ['/andon/Gr%C3%BC%C3%9Fe%201.txt', 'text/plain; charset=utf-8'],
  ];
  for (const [path, type] of types) {
    const response = await fetch(`${url}${path}`);
    t.is(response.status, 200, path);
    t.is(response.headers.get('content-type'), type, path);
    await response.arrayBuffer();
  }
  t.is(await (await fetch(`${url}/andon/alias.js`)).text(), 'console.log(1);\n');
  const empty = await fetch(`${url}/andon/empty.txt`);
  t.is(empty.status, 200);
  t.is(empty.headers.get('content-length'), '0');
  t.is(await empty.text(), '');

  // node:http, not fetch: fetch adds Cache-Control: no-cache to a conditional request.
  const again = await plainGet(`${url}/andon/`, { 'If-None-Match': etag });
  t.is(again.status, 304, 'the browser revalidates with the ETag');
  t.is(again.body, '');
  const since = await plainGet(`${url}/andon/app.js`, {
    'If-Modified-Since': new Date(Date.now() + 60_000).toUTCString(),
  });
  t.is(since.status, 304, 'or with Last-Modified');
  const head = await fetch(`${url}/andon/app.js`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.headers.get('content-length'), '16');
  t.is(await head.text(), '');
});

test('/name and folders without their slash redirect; no listing, no other paths', async (t) => {
  const { url } = await startExtensions(t);
  const bare = await fetch(`${url}/andon?x=1`, { redirect: 'manual' });
  t.is(bare.status, 308);
  t.is(bare.headers.get('location'), '/andon/?x=1');
  const folder = await fetch(`${url}/andon/css`, { redirect: 'manual' });
  t.is(folder.status, 308);
  t.is(folder.headers.get('location'), '/andon/css/');
  for (const path of [
    '/andon/css/',
    '/andon/empty/',
    '/andon/missing.js',
    '/andon/app.js/',
    '/',
    '/other/',
    '/Andon/',
  ]) {
    const response = await fetch(`${url}${path}`);
    t.is(response.status, 404, path);
    t.is(response.headers.get('content-type'), 'application/problem+json', path);
    t.is(((await response.json()) as { code: string }).code, 'not-found', path);
  }
  const post = await fetch(`${url}/andon/app.js`, { method: 'POST' });
  t.is(post.status, 405);
  t.is(post.headers.get('allow'), 'GET, HEAD');
  t.is(((await post.json()) as { code: string }).code, 'method-not-allowed');
  t.is((await fetch(`${url}/andon`, { method: 'DELETE' })).status, 405);
});

test('traversal is refused: dot segments, encoded separators, backslashes, NUL, dotfiles', async (t) => {
  const { url } = await startExtensions(t);
  const attempts: [string, number][] = [
    ['/andon/../outside.txt', 400],
    ['/andon/../../outside.txt', 400],
    ['/andon/./index.html', 400],
    ['/andon/%2e%2e/%2e%2e/outside.txt', 400],
    ['/andon/%2E%2E/%2E%2E/outside.txt', 400],
    ['/andon/.%2e/.%2e/outside.txt', 400],
    ['/andon/css%2f..%2f..%2f..%2foutside.txt', 400],
    ['/andon/..%2f..%2foutside.txt', 400],
    ['/andon/..%5c..%5coutside.txt', 400],
    ['/andon/..\\..\\outside.txt', 400],
    ['/andon/index.html%00.js', 400],
    ['/andon/%c0%ae%c0%ae/outside.txt', 400],
    ['/andon/%252e%252e/outside.txt', 404],
    ['/andon//outside.txt', 400],
    ['/andon/.env', 404],
    ['/andon/%2eenv', 404],
    ['/%2e%2e/outside.txt', 400],
  ];
  for (const [path, status] of attempts) {
    const response = await rawGet(url, path);
    t.is(response.status, status, path);
    t.is(response.headers['content-type'], 'application/problem+json', path);
    t.false(response.body.includes(secret), path);
  }
});

test('links leading out of the folder, FIFOs and devices are refused; links inside are followed', async (t) => {
  const { url } = await startExtensions(t);
  for (const path of [
    '/andon/escape.txt',
    '/andon/escape-absolute.txt',
    '/andon/escape-dir/',
    '/andon/escape-dir/index.html',
    '/andon/passwd.txt',
    '/andon/zero.bin',
    '/andon/pipe.txt',
  ]) {
    const started = Date.now();
    const response = await fetch(`${url}${path}`);
    const body = await response.text();
    t.is(response.status, 404, path);
    t.false(body.includes(secret), path);
    t.true(Date.now() - started < 5_000, `${path} answered without hanging`);
  }
  t.is((await fetch(`${url}/andon/alias.js`)).status, 200);
});

test('an app folder that is itself a link is served from where it points', async (t) => {
  const api = await startApi(t);
  const folder = await appFolder(t);
  await symlink(join(folder, 'apps/andon'), join(folder, 'current'));
  const server = new ExtensionsServer({
    config: extensionsSchema.parse({ apps: [{ name: 'board', folder: 'current' }] }),
    profileFolder: folder,
    deps: api.deps,
    routes: apiRoutes(api.deps),
    logger: silent,
    listen: { host: '127.0.0.1', port: 0 },
  });
  await server.start();
  t.teardown(() => server.stop());
  t.is(await (await fetch(`${server.url()}/board/app.js`)).text(), 'console.log(1);\n');
  t.is((await fetch(`${server.url()}/board/escape.txt`)).status, 404);
});

test('an app may set its own Content-Security-Policy', async (t) => {
  const csp = "default-src 'self'; img-src 'self' data:";
  const { url } = await startExtensions(t, {
    apps: [{ name: 'andon', folder: 'apps/andon', csp }],
  });
  const response = await fetch(`${url}/andon/`);
  t.is(response.headers.get('content-security-policy'), csp);
  const missing = await fetch(`${url}/andon/nope`);
  t.regex(missing.headers.get('content-security-policy') ?? '', /default-src 'none'/);
});

test('without enableApi and enableDocs the API and its docs answer 404 there; the main listener serves them', async (t) => {
  const { api, url } = await startExtensions(t);
  const token = await api.serviceToken('scada', ['Viewers']);
  api.store.define([{ fullTagId: 'Line/Temp' }]);
  const auth = { Authorization: `Bearer ${token}` };
  for (const path of [
    '/api/v2/Tags/Sample/Line/Temp',
    '/api/v2/Users/Authenticate',
    '/swagger',
    '/swagger/v2/swagger.json',
    '/swagger/swagger-ui-bundle.js',
    '/healthz',
    '/API/v2/Tags/Sample/Line/Temp',
  ]) {
    const response = await fetch(`${url}${path}`, { headers: auth });
    t.is(response.status, 404, path);
    t.is(response.headers.get('content-type'), 'application/problem+json', path);
    await response.arrayBuffer();
  }
  const signIn = await fetch(`${url}/api/v2/Users/Authenticate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'x', password: 'y' }),
  });
  t.is(signIn.status, 404, 'no sign-in either');
  await signIn.arrayBuffer();

  // The main listener always publishes the API and its docs (spec §1).
  t.is((await api.request('/api/v2/Tags/Sample/Line/Temp', { token })).status, 200);
  t.is((await api.request('/swagger')).status, 200);
  t.is((await api.request('/swagger/v2/swagger.json')).status, 200);
  t.is((await api.request('/andon/')).status, 404, 'and never the apps');
});

test('with enableApi the whole /api/v2 answers there: same accounts, authentication and limits', async (t) => {
  const { api, url } = await startExtensions(t, { enableApi: true });
  api.store.define([{ fullTagId: 'Line/Temp' }]);
  const token = await api.serviceToken('scada', ['Viewers']);
  const sample = await fetch(`${url}/api/v2/Tags/Sample/Line/Temp`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  t.is(sample.status, 200);
  t.is(((await sample.json()) as { fullTagId: string }).fullTagId, 'Line/Temp');
  t.is(sample.headers.get('cache-control'), 'no-store', "the API's own headers");
  t.regex(sample.headers.get('content-security-policy') ?? '', /default-src 'none'/);

  const anonymous = await fetch(`${url}/api/v2/Tags/Sample/Line/Temp`);
  t.is(anonymous.status, 401);
  t.is(anonymous.headers.get('www-authenticate'), 'Bearer realm="tagd"');
  await anonymous.arrayBuffer();
  const wrongMethod = await fetch(`${url}/api/v2/Tags/Sample/Line/Temp`, { method: 'DELETE' });
  t.is(wrongMethod.status, 405, 'a route asked with another method, as on the main listener');
  await wrongMethod.arrayBuffer();

  // One sign-in limiter: failures on the main listener count on the extensions server.
  await api.addUser('operator', ['Operators']);
  for (let attempt = 0; attempt < 5; attempt++) {
    await api.request('/api/v2/Users/Authenticate', {
      method: 'POST',
      body: { username: 'operator', password: 'wrong password!' },
    });
  }
  const locked = await fetch(`${url}/api/v2/Users/Authenticate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'operator', password: 'correct horse battery' }),
  });
  t.is(locked.status, 429);
  t.truthy(locked.headers.get('retry-after'));
  await locked.arrayBuffer();

  // Docs stay off.
  t.is((await fetch(`${url}/swagger`)).status, 404);
  t.is((await fetch(`${url}/healthz`)).status, 404);
  t.is((await fetch(`${url}/andon/`)).status, 200, 'the apps still answer');
});

test('a browser signs in with cookies on the extensions origin and reads with them', async (t) => {
  const { api, url } = await startExtensions(t, { enableApi: true });
  api.store.define([{ fullTagId: 'Line/Temp' }]);
  await api.addUser('viewer', ['Viewers']);
  const signIn = await fetch(`${url}/api/v2/Users/Authenticate?useCookies=true`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'viewer', password: 'correct horse battery' }),
  });
  t.is(signIn.status, 200);
  const body = (await signIn.json()) as Record<string, unknown>;
  t.is(body.token, undefined, 'no token in the body');
  const cookies = signIn.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
  t.regex(cookies, /tagd_session=/);
  const sample = await fetch(`${url}/api/v2/Tags/Sample/Line/Temp`, {
    headers: { Cookie: cookies },
  });
  t.is(sample.status, 200);
  await sample.arrayBuffer();
  const csrf = /tagd_csrf=([^;]+)/.exec(cookies)?.[1] ?? '';
  const withoutCsrf = await fetch(`${url}/api/v2/Users/SignOut`, {
    method: 'POST',
    headers: { Cookie: cookies },
  });
  t.is(withoutCsrf.status, 403, 'unsafe methods need the CSRF header');
  await withoutCsrf.arrayBuffer();
  const signOut = await fetch(`${url}/api/v2/Users/SignOut`, {
    method: 'POST',
    headers: { Cookie: cookies, 'X-CSRF-Token': csrf },
  });
  t.is(signOut.status, 204);
});

test('with enableDocs /swagger and the OpenAPI document answer there, and the API stays off', async (t) => {
  const { api, url } = await startExtensions(t, { enableDocs: true });
  const page = await fetch(`${url}/swagger`);
  t.is(page.status, 200);
  t.regex(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  await page.arrayBuffer();
  const document = await fetch(`${url}/swagger/v2/swagger.json`);
  t.is(document.status, 200);
  const served = (await document.json()) as { paths: Record<string, unknown> };
  const main = (await api.request('/swagger/v2/swagger.json')).json as { paths: unknown };
  t.deepEqual(served.paths, main.paths, 'the same document as on the main listener');
  t.is((await fetch(`${url}/swagger/swagger-ui.css`)).status, 200);
  const token = await api.serviceToken('scada', ['Viewers']);
  const sample = await fetch(`${url}/api/v2/Tags/Sample/Line/Temp`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  t.is(sample.status, 404);
  await sample.arrayBuffer();
});

test('over HTTPS with its own certificate: the app and the API, with HSTS', async (t) => {
  const certificates = await makeCertificates(t);
  const api = await startApi(t);
  const folder = await appFolder(t);
  const server = new ExtensionsServer({
    config: extensionsSchema.parse({
      https: {
        host: '127.0.0.1',
        port: 0,
        certFile: certificates.certFile,
        keyFile: certificates.keyFile,
      },
      apps: [{ name: 'andon', folder: 'apps/andon' }],
      enableApi: true,
    }),
    profileFolder: folder,
    deps: api.deps,
    routes: apiRoutes(api.deps),
    logger: silent,
    listen: { host: '127.0.0.1', port: 0 },
  });
  await server.start();
  t.teardown(() => server.stop());
  const base = server.httpsUrl() as string;
  t.regex(base, /^https:\/\/127\.0\.0\.1:\d+$/);
  const page = await httpsGet(`${base}/andon/`, certificates.ca);
  t.is(page.status, 200);
  t.is(page.body, indexHtml);
  t.is(page.headers['strict-transport-security'], 'max-age=31536000');
  t.is(page.headers['content-security-policy'], defaultAppCsp);
  // (A URL parser folds %2e%2e segments away; an encoded slash gets through to the server.)
  const refused = await httpsGet(`${base}/andon/..%2f..%2foutside.txt`, certificates.ca);
  t.is(refused.status, 400);
  t.false(refused.body.includes(secret));
  const api401 = await httpsGet(`${base}/api/v2/Tags/Sample/Line/Temp`, certificates.ca);
  t.is(api401.status, 401);
  await server.stop();
  t.is(server.url(), undefined);
  t.is(server.httpsUrl(), undefined);
});

function httpsGet(
  url: string,
  ca: Buffer,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { ca, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

function plainGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = plainRequest(url, { headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

test('/theme.css is served there too, also without enableApi: the same sheet as the main listener', async (t) => {
  const { api, url } = await startExtensions(t);
  const there = await fetch(`${url}/theme.css`);
  t.is(there.status, 200);
  t.is(there.headers.get('content-type'), 'text/css; charset=utf-8');
  t.is(there.headers.get('cache-control'), 'no-cache');
  t.is(there.headers.get('x-content-type-options'), 'nosniff');
  const etag = there.headers.get('etag') ?? '';
  const css = await there.text();
  t.regex(css, /\[data-theme="dark"\] \{/);
  const main = await api.request('/theme.css');
  t.is(main.body, css);
  t.is(main.headers.get('etag'), etag);
  const unchanged = await fetch(`${url}/theme.css`, { headers: { 'If-None-Match': etag } });
  t.is(unchanged.status, 304);
  await unchanged.arrayBuffer();
});
