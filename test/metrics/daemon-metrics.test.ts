/**
 * The daemon wires every area into `/metrics`: the demo profile's simulator and CAN replay
 * drivers, its tag store, its SQLite history, its webhook publisher, the API and the sign-in
 * limiter, each with its series.
 */
import { spawn } from 'node:child_process';
import test from 'ava';
import { adminToken, demoDaemon } from '../helpers/demo-daemon.js';
import { prometheusSkipReason, promtoolPath } from '../helpers/prometheus.js';
import { samplesOf, seriesValue } from '../helpers/prometheus-text.js';

test('the demo daemon serves every area at /metrics, without a token on loopback', async (t) => {
  const { url, daemon } = await demoDaemon(t);
  // A failed sign-in and a request, so the API and sign-in series have something to show.
  const refused = await fetch(`${url}/api/v2/Users/Authenticate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'not the password' }),
  });
  t.is(refused.status, 401);
  const response = await fetch(`${url}/metrics`);
  t.is(response.status, 200);
  const body = await response.text();
  t.is(
    seriesValue(body, 'tagd_driver_state', { driver: 'Demo', type: 'simulator', state: 'Running' }),
    1,
  );
  t.true(samplesOf(body, 'tagd_driver_state', { driver: 'Vehicle', type: 'can' }).length > 0);
  const store = daemon.store;
  const goodDemoTags = [...(store?.ids() ?? [])].filter(
    (id) => id.startsWith('Demo/') && store?.get(id)?.quality === 'Good',
  ).length;
  t.true(goodDemoTags >= 7);
  t.is(seriesValue(body, 'tagd_driver_tags', { driver: 'Demo', quality: 'Good' }), goodDemoTags);
  // The simulator scanned once at start: one cycle timed.
  t.is(seriesValue(body, 'tagd_driver_poll_duration_seconds_count', { driver: 'Demo' }), 1);
  t.is(seriesValue(body, 'tagd_store_tags'), daemon.store?.size);
  t.true((seriesValue(body, 'tagd_store_updates_total') ?? 0) > 0);
  t.not(seriesValue(body, 'tagd_history_buffered_samples'), undefined);
  t.is(seriesValue(body, 'tagd_history_rejected_samples_total'), 0);
  t.is(
    seriesValue(body, 'tagd_publisher_status', {
      publisher: 'demo-receiver',
      type: 'webhook',
      status: 'On',
    }),
    1,
  );
  t.is(seriesValue(body, 'tagd_publisher_queue_depth', { publisher: 'demo-receiver' }), 0);
  t.is(seriesValue(body, 'tagd_signin_failures_total'), 1);
  t.is(
    seriesValue(body, 'tagd_http_requests_total', {
      route: '/api/v2/Users/Authenticate',
      method: 'POST',
      status: '401',
    }),
    1,
  );
  t.true(samplesOf(body, 'nodejs_heap_size_used_bytes').length === 1);
  t.notRegex(body, /not the password|"admin"/);
});

const promtoolSkip = prometheusSkipReason();
(promtoolSkip ? test.skip : test)(
  "promtool's linter finds nothing to say about tagd's own series",
  async (t) => {
    const { url } = await demoDaemon(t);
    await fetch(`${url}/api/v2/Tags/Sample/Demo/Line1/Temperature`);
    const body = await (await fetch(`${url}/metrics`)).text();
    const child = spawn(promtoolPath, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stdin.end(body);
    await new Promise((resolve) => child.once('close', resolve));
    // prom-client's own Node.js gauges named `…_total` are its choice; tagd's series must be clean.
    const findings = output.split('\n').filter((line) => line.includes('tagd_'));
    t.deepEqual(findings, []);
    t.notRegex(output, /error|parse/i);
  },
);

test('tag writes are counted by status, without tag or account labels', async (t) => {
  const { url, stateDir } = await demoDaemon(t);
  const token = await adminToken(url, stateDir);
  const write = (writes: unknown) =>
    fetch(`${url}/api/v2/Tags/Write`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ writes }),
    });
  t.is((await write([{ fullTagId: 'Demo/Controls/Setpoint', value: 75 }])).status, 200);
  // A tag that is not writable: refused before any driver sees it.
  t.is((await write([{ fullTagId: 'Demo/Line1/Temperature', value: 1 }])).status, 400);
  const body = await (await fetch(`${url}/metrics`)).text();
  t.is(seriesValue(body, 'tagd_tag_writes_total', { status: 'Good' }), 1);
  t.is(seriesValue(body, 'tagd_tag_writes_total', { status: 'Refused' }), 1);
  t.is(seriesValue(body, 'tagd_tag_writes_total', { status: 'Bad' }), 0);
  t.notRegex(body, /Setpoint|admin/);
});
