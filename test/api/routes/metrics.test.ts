import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import test, { type ExecutionContext } from 'ava';
import type { ApiDeps } from '../../../src/api/api-deps.js';
import { apiRoutes, createApp } from '../../../src/api/app.js';
import { metricsRoutes } from '../../../src/api/routes/metrics.js';
import { extensionsRoutes } from '../../../src/extensions/extensions-app.js';
import { TagdMetrics } from '../../../src/metrics/tagd-metrics.js';
import { type ApiHarness, startApi } from '../../helpers/api-harness.js';
import { seriesValue } from '../../helpers/prometheus-text.js';

/** The API with metrics, and a switch for the profile setting. */
async function withMetrics(
  t: ExecutionContext,
): Promise<{ api: ApiHarness; setting: { allow: boolean } }> {
  const setting = { allow: true };
  const metrics = new TagdMetrics({ version: '0.0.0-test', processMetrics: false });
  const api = await startApi(t, {
    deps: ({ store }) => {
      metrics.watchStore(store);
      return { metrics: metrics.api(() => setting.allow) };
    },
  });
  return { api, setting };
}

/** Serves `deps` on a fresh loopback listener with the given routes. */
async function serve(
  t: ExecutionContext,
  deps: ApiDeps,
  routes: ReturnType<typeof metricsRoutes>,
  host = '127.0.0.1',
): Promise<number> {
  const server = createServer(createApp(deps, { routes }).callback());
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as AddressInfo).port;
}

test('a loopback peer reads /metrics without a token, in the Prometheus text format', async (t) => {
  const { api } = await withMetrics(t);
  const response = await api.request('/metrics');
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const body = response.body as string;
  t.is(seriesValue(body, 'tagd_build_info', { version: '0.0.0-test' }), 1);
  t.is(seriesValue(body, 'tagd_store_tags'), 0);
});

test('requests are counted by route template, never by path', async (t) => {
  const { api } = await withMetrics(t);
  const token = await api.serviceToken('scada', ['Viewers']);
  await api.request('/api/v2/Tags/Sample/Secret/Line/Temperature', { token });
  await api.request('/api/v2/NoSuchRoute/alice');
  const body = (await api.request('/metrics')).body as string;
  t.is(
    seriesValue(body, 'tagd_http_requests_total', {
      route: '/api/v2/Tags/Sample/{fullTagPath}',
      method: 'GET',
      status: '404',
    }),
    1,
  );
  t.is(
    seriesValue(body, 'tagd_http_requests_total', {
      route: '(unmatched)',
      method: 'GET',
      status: '404',
    }),
    1,
  );
  t.notRegex(body, /Secret|alice|scada/);
});

test('with the loopback exception off, a token with MetricsView is needed', async (t) => {
  const { api, setting } = await withMetrics(t);
  setting.allow = false;
  const none = await api.request('/metrics');
  t.is(none.status, 401);
  t.is(none.headers.get('www-authenticate'), 'Bearer realm="tagd"');
  const viewer = await api.serviceToken('dashboard', ['Viewers']);
  const refused = await api.request('/metrics', { token: viewer });
  t.is(refused.status, 403);
  t.is(refused.json.code, 'forbidden');
  const prometheus = await api.serviceToken('prometheus', ['Operators']);
  const accepted = await api.request('/metrics', { token: prometheus });
  t.is(accepted.status, 200);
  t.regex(accepted.body as string, /^# HELP /m);
  await api.addUser('ada', ['Administrators']);
  const admin = await api.signIn('ada');
  t.is((await api.request('/metrics', { token: admin })).status, 200);
  setting.allow = true;
  t.is((await api.request('/metrics')).status, 200, 'the setting is read per request');
});

test('a peer not on loopback needs a token with MetricsView', async (t) => {
  const { api } = await withMetrics(t);
  // The peer check is the one thing replaced: the route and its access rule are the real ones.
  const port = await serve(t, api.deps, metricsRoutes(api.deps, { isLoopbackPeer: () => false }));
  const url = `http://127.0.0.1:${port}/metrics`;
  t.is((await fetch(url)).status, 401);
  const viewer = await api.serviceToken('dashboard', ['Viewers']);
  t.is((await fetch(url, { headers: { Authorization: `Bearer ${viewer}` } })).status, 403);
  const token = await api.serviceToken('prometheus', ['Operators']);
  const accepted = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  t.is(accepted.status, 200);
  t.regex(await accepted.text(), /tagd_build_info/);
});

// A real remote peer: this machine's own non-loopback address, where it has one.
const plantAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal)?.address;

(plantAddress ? test : test.skip)(
  'a connection from a non-loopback address needs a token, over the real socket check',
  async (t) => {
    const { api } = await withMetrics(t);
    const port = await serve(t, api.deps, metricsRoutes(api.deps), plantAddress);
    const url = `http://${plantAddress}:${port}/metrics`;
    t.is((await fetch(url)).status, 401);
    const token = await api.serviceToken('prometheus', ['Operators']);
    t.is((await fetch(url, { headers: { Authorization: `Bearer ${token}` } })).status, 200);
  },
);

test('/metrics is not served by the extensions server, whatever it enables', async (t) => {
  const { api } = await withMetrics(t);
  const routes = apiRoutes(api.deps);
  t.true(routes.some((route) => route.path === '/metrics'));
  const served = extensionsRoutes(routes, { enableApi: true, enableDocs: true });
  t.false(served.some((route) => route.path === '/metrics'));
});

test('without metrics in the deps, /metrics answers 404', async (t) => {
  const api = await startApi(t);
  const response = await api.request('/metrics');
  t.is(response.status, 404);
  t.is(response.json.code, 'not-found');
});
