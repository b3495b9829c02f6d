import { hostname } from 'node:os';
import test, { type ExecutionContext } from 'ava';
import { connectAsync } from 'mqtt';
import { MqttPublisher, mqttHealthTagIds } from '../../../src/publishers/mqtt/mqtt-publisher.js';
import { mqttConfigSchema } from '../../../src/publishers/mqtt/schema.js';
import { decode, encode } from '../../../src/publishers/mqtt/sparkplug-payloads.js';
import { Collections } from '../../../src/tags/collections.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { sample } from '../../helpers/clock-sample.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { type Mosquitto, startMosquitto } from '../../helpers/mosquitto.js';
import { type ReceivedMessage, subscribe } from '../../helpers/mqtt-subscriber.js';
import { tempDir } from '../../helpers/temp-dir.js';

const t0 = Date.UTC(2026, 0, 1);

/** Decoded with the same library (Tahu's), numbers as plain numbers. */
function payloadOf(message: ReceivedMessage | undefined) {
  const decoded = decode(message?.payload ?? Buffer.alloc(0));
  const num = (value: unknown) =>
    typeof value === 'object' && value !== null && 'low' in value
      ? (value as unknown as { toNumber(): number }).toNumber()
      : value;
  return {
    seq: num(decoded.seq) as number | undefined,
    timestamp: num(decoded.timestamp) as number,
    metrics: (decoded.metrics ?? []).map((metric) => ({
      name: metric.name ?? undefined,
      alias: num(metric.alias) as number | undefined,
      type: metric.type,
      value: num(metric.value),
      timestamp: num(metric.timestamp) as number,
      quality: metric.properties?.Quality?.value,
    })),
  };
}

async function setup(
  t: ExecutionContext,
  broker: Mosquitto,
  stateDir?: string,
  loggingMode = 'On Change',
) {
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  store.write([
    sample(clock, 'Boiler1/Water/Temperature', 71.5),
    sample(clock, 'Boiler1/Burner/Running', true),
    sample(clock, 'Boiler1/Model', 'BX-200'),
    sample(clock, 'Press1/Force', undefined, 'Bad'),
    sample(clock, 'Press1/Strokes', 12, 'Stale'),
  ]);
  const collections = new Collections(store, [
    { name: 'plant', members: ['Boiler1/**', 'Press1/**'] },
  ]);
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
      loggingMode,
      updateIntervalMs: 100,
    }),
    {
      store,
      collections,
      clock,
      logger: logs.logger,
      stateDir: stateDir ?? (await tempDir(t)),
    },
  );
  t.teardown(() => publisher.stop());
  const statusIs = (status: string) =>
    new Promise<void>((resolve) => {
      const id = mqttHealthTagIds('spb').status;
      if (store.get(id)?.value === status) return resolve();
      const off = store.subscribe((updates) => {
        if (updates.some((u) => u.sample.fullTagId === id && u.sample.value === status)) {
          off();
          resolve();
        }
      });
    });
  return { clock, store, publisher, logs, statusIs };
}

test('NBIRTH then one DBIRTH per driver, then DDATA by alias; qualities as properties', async (t) => {
  const broker = await startMosquitto(t);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/#');
  const { clock, store, publisher, statusIs } = await setup(t, broker);
  const on = statusIs('On');
  await publisher.start();
  await on;
  const births = await sub.waitForCount(3);
  t.deepEqual(
    births.map((m) => m.topic),
    [
      'spBv1.0/Plant1/NBIRTH/gw1',
      'spBv1.0/Plant1/DBIRTH/gw1/Boiler1',
      'spBv1.0/Plant1/DBIRTH/gw1/Press1',
    ],
  );
  t.true(births.every((m) => !m.retain && m.qos === 1));
  const nbirth = payloadOf(births[0]);
  t.is(nbirth.seq, 0);
  t.deepEqual(
    nbirth.metrics.map((m) => [m.name, m.type, m.value]),
    [
      ['bdSeq', 'UInt64', 0],
      ['Node Control/Rebirth', 'Boolean', false],
    ],
  );
  const boiler = payloadOf(births[1]);
  t.is(boiler.seq, 1);
  t.deepEqual(boiler.metrics, [
    {
      name: 'Water/Temperature',
      alias: 1,
      type: 'Double',
      value: 71.5,
      timestamp: t0,
      quality: 192,
    },
    { name: 'Burner/Running', alias: 2, type: 'Boolean', value: true, timestamp: t0, quality: 192 },
    { name: 'Model', alias: 3, type: 'String', value: 'BX-200', timestamp: t0, quality: 192 },
  ]);
  const press = payloadOf(births[2]);
  t.is(press.seq, 2);
  t.deepEqual(press.metrics, [
    { name: 'Force', alias: 4, type: 'Double', value: null, timestamp: t0, quality: 0 },
    { name: 'Strokes', alias: 5, type: 'Double', value: 12, timestamp: t0, quality: 64 },
  ]);

  await publisher.idle();
  clock.advance(100);
  store.write([sample(clock, 'Boiler1/Water/Temperature', 72)]);
  clock.advance(100);
  const [ddata] = (await sub.waitForCount(4)).slice(3);
  t.is(ddata?.topic, 'spBv1.0/Plant1/DDATA/gw1/Boiler1');
  const data = payloadOf(ddata);
  t.is(data.seq, 3);
  t.deepEqual(data.metrics, [
    { name: undefined, alias: 1, type: 'Double', value: 72, timestamp: t0 + 100, quality: 192 },
  ]);
});

test('seq wraps from 255 to 0 across DDATA', async (t) => {
  const broker = await startMosquitto(t);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/DDATA/#');
  const { clock, store, publisher, statusIs } = await setup(t, broker);
  const on = statusIs('On');
  await publisher.start();
  await on;
  await publisher.idle();
  // Births took seq 0–2; 260 DDATA take 3…255, then 0…6.
  for (let i = 1; i <= 260; i++) {
    store.write([sample(clock, 'Boiler1/Water/Temperature', 70 + i)]);
    clock.advance(100);
    await publisher.idle();
  }
  const messages = await sub.waitForCount(260);
  const seqs = messages.map((m) => payloadOf(m).seq);
  t.deepEqual(seqs.slice(250, 256), [253, 254, 255, 0, 1, 2]);
  t.deepEqual(
    messages.map((m) => payloadOf(m).metrics[0]?.value),
    Array.from({ length: 260 }, (_, i) => 71 + i),
  );
});

test('NCMD Node Control/Rebirth: births again with the same bdSeq and the same aliases', async (t) => {
  const broker = await startMosquitto(t);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/+/gw1/#');
  const { publisher, statusIs, logs } = await setup(t, broker);
  const on = statusIs('On');
  await publisher.start();
  await on;
  await sub.waitForCount(3);
  await publisher.idle();
  const host = await connectAsync(broker.url, { reconnectPeriod: 0 });
  t.teardown(() => host.endAsync(true));
  await host.publishAsync(
    'spBv1.0/Plant1/NCMD/gw1',
    encode({
      timestamp: Date.now(),
      metrics: [{ name: 'Node Control/Rebirth', type: 'Boolean', value: true }],
    }),
  );
  const births = (list: ReceivedMessage[]) => list.filter((m) => !m.topic.includes('/NCMD/'));
  const all = births(await sub.waitFor((list) => births(list).length >= 6));
  const again = all.slice(3);
  t.deepEqual(
    again.map((m) => m.topic),
    [
      'spBv1.0/Plant1/NBIRTH/gw1',
      'spBv1.0/Plant1/DBIRTH/gw1/Boiler1',
      'spBv1.0/Plant1/DBIRTH/gw1/Press1',
    ],
  );
  t.is(payloadOf(again[0]).seq, 0);
  t.is(payloadOf(again[0]).metrics[0]?.value, payloadOf(all[0]).metrics[0]?.value);
  const aliases = (m: ReceivedMessage | undefined) =>
    payloadOf(m).metrics.map((metric) => [metric.name, metric.alias]);
  t.deepEqual(aliases(again[1]), aliases(all[1]));
  t.deepEqual(aliases(again[2]), aliases(all[2]));
  t.regex(logs.text(), /Rebirth requested by a host application/);
});

test('a new member is announced by a rebirth before its data', async (t) => {
  const broker = await startMosquitto(t);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/+/gw1/#');
  const { clock, store, publisher, statusIs } = await setup(t, broker);
  const on = statusIs('On');
  await publisher.start();
  await on;
  await sub.waitForCount(3);
  await publisher.idle();
  store.write([sample(clock, 'Press1/Door', false)]);
  clock.advance(100);
  await publisher.idle();
  const all = await sub.waitForCount(6);
  t.deepEqual(
    all.slice(3).map((m) => m.topic),
    [
      'spBv1.0/Plant1/NBIRTH/gw1',
      'spBv1.0/Plant1/DBIRTH/gw1/Boiler1',
      'spBv1.0/Plant1/DBIRTH/gw1/Press1',
    ],
  );
  const door = payloadOf(all[5]).metrics.find((m) => m.name === 'Door');
  t.deepEqual([door?.alias, door?.type, door?.value], [6, 'Boolean', false]);
});

test('bdSeq: NDEATH (the Will, and a clean stop) carries the NBIRTH bdSeq; the next connection takes the next', async (t) => {
  const broker = await startMosquitto(t);
  const stateDir = await tempDir(t);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/+/gw1');
  const { publisher, statusIs } = await setup(t, broker, stateDir);
  const on = statusIs('On');
  await publisher.start();
  await on;
  await sub.waitForCount(1);
  await publisher.idle();
  // Another client with the same id takes the session over: the broker publishes the Will.
  const usurper = await connectAsync(broker.url, {
    clientId: `tagd-${hostname()}-spb`,
    reconnectPeriod: 0,
  });
  t.teardown(() => usurper.endAsync(true));
  const [, death] = await sub.waitForCount(2);
  t.is(death?.topic, 'spBv1.0/Plant1/NDEATH/gw1');
  t.is(payloadOf(death).metrics[0]?.name, 'bdSeq');
  t.is(payloadOf(death).metrics[0]?.value, 0);
  await usurper.endAsync(true);
  await publisher.stop();

  // A new start: bdSeq 1 in both the NBIRTH and the NDEATH of its clean stop.
  const onAgain = statusIs('On');
  await publisher.start();
  await onAgain;
  const third = await sub.waitFor(
    (list) => list.filter((m) => m.topic.includes('NBIRTH')).length >= 2,
  );
  const nbirth = third.filter((m) => m.topic.includes('NBIRTH'))[1];
  t.is(payloadOf(nbirth).metrics[0]?.value, 1);
  await publisher.idle();
  await publisher.stop();
  const final = await sub.waitFor(
    (list) => list.filter((m) => m.topic.includes('NDEATH')).length >= 2,
  );
  const cleanDeath = final.filter((m) => m.topic.includes('NDEATH'))[1];
  t.is(payloadOf(cleanDeath).metrics[0]?.value, 1);
});

test('a clean stop: DDEATH per device, then NDEATH, seq continuing', async (t) => {
  const broker = await startMosquitto(t);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/#');
  const { publisher, statusIs } = await setup(t, broker);
  const on = statusIs('On');
  await publisher.start();
  await on;
  await sub.waitForCount(3);
  await publisher.idle();
  await publisher.stop();
  const all = await sub.waitForCount(6);
  t.deepEqual(
    all.slice(3).map((m) => m.topic),
    [
      'spBv1.0/Plant1/DDEATH/gw1/Boiler1',
      'spBv1.0/Plant1/DDEATH/gw1/Press1',
      'spBv1.0/Plant1/NDEATH/gw1',
    ],
  );
  t.deepEqual(
    all.slice(3, 5).map((m) => payloadOf(m).seq),
    [3, 4],
  );
  t.is(payloadOf(all[5]).seq, undefined);
  t.is(publisher.state().status, 'Off');
});

test('Everything: every update of booleans and strings too, in order, by alias', async (t) => {
  const broker = await startMosquitto(t);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/DDATA/#');
  const { clock, store, publisher, statusIs } = await setup(t, broker, undefined, 'Everything');
  const on = statusIs('On');
  await publisher.start();
  await on;
  await publisher.idle();
  store.write([sample(clock, 'Boiler1/Burner/Running', false)]);
  store.write([sample(clock, 'Boiler1/Burner/Running', true)]);
  store.write([sample(clock, 'Boiler1/Model', 'BX-300')]);
  clock.advance(100);
  const [ddata] = await sub.waitForCount(1);
  t.deepEqual(
    payloadOf(ddata).metrics.map((m) => [m.alias, m.type, m.value]),
    [
      [2, 'Boolean', false],
      [2, 'Boolean', true],
      [3, 'String', 'BX-300'],
    ],
  );
});

test('tags removed from the store: DDEATH for a device left without members, births for one that lost metrics', async (t) => {
  const broker = await startMosquitto(t);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/#');
  const { store, publisher, statusIs } = await setup(t, broker);
  const on = statusIs('On');
  await publisher.start();
  await on;
  await sub.waitForCount(3);
  await publisher.idle();

  // As when the driver of Press1 is removed.
  store.remove(['Press1/Force', 'Press1/Strokes']);
  const afterDeath = await sub.waitForCount(4);
  t.is(afterDeath[3]?.topic, 'spBv1.0/Plant1/DDEATH/gw1/Press1');
  t.is(payloadOf(afterDeath[3]).seq, 3);

  // Boiler1 remains but loses a metric: its DBIRTH no longer holds, so births again.
  store.remove(['Boiler1/Model']);
  const all = await sub.waitForCount(6);
  t.deepEqual(
    all.slice(4).map((m) => m.topic),
    ['spBv1.0/Plant1/NBIRTH/gw1', 'spBv1.0/Plant1/DBIRTH/gw1/Boiler1'],
  );
  t.deepEqual(
    payloadOf(all[5])
      .metrics.map((metric) => metric.name)
      .sort(),
    ['Burner/Running', 'Water/Temperature'],
  );
});
