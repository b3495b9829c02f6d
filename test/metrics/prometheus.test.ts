/**
 * End to end: a real Prometheus scrapes running tagd daemons (the demo profile) on loopback, one
 * with the default access rule (no token), one with the loopback exception off (a bearer token
 * in the scrape job, and a job without one that must fail), and the tagd series come back
 * through Prometheus' query API.
 */
import test from 'ava';
import { adminToken, demoDaemon } from '../helpers/demo-daemon.js';
import { prometheusSkipReason, startPrometheus, waitUntil } from '../helpers/prometheus.js';

const skipReason = prometheusSkipReason();
const prometheusTest = skipReason ? test.skip : test;
if (skipReason) console.warn(`skipping the Prometheus test: ${skipReason}`);

prometheusTest('Prometheus scrapes tagd on loopback and answers its series', async (t) => {
  t.timeout(120_000);
  const { url } = await demoDaemon(t);
  const target = new URL(url).host;
  const prometheus = await startPrometheus(t, [{ job: 'tagd', targets: [target] }]);
  // The demo's simulator driver is Running from the start: its series must arrive once scraped.
  const query = 'tagd_driver_state{job="tagd",driver="Demo",state="Running"}';
  let result: Awaited<ReturnType<typeof prometheus.query>> = [];
  await waitUntil(
    async () => {
      result = await prometheus.query(query);
      return result.length > 0;
    },
    60_000,
    () => `no ${query} after 60 s; Prometheus said:\n${prometheus.output()}`,
  );
  t.is(result[0]?.value[1], '1');
  t.is(result[0]?.metric.instance, target);
  const up = await prometheus.query('up{job="tagd"}');
  t.is(up[0]?.value[1], '1', 'the scrape itself succeeded');
  const lag = await prometheus.query('nodejs_eventloop_lag_seconds{job="tagd"}');
  t.is(lag.length, 1, 'process metrics come along');
});

prometheusTest(
  'with the loopback exception off, Prometheus scrapes with a bearer token',
  async (t) => {
    t.timeout(120_000);
    const { url, stateDir } = await demoDaemon(t, {
      profile: (demo: Record<string, unknown>) => {
        const server = (demo.server ?? {}) as Record<string, unknown>;
        server.metrics = { allowLoopbackWithoutToken: false };
        demo.server = server;
      },
    });
    const token = await adminToken(url, stateDir);
    const target = new URL(url).host;
    const prometheus = await startPrometheus(t, [
      { job: 'with-token', targets: [target], bearerToken: token },
      { job: 'without-token', targets: [target] },
    ]);
    const scraped = async (job: string) =>
      (await prometheus.query(`up{job="${job}"}`))[0]?.value[1];
    await waitUntil(
      async () =>
        (await scraped('with-token')) !== undefined &&
        (await scraped('without-token')) !== undefined,
      60_000,
      () => `both jobs not scraped after 60 s; Prometheus said:\n${prometheus.output()}`,
    );
    t.is(await scraped('with-token'), '1');
    t.is(await scraped('without-token'), '0', 'refused (401) without a token');
    const build = await prometheus.query('tagd_build_info{job="with-token"}');
    t.is(build[0]?.value[1], '1');
  },
);
