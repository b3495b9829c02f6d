import test from 'ava';
import { startApi } from '../helpers/api-harness.js';

async function serve(t: import('ava').ExecutionContext) {
  const api = await startApi(t, { deps: { version: '9.9.9' } });
  return api.baseUrl;
}

test('GET /healthz answers without a token and says nothing about the data', async (t) => {
  const base = await serve(t);
  const response = await fetch(`${base}/healthz`);
  t.is(response.status, 200);
  t.deepEqual(await response.json(), { status: 'ok', version: '9.9.9' });
});

test('every response carries the security headers', async (t) => {
  const base = await serve(t);
  for (const path of ['/healthz', '/nope']) {
    const response = await fetch(`${base}${path}`);
    t.is(response.headers.get('x-content-type-options'), 'nosniff', path);
    t.is(response.headers.get('x-frame-options'), 'DENY', path);
    t.is(response.headers.get('referrer-policy'), 'no-referrer', path);
    t.is(response.headers.get('cache-control'), 'no-store', path);
    t.regex(response.headers.get('content-security-policy') ?? '', /default-src 'none'/, path);
  }
});

test('an unknown route answers a 404 problem document', async (t) => {
  const base = await serve(t);
  const response = await fetch(`${base}/api/v2/Nothing/Here`);
  t.is(response.status, 404);
  t.is(response.headers.get('content-type'), 'application/problem+json');
  t.deepEqual(await response.json(), {
    type: 'urn:tagd:problem:not-found',
    title: 'Not Found',
    status: 404,
    detail: 'No route GET /api/v2/Nothing/Here.',
    instance: '/api/v2/Nothing/Here',
    code: 'not-found',
  });
});

test('a wrong method on a known route answers a problem document, not a bare status', async (t) => {
  const base = await serve(t);
  const response = await fetch(`${base}/healthz`, { method: 'DELETE' });
  t.is(response.status, 405);
  t.is(response.headers.get('content-type'), 'application/problem+json');
  const problem = (await response.json()) as { status: number; code: string };
  t.is(problem.status, 405);
});
