import { gunzipSync } from 'node:zlib';
import test from 'ava';
import { loadConsoleBundle } from '../../src/console/console-bundle.js';
import { startApi } from '../helpers/api-harness.js';
import { consoleBuild } from '../helpers/console-build.js';

async function consoleApi(t: Parameters<typeof startApi>[0]) {
  const { outDir, manifest } = await consoleBuild();
  const bundle = await loadConsoleBundle(outDir);
  if (!bundle) throw new Error('no bundle');
  return { api: await startApi(t, { deps: { console: bundle } }), manifest };
}

test('/ serves the page uncached with a strict CSP of its own and no inline script or style', async (t) => {
  const { api, manifest } = await consoleApi(t);
  const response = await fetch(`${api.baseUrl}/`);
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'text/html; charset=utf-8');
  t.is(response.headers.get('cache-control'), 'no-store');
  const policy = response.headers.get('content-security-policy') ?? '';
  for (const directive of [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "frame-ancestors 'none'",
  ]) {
    t.true(policy.includes(directive), policy);
  }
  t.false(policy.includes('unsafe-inline'));
  t.is(response.headers.get('x-frame-options'), 'DENY');
  t.is(response.headers.get('x-content-type-options'), 'nosniff');
  const html = await response.text();
  // Every script and stylesheet is a hashed file of the build; none is inline.
  t.notRegex(html, /<script(?![^>]*\bsrc=)[^>]*>/);
  t.notRegex(html, /<style|style=/);
  for (const asset of manifest.assets) t.true(html.includes(`/console/${asset}`), asset);
});

test('hashed assets are immutable, typed, gzipped when accepted, and an unknown one is a 404 problem', async (t) => {
  const { api, manifest } = await consoleApi(t);
  const script = manifest.assets.find((name) => name.endsWith('.js')) as string;
  const styles = manifest.assets.find((name) => name.endsWith('.css')) as string;

  const plain = await fetch(`${api.baseUrl}/console/${script}`, {
    headers: { 'Accept-Encoding': 'identity' },
  });
  t.is(plain.status, 200);
  t.is(plain.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.is(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.is(plain.headers.get('content-encoding'), null);
  const body = Buffer.from(await plain.arrayBuffer());

  // node:http's raw bytes: fetch would gunzip them transparently.
  const raw = await import('node:http').then(
    (http) =>
      new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
        http
          .get(
            `${api.baseUrl}/console/${script}`,
            { headers: { 'Accept-Encoding': 'gzip' } },
            (response) => {
              const chunks: Buffer[] = [];
              response.on('data', (chunk: Buffer) => chunks.push(chunk));
              response.on('end', () =>
                resolve({ headers: response.headers, body: Buffer.concat(chunks) }),
              );
            },
          )
          .on('error', reject);
      }),
  );
  t.is(raw.headers['content-encoding'], 'gzip');
  t.is(raw.headers.vary, 'Accept-Encoding');
  t.true(raw.body.length < body.length);
  t.deepEqual(gunzipSync(raw.body), body);

  const css = await fetch(`${api.baseUrl}/console/${styles}`);
  t.is(css.headers.get('content-type'), 'text/css; charset=utf-8');

  const missing = await api.request('/console/main-NOTTHERE.js');
  t.is(missing.status, 404);
  t.is(missing.headers.get('content-type'), 'application/problem+json');
  t.is(missing.json.code, 'not-found');
  t.is(missing.json.detail, "The console has no file 'main-NOTTHERE.js'.");
  t.is((await api.request('/console/..%2Fmanifest.json')).status, 400);
});

test('the console shadows neither the API, nor the docs, nor /healthz', async (t) => {
  const { api } = await consoleApi(t);
  t.is((await api.request('/healthz')).status, 200);
  t.is((await api.request('/swagger/v2/swagger.json')).status, 200);
  const unauthenticated = await api.request('/api/v2/Tags/Sample/Demo/x');
  t.is(unauthenticated.status, 401);
  const unknown = await api.request('/tags');
  t.is(unknown.status, 404, 'hash routes need no server fallback');
  t.is(unknown.headers.get('content-type'), 'application/problem+json');
});

test('without a build, / is a 404 problem saying how to build the console', async (t) => {
  const api = await startApi(t);
  const response = await api.request('/');
  t.is(response.status, 404);
  t.is(response.json.code, 'not-found');
  t.regex(String(response.json.detail), /npm run build/);
});
