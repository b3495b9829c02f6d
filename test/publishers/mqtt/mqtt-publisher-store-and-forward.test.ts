/**
 * Sparkplug store-and-forward (a publisher with `primaryHostId`) against a real Mosquitto and a
 * scripted primary host (test/helpers/sparkplug-host.ts): births wait for the host's STATE,
 * data is stored while the host is offline or the broker away, then births, the stored data in
 * order as historical DDATA with their own timestamps, then live data.
 */
import test, { type ExecutionContext } from 'ava';
import { MqttPublisher, mqttHealthTagIds } from '../../../src/publishers/mqtt/mqtt-publisher.js';
import { mqttConfigSchema } from '../../../src/publishers/mqtt/schema.js';
import { Collections } from '../../../src/tags/collections.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { sample } from '../../helpers/clock-sample.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { type Mosquitto, startMosquitto } from '../../helpers/mosquitto.js';
import { subscribe } from '../../helpers/mqtt-subscriber.js';
import { decodeSparkplug, scriptedHost } from '../../helpers/sparkplug-host.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { until } from '../../helpers/until.js';

const t0 = Date.UTC(2026, 0, 1);

async function setup(
  t: ExecutionContext,
  broker: Mosquitto,
  options: { bufferLimitMB?: number; tags?: string[] } = {},
) {
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  const tags = options.tags ?? ['Boiler1/Temperature'];
  store.write(tags.map((id) => sample(clock, id, 0)));
  const collections = new Collections(store, [{ name: 'plant', members: ['Boiler1/**'] }]);
  await collections.start();
  t.teardown(() => collections.stop());
  const logs = captureLogs();
  const publisher = new MqttPublisher(
    mqttConfigSchema.parse({
      name: 'spb',
      brokerUrl: broker.url,
      collections: ['plant'],
      format: 'sparkplugB',
      groupId: 'Plant1',
      edgeNodeId: 'gw1',
      primaryHostId: 'central',
      loggingMode: 'Everything',
      updateIntervalMs: 100,
      ...(options.bufferLimitMB !== undefined ? { bufferLimitMB: options.bufferLimitMB } : {}),
    }),
    { store, collections, clock, logger: logs.logger, stateDir: await tempDir(t) },
  );
  t.teardown(() => publisher.stop());
  /** Writes `value` to the tag at the clock's time, then one interval passes (a tick). */
  const change = (value: number, tag = tags[0] as string) => {
    clock.advance(10);
    store.write([sample(clock, tag, value)]);
    clock.advance(90);
  };
  return { clock, store, publisher, logs, change };
}

test('host offline: stored, no births; host online: births, then the stored data in order as historical, then live', async (t) => {
  const broker = await startMosquitto(t);
  const host = await scriptedHost(t, broker.url);
  await host.state(false, 1_000);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/#');
  const { clock, publisher, change, store, logs } = await setup(t, broker);
  await publisher.start();
  await until(() => publisher.state().connected, 'connected', 20_000);
  // The STATE subscription is in flight until it is acknowledged (and the retained STATE sent).
  await publisher.idle();
  const stamps: number[] = [];
  for (let value = 1; value <= 5; value++) {
    change(value);
    stamps.push(clock.now() - 90);
  }
  t.is(publisher.state().sparkplug?.storedSamples, 5);
  // Offline (an offline STATE, as no STATE at all) since the start.
  t.false(publisher.state().sparkplug?.primaryHostOnline);
  t.is(publisher.state().sparkplug?.primaryHostSince, new Date(t0).toISOString());
  t.is(store.get(mqttHealthTagIds('spb').storedSamples)?.value, 5);
  t.is(publisher.state().status, 'Error');
  t.regex(publisher.state().reason ?? '', /primary host 'central'/);
  await publisher.idle();
  t.is(sub.messages.length, 0, 'nothing is published before the host is online');

  const onlineAt = clock.now();
  await host.state(true, 2_000);
  await sub.waitFor((list) => decodeSparkplug(list).some((m) => m.type === 'DDATA'));
  await until(() => publisher.state().sparkplug?.storedSamples === 0, 'the outbox is empty');
  await publisher.idle();
  change(6);
  const live = await sub.waitFor((list) =>
    decodeSparkplug(list).some((m) => m.metrics.some((x) => x.value === 6)),
  );
  const decoded = decodeSparkplug(live);
  t.deepEqual(
    decoded.map((m) => [m.type, m.device, m.seq]),
    [
      ['NBIRTH', undefined, 0],
      ['DBIRTH', 'Boiler1', 1],
      ['DDATA', 'Boiler1', 2],
      ['DDATA', 'Boiler1', 3],
    ],
  );
  const historical = decoded[2]?.metrics ?? [];
  t.deepEqual(
    historical.map((m) => [m.tag, m.value, m.timestamp, m.historical]),
    stamps.map((stamp, i) => ['Boiler1/Temperature', i + 1, stamp, true]),
  );
  const liveMetric = decoded[3]?.metrics[0];
  t.is(liveMetric?.value, 6);
  t.false(liveMetric?.historical);
  const state = publisher.state();
  t.is(state.status, 'On');
  t.like(state.sparkplug, {
    primaryHostOnline: true,
    primaryHostSince: new Date(onlineAt).toISOString(),
    storedSamples: 0,
    forwardedSamples: 5,
    catchingUp: false,
  });
  t.is(store.get(mqttHealthTagIds('spb').primaryHostOnline)?.value, true);
  t.regex(logs.text(), /caught up, 5 stored samples forwarded/);
});

test('host offline after the births: NDEATH and a new session; a stale STATE is ignored; online again: births with the next bdSeq, then the stored data', async (t) => {
  const broker = await startMosquitto(t);
  const host = await scriptedHost(t, broker.url);
  await host.state(true, 1_000);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/#');
  const { publisher, change, clock, logs } = await setup(t, broker);
  await publisher.start();
  await sub.waitFor((list) => decodeSparkplug(list).some((m) => m.type === 'DBIRTH'));
  await publisher.idle();
  change(1);
  await sub.waitFor((list) => decodeSparkplug(list).some((m) => m.type === 'DDATA'));

  const offlineAt = clock.now();
  await host.state(false, 1_000);
  await sub.waitFor((list) => decodeSparkplug(list).some((m) => m.type === 'NDEATH'));
  // The new session connects at once and waits for the host.
  await until(() => publisher.state().connected, 'reconnected', 20_000);
  change(2);
  change(3);
  // A tick while the new session's subscription is in flight stores right after it.
  await publisher.idle();
  t.is(publisher.state().sparkplug?.storedSamples, 2);
  // An online STATE older than the offline one followed: a retained message of an old session.
  await host.state(true, 500);
  await until(() => logs.text().includes('Stale Sparkplug STATE ignored'), 'ignored', 20_000);
  t.false(publisher.state().sparkplug?.primaryHostOnline);
  t.is(publisher.state().sparkplug?.primaryHostSince, new Date(offlineAt).toISOString());
  change(4);
  await host.state(true, 3_000);
  await sub.waitFor((list) =>
    decodeSparkplug(list).some((m) => m.metrics.some((x) => x.value === 4 && x.historical)),
  );
  await publisher.idle();
  change(5);
  const decoded = decodeSparkplug(
    await sub.waitFor((list) =>
      decodeSparkplug(list).some((m) => m.metrics.some((x) => x.value === 5)),
    ),
  );
  t.deepEqual(
    decoded.map((m) => [m.type, m.type === 'NDEATH' ? undefined : m.seq, m.bdSeq]),
    [
      ['NBIRTH', 0, 0],
      ['DBIRTH', 1, undefined],
      ['DDATA', 2, undefined],
      ['DDEATH', 3, undefined],
      ['NDEATH', undefined, 0],
      ['NBIRTH', 0, 1],
      ['DBIRTH', 1, undefined],
      ['DDATA', 2, undefined],
      ['DDATA', 3, undefined],
    ],
  );
  t.deepEqual(
    decoded[7]?.metrics.map((m) => [m.value, m.historical]),
    [
      [2, true],
      [3, true],
      [4, true],
    ],
  );
  t.deepEqual(
    decoded[8]?.metrics.map((m) => [m.value, m.historical]),
    [[5, false]],
  );
  t.true(clock.now() > t0);
});

test('the buffer limit drops the oldest stored samples and counts them; the newest are forwarded in order', async (t) => {
  const broker = await startMosquitto(t);
  const host = await scriptedHost(t, broker.url);
  await host.state(false, 1_000);
  const tags = Array.from(
    { length: 100 },
    (_, i) => `Boiler1/Sensor-${String(i).padStart(4, '0')}`,
  );
  const { publisher, store, clock, logs } = await setup(t, broker, { bufferLimitMB: 1, tags });
  await publisher.start();
  const rounds = 300;
  for (let round = 1; round <= rounds; round++) {
    clock.advance(10);
    store.write(tags.map((id) => sample(clock, id, round)));
    clock.advance(90);
  }
  const state = publisher.state().sparkplug;
  const stored = state?.storedSamples ?? 0;
  const dropped = state?.droppedSamples ?? 0;
  t.true(dropped > 0, 'some were dropped');
  t.is(stored + dropped, rounds * tags.length);
  t.regex(logs.text(), /the outbox is full \(1 MB\)/);
  const queue = (
    publisher as unknown as { queue(): { outbox?: { droppedSamples?: number } } }
  ).queue();
  t.is(queue.outbox?.droppedSamples, dropped);

  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/DDATA/#');
  const births = await subscribe(t, broker.url, 'spBv1.0/Plant1/DBIRTH/#');
  await host.state(true, 2_000);
  await births.waitForCount(1);
  await until(() => publisher.state().sparkplug?.storedSamples === 0, 'forwarded', 60_000);
  const got = await sub.waitFor(
    (list) =>
      decodeSparkplug([...births.messages, ...list]).flatMap((m) => m.metrics).length >=
      stored + tags.length,
  );
  const metrics = decodeSparkplug([...births.messages, ...got])
    .filter((m) => m.type === 'DDATA')
    .flatMap((m) => m.metrics);
  t.is(metrics.length, stored);
  t.true(metrics.every((m) => m.historical));
  // The newest `stored` samples: whole rounds (a stored message is one tick's batch), in order.
  const firstRound = rounds - stored / tags.length + 1;
  const expected: [string, number][] = [];
  for (let round = firstRound; round <= rounds; round++) {
    for (const id of tags) expected.push([id, round]);
  }
  t.deepEqual(
    metrics.map((m) => [m.tag, m.value]),
    expected,
  );
});

test('broker killed (kill -9) and restarted: data stored meanwhile arrives after the new births, nothing lost', async (t) => {
  const broker = await startMosquitto(t);
  let host = await scriptedHost(t, broker.url);
  await host.state(true, 1_000);
  const first = await subscribe(t, broker.url, 'spBv1.0/Plant1/#');
  const { publisher, change, clock } = await setup(t, broker);
  await publisher.start();
  await first.waitFor((list) => decodeSparkplug(list).some((m) => m.type === 'DBIRTH'));
  await publisher.idle();
  for (let value = 1; value <= 3; value++) {
    change(value);
    await publisher.idle();
  }
  await first.waitFor(
    (list) => decodeSparkplug(list).filter((m) => m.type === 'DDATA').length === 3,
  );
  await broker.kill();
  await until(() => !publisher.state().connected, 'the loss is seen', 20_000);
  for (let value = 4; value <= 8; value++) change(value);
  await publisher.idle();
  t.is(publisher.state().sparkplug?.storedSamples, 5);
  await broker.restart();
  // A broker without persistence lost the retained STATE: the host connects and says online.
  host = await scriptedHost(t, broker.url);
  const second = await subscribe(t, broker.url, 'spBv1.0/Plant1/#');
  await host.state(true, 5_000);
  // The publisher's reconnection wait runs on the manual clock.
  clock.advance(1_000);
  await second.waitFor((list) =>
    decodeSparkplug(list).some((m) => m.metrics.some((x) => x.value === 8)),
  );
  await until(() => publisher.state().sparkplug?.storedSamples === 0, 'forwarded');
  await publisher.idle();
  change(9);
  const decoded = decodeSparkplug(
    await second.waitFor((list) =>
      decodeSparkplug(list).some((m) => m.metrics.some((x) => x.value === 9)),
    ),
  );
  t.deepEqual(
    decoded.map((m) => m.type),
    ['NBIRTH', 'DBIRTH', 'DDATA', 'DDATA'],
  );
  t.is(decoded[0]?.bdSeq, 1);
  t.deepEqual(
    decoded[2]?.metrics.map((m) => [m.value, m.historical]),
    [4, 5, 6, 7, 8].map((value) => [value, true]),
  );
  const firstValues = decodeSparkplug(first.messages)
    .filter((m) => m.type === 'DDATA')
    .flatMap((m) => m.metrics.map((x) => x.value));
  t.deepEqual(firstValues, [1, 2, 3]);
});

test('a reload while storing keeps the stored samples and the changes since the last tick', async (t) => {
  const broker = await startMosquitto(t);
  const host = await scriptedHost(t, broker.url);
  await host.state(false, 1_000);
  const { publisher, change, clock, store } = await setup(t, broker);
  await publisher.start();
  await until(() => publisher.state().connected, 'connected', 20_000);
  await publisher.idle();
  change(1);
  clock.advance(10);
  store.write([sample(clock, 'Boiler1/Temperature', 2)]);
  t.is(publisher.state().sparkplug?.storedSamples, 1);
  await publisher.reconfigure(
    mqttConfigSchema.parse({ ...publisher.config, updateIntervalMs: 200 }),
  );
  t.is(publisher.state().sparkplug?.storedSamples, 2);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/DDATA/#');
  const births = await subscribe(t, broker.url, 'spBv1.0/Plant1/DBIRTH/#');
  await host.state(true, 2_000);
  await births.waitForCount(1);
  const got = await sub.waitForCount(1);
  t.deepEqual(
    decodeSparkplug([...births.messages, ...got])
      .filter((m) => m.type === 'DDATA')
      .flatMap((m) => m.metrics.map((x) => [x.value, x.historical])),
    [
      [1, true],
      [2, true],
    ],
  );
});
