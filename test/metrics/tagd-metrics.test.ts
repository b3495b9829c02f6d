import test from 'ava';
import { SignInLimiter } from '../../src/auth/sign-in-limiter.js';
import type { HistoryLoggerStats } from '../../src/history/history-logger.js';
import { TagdMetrics } from '../../src/metrics/tagd-metrics.js';
import type { EmailNotifierState } from '../../src/notifications/email-notifier.js';
import type { PublisherQueue, PublisherState } from '../../src/publishers/publisher.js';
import type { DriverReport } from '../../src/runtime/driver-reports.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { samplesOf, seriesValue } from '../helpers/prometheus-text.js';

const at = '2026-01-01T00:00:00.000Z';

function metrics(now?: () => number): TagdMetrics {
  return new TagdMetrics({ version: '9.9.9', processMetrics: false, ...(now ? { now } : {}) });
}

async function scrape(source: TagdMetrics): Promise<string> {
  return (await source.exposition()).body;
}

function report(fields: Partial<DriverReport> & Pick<DriverReport, 'name' | 'type'>): DriverReport {
  return {
    state: 'Running',
    driverState: 'Running',
    since: at,
    counters: {},
    tagCount: 0,
    tagsByQuality: { Good: 0, Stale: 0, Unavailable: 0, Bad: 0 },
    ...fields,
  };
}

test('the exposition is the Prometheus text format with tagd_build_info', async (t) => {
  const exposed = await metrics().exposition();
  t.regex(exposed.contentType, /^text\/plain; version=0\.0\.4/);
  t.is(seriesValue(exposed.body, 'tagd_build_info', { version: '9.9.9' }), 1);
});

test('process metrics: event-loop lag, heap and GC under their Node.js names', async (t) => {
  const body = (await new TagdMetrics({ version: '1' }).exposition()).body;
  for (const name of [
    'nodejs_eventloop_lag_seconds',
    'nodejs_heap_size_used_bytes',
    'process_resident_memory_bytes',
    'process_cpu_seconds_total',
  ]) {
    t.true(samplesOf(body, name).length > 0, name);
  }
  t.regex(body, /# TYPE nodejs_gc_duration_seconds histogram/);
});

test('store series are read from the store when scraped', async (t) => {
  const source = metrics();
  const store = new TagStore();
  source.watchStore(store);
  store.define([{ fullTagId: 'A/x' }, { fullTagId: 'A/y' }]);
  store.write([
    { fullTagId: 'A/x', utcTimestamp: at, quality: 'Good', value: 1 },
    { fullTagId: 'A/y', utcTimestamp: at, quality: 'Good', value: 2 },
  ]);
  const body = await scrape(source);
  t.is(seriesValue(body, 'tagd_store_tags'), 2);
  // Two placeholders (define) and two readings.
  t.is(seriesValue(body, 'tagd_store_updates_total'), 4);
});

test('driver series come from the reports, and a driver no longer listed has none', async (t) => {
  const source = metrics();
  let reports = [
    report({
      name: 'Boiler1',
      type: 'modbus',
      state: 'Reconnecting',
      counters: {
        requests: 40,
        timeouts: 3,
        disconnects: 2,
        malformed: 1,
        malformedFrames: 4,
        connectsFailed: 5,
      },
      tagsByQuality: { Good: 7, Stale: 1, Unavailable: 2, Bad: 0 },
    }),
    report({ name: 'Demo', type: 'simulator' }),
    report({
      name: 'central',
      type: 'sparkplug',
      counters: {
        messages: 900,
        sequenceErrors: 3,
        rebirthsRequested: 2,
        historicalSamples: 50,
        disconnects: 1,
        failedAttempts: 4,
      },
    }),
  ];
  source.watchDrivers({ list: () => reports });
  let body = await scrape(source);
  const boiler = { driver: 'Boiler1', type: 'modbus' };
  t.is(seriesValue(body, 'tagd_driver_state', { ...boiler, state: 'Reconnecting' }), 1);
  t.is(seriesValue(body, 'tagd_driver_state', { ...boiler, state: 'Running' }), 0);
  t.is(seriesValue(body, 'tagd_driver_state', { driver: 'Demo', state: 'Running' }), 1);
  t.is(seriesValue(body, 'tagd_driver_requests_total', boiler), 40);
  t.is(seriesValue(body, 'tagd_driver_timeouts_total', boiler), 3);
  t.is(seriesValue(body, 'tagd_driver_reconnects_total', boiler), 2);
  t.is(
    seriesValue(body, 'tagd_driver_malformed_frames_total', boiler),
    5,
    'malformed + malformedFrames',
  );
  t.is(seriesValue(body, 'tagd_driver_connect_failures_total', boiler), 5);
  t.is(seriesValue(body, 'tagd_driver_tags', { ...boiler, quality: 'Good' }), 7);
  t.is(seriesValue(body, 'tagd_driver_tags', { ...boiler, quality: 'Unavailable' }), 2);
  t.is(seriesValue(body, 'tagd_driver_tags', { driver: 'Demo', quality: 'Good' }), 0);
  // The simulator keeps no request counter: no series rather than a misleading 0.
  t.is(seriesValue(body, 'tagd_driver_requests_total', { driver: 'Demo' }), undefined);
  const central = { driver: 'central', type: 'sparkplug' };
  t.is(seriesValue(body, 'tagd_driver_relay_messages_total', central), 900);
  t.is(seriesValue(body, 'tagd_driver_sequence_errors_total', central), 3);
  t.is(seriesValue(body, 'tagd_driver_rebirths_requested_total', central), 2);
  t.is(seriesValue(body, 'tagd_driver_historical_samples_total', central), 50);
  t.is(seriesValue(body, 'tagd_driver_reconnects_total', central), 1);
  t.is(seriesValue(body, 'tagd_driver_connect_failures_total', central), 4);
  t.is(seriesValue(body, 'tagd_driver_relay_messages_total', boiler), undefined);

  reports = [reports[1] as DriverReport];
  body = await scrape(source);
  t.deepEqual(samplesOf(body, 'tagd_driver_state', { driver: 'Boiler1' }), []);
  t.deepEqual(samplesOf(body, 'tagd_driver_tags', { driver: 'Boiler1' }), []);
});

test('the reports are read once per scrape, whatever the number of driver series', async (t) => {
  const source = metrics();
  let reads = 0;
  source.watchDrivers({
    list: () => {
      reads++;
      return [report({ name: 'Demo', type: 'simulator' })];
    },
  });
  await scrape(source);
  t.is(reads, 1);
  await scrape(source);
  t.is(reads, 2);
});

test('poll durations: one histogram per driver, removed with the driver', async (t) => {
  const source = metrics();
  const handle = source.driver('Boiler1', 'modbus');
  handle.port.observePollSeconds(0.004);
  handle.port.observePollSeconds(0.3);
  let body = await scrape(source);
  const labels = { driver: 'Boiler1', type: 'modbus' };
  t.is(seriesValue(body, 'tagd_driver_poll_duration_seconds_count', labels), 2);
  t.is(
    seriesValue(body, 'tagd_driver_poll_duration_seconds_bucket', { ...labels, le: '0.005' }),
    1,
  );
  t.is(seriesValue(body, 'tagd_driver_poll_duration_seconds_bucket', { ...labels, le: '0.5' }), 2);
  handle.remove();
  body = await scrape(source);
  t.deepEqual(samplesOf(body, 'tagd_driver_poll_duration_seconds_count', labels), []);
});

test('publisher series: status, deliveries by outcome, queue, durations', async (t) => {
  let now = Date.UTC(2026, 0, 1, 0, 0, 30);
  const source = metrics(() => now);
  const states: PublisherState[] = [
    {
      name: 'mes',
      status: 'Error',
      counters: { batches: 4, samples: 40, failures: 2, skippedTicks: 0, droppedSamples: 3 },
    },
  ];
  const queues: PublisherQueue[] = [
    { name: 'mes', depth: 12, oldestQueuedAt: Date.UTC(2026, 0, 1, 0, 0, 20) },
  ];
  const port = source.publisherKind('webhook', () => ({
    list: () => states,
    queues: () => queues,
  }));
  port.deliveryEnded('mes', 'failure', 3.2);
  port.deliveryEnded('mes', 'success', 0.02);
  let body = await scrape(source);
  const labels = { publisher: 'mes', type: 'webhook' };
  t.is(seriesValue(body, 'tagd_publisher_status', { ...labels, status: 'Error' }), 1);
  t.is(seriesValue(body, 'tagd_publisher_status', { ...labels, status: 'On' }), 0);
  t.is(seriesValue(body, 'tagd_publisher_deliveries_total', { ...labels, outcome: 'success' }), 4);
  t.is(seriesValue(body, 'tagd_publisher_deliveries_total', { ...labels, outcome: 'failure' }), 2);
  t.is(seriesValue(body, 'tagd_publisher_delivered_samples_total', labels), 40);
  t.is(seriesValue(body, 'tagd_publisher_dropped_samples_total', labels), 3);
  t.is(seriesValue(body, 'tagd_publisher_queue_depth', labels), 12);
  t.is(seriesValue(body, 'tagd_publisher_oldest_queued_age_seconds', labels), 10);
  t.is(
    seriesValue(body, 'tagd_publisher_delivery_duration_seconds_count', {
      ...labels,
      outcome: 'failure',
    }),
    1,
  );
  now += 5000;
  queues[0] = { name: 'mes', depth: 0 };
  body = await scrape(source);
  t.is(seriesValue(body, 'tagd_publisher_oldest_queued_age_seconds', labels), 0);

  t.deepEqual(samplesOf(body, 'tagd_outbox_messages', labels), [], 'no outbox, no series');

  port.removed('mes');
  body = await scrape(source);
  t.deepEqual(samplesOf(body, 'tagd_publisher_delivery_duration_seconds_count', labels), []);
});

test('history series are read from the logger counters', async (t) => {
  const source = metrics();
  const stats: HistoryLoggerStats = {
    buffered: 17,
    bufferLimit: 100_000,
    appended: 1000,
    dropped: 5,
    failedAppends: 2,
    rejected: 1,
    transactions: 12,
  };
  source.watchHistory({ stats: () => stats });
  const body = await scrape(source);
  t.is(seriesValue(body, 'tagd_history_buffered_samples'), 17);
  t.is(seriesValue(body, 'tagd_history_appended_samples_total'), 1000);
  t.is(seriesValue(body, 'tagd_history_dropped_samples_total'), 5);
  t.is(seriesValue(body, 'tagd_history_rejected_samples_total'), 1);
  t.is(seriesValue(body, 'tagd_history_failed_appends_total'), 2);
  t.is(seriesValue(body, 'tagd_history_transactions_total'), 12);
});

test('sign-in failures and lockouts, with neither names nor addresses as labels', async (t) => {
  const source = metrics();
  const limiter = new SignInLimiter(
    () => 0,
    { perAccount: 2, perAddress: 3, windowMs: 60_000 },
    source.signIn,
  );
  limiter.recordFailure('alice', '192.0.2.7');
  limiter.recordFailure('alice', '192.0.2.7'); // alice reaches 2: locked
  limiter.recordFailure('bob', '192.0.2.7'); // the address reaches 3: locked
  limiter.recordFailure('bob', '192.0.2.7'); // already locked: no new lockout
  const body = await scrape(source);
  t.is(seriesValue(body, 'tagd_signin_failures_total'), 4);
  t.is(seriesValue(body, 'tagd_signin_lockouts_total', { scope: 'account' }), 2, 'alice, then bob');
  t.is(seriesValue(body, 'tagd_signin_lockouts_total', { scope: 'address' }), 1);
  t.notRegex(body, /alice|bob|192\.0\.2\.7/);
});

test('API requests by route template, method and status, with a duration histogram', async (t) => {
  const source = metrics();
  const api = source.api(() => true);
  api.requestEnded('/api/v2/Tags/Sample/{fullTagPath}', 'GET', 200, 0.0004);
  api.requestEnded('/api/v2/Tags/Sample/{fullTagPath}', 'GET', 200, 0.002);
  api.requestEnded('/api/v2/Tags/Sample/{fullTagPath}', 'GET', 404, 0.001);
  const body = await scrape(source);
  const route = { route: '/api/v2/Tags/Sample/{fullTagPath}', method: 'GET' };
  t.is(seriesValue(body, 'tagd_http_requests_total', { ...route, status: '200' }), 2);
  t.is(seriesValue(body, 'tagd_http_requests_total', { ...route, status: '404' }), 1);
  t.is(seriesValue(body, 'tagd_http_request_duration_seconds_count', route), 3);
  // Buckets are cumulative and their bound inclusive (le): 0.001 falls in le="0.001".
  const bucket = (le: string) =>
    seriesValue(body, 'tagd_http_request_duration_seconds_bucket', { ...route, le });
  t.is(bucket('0.0005'), 1);
  t.is(bucket('0.001'), 2);
  t.is(bucket('0.0025'), 3);
  t.is(bucket('+Inf'), 3);
  const sum = seriesValue(body, 'tagd_http_request_duration_seconds_sum', route) ?? 0;
  t.true(Math.abs(sum - 0.0034) < 1e-12);
  t.regex(body, /# TYPE tagd_http_request_duration_seconds histogram/);
  t.true(api.allowLoopbackWithoutToken());
});

test('outbox series for publishers that keep one (MQTT)', async (t) => {
  const source = metrics();
  const queues: PublisherQueue[] = [
    { name: 'broker', depth: 3, outbox: { messages: 3, bytes: 420, dropped: 7 } },
  ];
  source.publisherKind('mqtt', () => ({
    list: () => [
      {
        name: 'broker',
        status: 'Error',
        counters: { batches: 0, samples: 0, failures: 1, skippedTicks: 0, droppedSamples: 0 },
      },
    ],
    queues: () => queues,
  }));
  const body = await scrape(source);
  const labels = { publisher: 'broker', type: 'mqtt' };
  t.is(seriesValue(body, 'tagd_publisher_status', { ...labels, status: 'Error' }), 1);
  t.is(seriesValue(body, 'tagd_publisher_queue_depth', labels), 3);
  t.is(seriesValue(body, 'tagd_outbox_messages', labels), 3);
  t.is(seriesValue(body, 'tagd_outbox_bytes', labels), 420);
  t.is(seriesValue(body, 'tagd_outbox_dropped_messages_total', labels), 7);
});

test('alarm e-mail series are read from the notifier when scraped; none before it exists', async (t) => {
  const source = metrics();
  t.false((await scrape(source)).includes('tagd_notification_email_status{'));
  const state: EmailNotifierState = {
    status: 'Error',
    reason: 'e-mail could not be sent: EAUTH: Invalid login',
    sent: 4,
    failed: 2,
    retries: 9,
    queued: 1,
  };
  source.watchNotifications({ state: () => state });
  const body = await scrape(source);
  t.is(seriesValue(body, 'tagd_notification_email_status', { status: 'Error' }), 1);
  t.is(seriesValue(body, 'tagd_notification_email_status', { status: 'On' }), 0);
  t.is(seriesValue(body, 'tagd_notification_emails_total', { outcome: 'sent' }), 4);
  t.is(seriesValue(body, 'tagd_notification_emails_total', { outcome: 'failed' }), 2);
  t.is(seriesValue(body, 'tagd_notification_email_retries_total'), 9);
  t.is(seriesValue(body, 'tagd_notification_email_queue_depth'), 1);
});

test('Sparkplug store-and-forward series: stored and dropped samples, the host, the catch-up, commands', async (t) => {
  const source = metrics();
  const queues: PublisherQueue[] = [
    {
      name: 'edge',
      depth: 2,
      outbox: { messages: 2, bytes: 900, dropped: 1, samples: 740, droppedSamples: 500 },
      sparkplug: {
        primaryHostOnline: true,
        catchingUp: true,
        commandsWritten: 4,
        commandsRefused: 2,
      },
    },
    { name: 'json', depth: 0, outbox: { messages: 0, bytes: 0, dropped: 0 } },
    { name: 'plain-spb', depth: 0, sparkplug: { commandsWritten: 0, commandsRefused: 1 } },
  ];
  source.publisherKind('mqtt', () => ({ list: () => [], queues: () => queues }));
  const body = await scrape(source);
  const edge = { publisher: 'edge', type: 'mqtt' };
  t.is(seriesValue(body, 'tagd_outbox_samples', edge), 740);
  t.is(seriesValue(body, 'tagd_outbox_dropped_samples_total', edge), 500);
  t.is(seriesValue(body, 'tagd_sparkplug_primary_host_online', edge), 1);
  t.is(seriesValue(body, 'tagd_sparkplug_catching_up', edge), 1);
  t.is(seriesValue(body, 'tagd_sparkplug_commands_total', { ...edge, outcome: 'written' }), 4);
  t.is(seriesValue(body, 'tagd_sparkplug_commands_total', { ...edge, outcome: 'refused' }), 2);
  const json = { publisher: 'json', type: 'mqtt' };
  t.deepEqual(samplesOf(body, 'tagd_outbox_samples', json), [], 'a json outbox counts messages');
  const plain = { publisher: 'plain-spb', type: 'mqtt' };
  t.deepEqual(samplesOf(body, 'tagd_sparkplug_primary_host_online', plain), [], 'no primary host');
  t.is(seriesValue(body, 'tagd_sparkplug_commands_total', { ...plain, outcome: 'refused' }), 1);
});
