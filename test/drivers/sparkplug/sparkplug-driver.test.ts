import test, { type ExecutionContext } from 'ava';
import { connectAsync } from 'mqtt';
import { type Logger, pino } from 'pino';
import {
  type SparkplugDriverConfig,
  sparkplugDriverSchema,
} from '../../../drivers/sparkplug/schema.js';
import { SparkplugDriver } from '../../../drivers/sparkplug/sparkplug-driver.js';
import { type Clock, systemClock } from '../../../src/clock.js';
import type { Sample } from '../../../src/tags/sample.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { type Mosquitto, startMosquitto } from '../../helpers/mosquitto.js';
import { subscribe } from '../../helpers/mqtt-subscriber.js';
import { TcpRelay } from '../../helpers/opcua-proxy.js';
import {
  decodePayload,
  encodePayload,
  long64,
  ScriptedEdge,
} from '../../helpers/sparkplug-edge.js';
import { until } from '../../helpers/until.js';

interface Host {
  driver: SparkplugDriver;
  store: TagStore;
  broker: Mosquitto;
}

async function startHost(
  t: ExecutionContext,
  options: {
    clock?: Clock;
    broker?: Mosquitto;
    config?: Record<string, unknown>;
    logger?: Logger;
  } = {},
): Promise<Host> {
  const broker = options.broker ?? (await startMosquitto(t));
  const clock = options.clock ?? systemClock;
  const store = new TagStore({ clock });
  const config: SparkplugDriverConfig = sparkplugDriverSchema.parse({
    type: 'sparkplug',
    name: 'central',
    brokerUrl: broker.url,
    hostId: 'scada',
    ...options.config,
  });
  const driver = new SparkplugDriver(config, {
    store,
    clock,
    logger: options.logger ?? pino({ level: 'silent' }),
    stateDir: '/nonexistent',
  });
  t.teardown(() => driver.stop());
  // The host is online once its STATE is retained on the broker.
  const state = await subscribe(t, broker.url, 'spBv1.0/STATE/scada');
  await driver.start();
  await state.waitFor((messages) =>
    messages.some((message) => JSON.parse(message.payload.toString()).online === true),
  );
  return { driver, store, broker };
}

/** Resolves with the tag's sample once `predicate` holds for it (20 s safety net). */
function sampleWhere(
  store: TagStore,
  id: string,
  predicate: (sample: Sample) => boolean,
): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const sample = store.get(id);
      if (sample === undefined || !predicate(sample)) return false;
      unsubscribe();
      clearTimeout(timer);
      resolve(sample);
      return true;
    };
    const unsubscribe = store.subscribe(() => check());
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`${id}: condition not met; now ${JSON.stringify(store.get(id))}`));
    }, 20_000);
    check();
  });
}

const good = (value: unknown) => (sample: Sample) =>
  sample.quality === 'Good' && sample.value === value;

/** The Good values of one tag, in the order the store received them. */
function goodValues(store: TagStore, id: string): unknown[] {
  const values: unknown[] = [];
  store.subscribe((updates) => {
    for (const { sample } of updates)
      if (sample.fullTagId === id && sample.quality === 'Good') values.push(sample.value);
  });
  return values;
}

const isOffline = (payload: Buffer) => JSON.parse(payload.toString()).online === false;

test('the Primary Host publishes its STATE retained, with the offline STATE as Will and at stop', async (t) => {
  const { driver, broker } = await startHost(t);
  const late = await subscribe(t, broker.url, 'spBv1.0/STATE/scada');
  const [retained] = await late.waitForCount(1);
  t.true(retained?.retain);
  const online = JSON.parse(retained?.payload.toString() ?? '{}');
  t.is(online.online, true);
  t.is(typeof online.timestamp, 'number');
  await driver.stop();
  const [offline] = await late
    .waitFor((messages) => messages.some((message) => isOffline(message.payload)))
    .then((messages) => messages.filter((message) => isOffline(message.payload)));
  // The connection's timestamp, as its Will (see the driver's stop()).
  const death = JSON.parse(offline?.payload.toString() ?? '{}');
  t.deepEqual(death, { online: false, timestamp: online.timestamp });
  t.true(offline?.qos === 1);
  // Retained for the edges that connect later.
  const later = await subscribe(t, broker.url, 'spBv1.0/STATE/scada');
  const [kept] = await later.waitForCount(1);
  t.deepEqual(JSON.parse(kept?.payload.toString() ?? '{}'), death);
});

test('an offline STATE of its own id while online (a late Will) is answered with the online STATE again', async (t) => {
  const { broker } = await startHost(t);
  const watcher = await subscribe(t, broker.url, 'spBv1.0/STATE/scada');
  const [first] = await watcher.waitForCount(1);
  const online = JSON.parse(first?.payload.toString() ?? '{}');
  const other = await connectAsync(broker.url, { reconnectPeriod: 0 });
  t.teardown(() => other.endAsync(true));
  await other.publishAsync(
    'spBv1.0/STATE/scada',
    JSON.stringify({ online: false, timestamp: online.timestamp - 1000 }),
    { qos: 1, retain: true },
  );
  // Sparkplug 3.0, tck-id-message-flow-hid-sparkplug-state-message-delivered.
  const messages = await watcher.waitForCount(3);
  t.deepEqual(JSON.parse(messages[2]?.payload.toString() ?? '{}'), online);
  const later = await subscribe(t, broker.url, 'spBv1.0/STATE/scada');
  const [retained] = await later.waitForCount(1);
  t.deepEqual(JSON.parse(retained?.payload.toString() ?? '{}'), online, 'retained online again');
});

test('a clean stop drains: what the broker queued for the host reaches the store before the stop resolves', async (t) => {
  const broker = await startMosquitto(t);
  // The host reaches the broker through a relay that can stop reading for it.
  const relay = await TcpRelay.start(broker.port);
  t.teardown(() => relay.stop());
  const logs = captureLogs('info');
  // An injected clock nobody advances: only the drain's end can end the stop (the bound's
  // real-time backstop is 10 s).
  const clock = new ManualClock(Date.now());
  const { driver, store } = await startHost(t, {
    broker,
    clock,
    logger: logs.logger,
    config: { brokerUrl: `mqtt://127.0.0.1:${relay.port}`, stopDrainMs: 10_000 },
  });
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.followHost('scada');
  await edge.nbirth();
  await edge.dbirth('D', [{ name: 'x', alias: 1, type: 'Int32', value: 0 }]);
  await sampleWhere(store, 'central/G/N/D/x', good(0));
  const values = goodValues(store, 'central/G/N/D/x');

  // A host too busy to read: the broker queues what the edge publishes (its STATE still says
  // online, so the edge publishes live and stores nothing).
  relay.hold();
  const count = 300;
  for (let i = 1; i <= count; i++)
    await edge.ddata('D', [{ alias: 1, type: 'Int32', value: i } as never]);
  t.deepEqual(values, []);
  const startedAt = Date.now();
  let stopped = false;
  const stopping = driver.stop().then(() => {
    stopped = true;
  });
  // The offline STATE goes out at once (only the broker-to-host way is held); the edge answers
  // it with its NDEATH, queued behind its DDATA.
  await until(
    () => edge.hostStates.some((state) => !state.online && !state.retain),
    'the edge saw the host offline',
  );
  t.false(stopped, 'the host has read nothing yet');
  relay.release();
  await stopping;
  t.deepEqual(
    values,
    Array.from({ length: count }, (_, index) => index + 1),
  );
  t.true(Date.now() - startedAt < 10_000, 'the NDEATH ended the drain, not the bound');
  const drained = logs.lines.find((line) => /drained before leaving/.test(line.msg ?? ''));
  t.like(drained, { messages: count + 1, dataMetrics: count, backlogRead: true });
  t.is(store.get('central/G/N/D/x')?.quality, 'Unavailable');
});

test('the drain is bounded: an edge that never sends NDEATH holds the stop stopDrainMs (injected clock), ingested meanwhile', async (t) => {
  const clock = new ManualClock(Date.now());
  const logs = captureLogs('info');
  const { driver, store, broker } = await startHost(t, {
    clock,
    logger: logs.logger,
    config: { stopDrainMs: 10_000 },
  });
  // An edge that does not follow this host (no primaryHostId): it keeps publishing.
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth([{ name: 'x', alias: 1, type: 'Int32', value: 0 }]);
  await sampleWhere(store, 'central/G/N/x', good(0));
  const watcher = await subscribe(t, broker.url, 'spBv1.0/STATE/scada');
  await watcher.waitForCount(1);
  let stopped = false;
  const stopping = driver.stop().then(() => {
    stopped = true;
  });
  await watcher.waitFor((messages) => messages.some((message) => isOffline(message.payload)));
  // Still ingesting: what the edge sends after the offline STATE reaches the store.
  await edge.ndata([{ alias: 1, type: 'Int32', value: 1 } as never]);
  await sampleWhere(store, 'central/G/N/x', good(1));
  clock.advance(9_999);
  await edge.ndata([{ alias: 1, type: 'Int32', value: 2 } as never]);
  await sampleWhere(store, 'central/G/N/x', good(2));
  t.false(stopped);
  clock.advance(1);
  await stopping;
  t.is(store.get('central/G/N/x')?.quality, 'Unavailable');
  const bound = logs.lines.find((line) => /stopped draining after 10000 ms/.test(line.msg ?? ''));
  t.like(bound, { nodesOnline: 1, nodes: ['G/N'], backlogRead: true, dataMetrics: 2 });
  t.regex(String(bound?.msg), /sent no NDEATH/);
});

test('the drain bound in real time: a stop with a node that never leaves resolves after stopDrainMs', async (t) => {
  const { driver, store, broker } = await startHost(t, { config: { stopDrainMs: 1_000 } });
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth([{ name: 'x', alias: 1, type: 'Int32', value: 0 }]);
  await sampleWhere(store, 'central/G/N/x', good(0));
  const startedAt = Date.now();
  await driver.stop();
  const took = Date.now() - startedAt;
  t.true(took >= 1_000, `${took} ms`);
  t.true(took < 11_000, `${took} ms (generous: a busy machine)`);
});

test('stopDrainMs 0: the host leaves at once, its offline STATE still published', async (t) => {
  const clock = new ManualClock(Date.now());
  const { driver, store, broker } = await startHost(t, { clock, config: { stopDrainMs: 0 } });
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth([{ name: 'x', alias: 1, type: 'Int32', value: 0 }]);
  await sampleWhere(store, 'central/G/N/x', good(0));
  const watcher = await subscribe(t, broker.url, 'spBv1.0/STATE/scada');
  await watcher.waitForCount(1);
  await driver.stop();
  await watcher.waitFor((messages) => messages.some((message) => isOffline(message.payload)));
  t.is(store.get('central/G/N/x')?.quality, 'Unavailable');
});

test('the Will: a host killed with the broker still up leaves STATE offline', async (t) => {
  const broker = await startMosquitto(t);
  const { driver } = await startHost(t, { broker });
  // A second client with the same Will is what the broker publishes when the host vanishes:
  // here the host's connection is cut by the broker itself (a client id taken over).
  const watcher = await subscribe(t, broker.url, 'spBv1.0/STATE/scada');
  await watcher.waitForCount(1);
  const clientId = (driver as unknown as { client: { options: { clientId: string } } }).client
    .options.clientId;
  const thief = await connectAsync(broker.url, { clientId, reconnectPeriod: 0 });
  t.teardown(() => thief.endAsync(true));
  const messages = await watcher.waitFor((list) =>
    list.some((message) => JSON.parse(message.payload.toString()).online === false),
  );
  t.true(messages.some((message) => JSON.parse(message.payload.toString()).online === false));
});

test('births declare tags with Sparkplug types, units, quality; data updates them by alias', async (t) => {
  const { store, broker, driver } = await startHost(t);
  const edge = await ScriptedEdge.connect(t, broker.url, 'Plant1', 'Line1', 7);
  await edge.nbirth([{ name: 'Uptime', alias: 1, type: 'UInt32', value: 4_000_000_000 }]);
  await edge.dbirth('Boiler', [
    {
      name: 'Water/Temperature',
      alias: 2,
      type: 'Double',
      value: 71.5,
      properties: {
        engUnit: { type: 'String', value: '°C' },
        Documentation: { type: 'String', value: 'Boiler water' },
      },
    },
    { name: 'Count', alias: 3, type: 'Int64', value: long64(-9_007_199_254_740_993n) },
    { name: 'Running', alias: 4, type: 'Boolean', value: true },
    {
      name: 'Pressure',
      alias: 5,
      type: 'Float',
      value: 2.5,
      properties: { Quality: { type: 'Int32', value: 64 } },
    },
    {
      name: 'Level',
      alias: 6,
      type: 'Double',
      value: null,
      isNull: true,
      properties: { Quality: { type: 'Int32', value: 0 } },
    },
  ]);
  const temperature = await sampleWhere(
    store,
    'central/Plant1/Line1/Boiler/Water/Temperature',
    good(71.5),
  );
  t.is(temperature.metadata?.unit, '°C');
  t.is(temperature.metadata?.description, 'Boiler water');
  t.is(
    (await sampleWhere(store, 'central/Plant1/Line1/Uptime', (s) => s.quality === 'Good')).value,
    4_000_000_000,
  );
  const count = await sampleWhere(
    store,
    'central/Plant1/Line1/Boiler/Count',
    (s) => s.quality === 'Good',
  );
  t.is(count.metadata?.valueText, '-9007199254740993');
  t.is(count.value, -9_007_199_254_740_992);
  const pressure = store.get('central/Plant1/Line1/Boiler/Pressure');
  t.is(pressure?.quality, 'Stale');
  t.is(pressure?.value, 2.5);
  t.is(store.get('central/Plant1/Line1/Boiler/Level')?.quality, 'Bad');
  t.is(store.get('central/Plant1/Line1/Boiler/Running')?.value, true);

  // DATA by alias only.
  await edge.ddata('Boiler', [{ alias: 2, type: 'Double', value: 72.25 } as never]);
  await sampleWhere(store, 'central/Plant1/Line1/Boiler/Water/Temperature', good(72.25));
  const [node] = driver.relayNodes();
  t.like(node, { groupId: 'Plant1', edgeNodeId: 'Line1', online: true, bdSeq: 7, tagCount: 7 });
  // Node Control metrics are tags like the others (a space becomes _); bdSeq is not a tag.
  t.is(store.get('central/Plant1/Line1/Node_Control/Rebirth')?.value, false);
  t.false(store.has('central/Plant1/Line1/bdSeq'));
  await edge.ndata([{ name: 'Node Control/Rebirth', type: 'Boolean', value: false }]);
  await edge.ndata([{ name: 'bdSeq', type: 'UInt64', value: 7 }]);
  await edge.ndata([{ alias: 1, type: 'UInt32', value: 5 } as never]);
  await sampleWhere(store, 'central/Plant1/Line1/Uptime', good(5));
  t.is(node?.sequenceErrors, 0);
  t.like(node?.devices[0], { deviceId: 'Boiler', online: true, tagCount: 5 });
  t.is(edge.rebirthRequests(), 0);
});

test('UInt64 and Int64 are exact beyond 2^53', async (t) => {
  const { store, broker } = await startHost(t);
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth([
    { name: 'Big', alias: 1, type: 'UInt64', value: long64(18_446_744_073_709_551_615n) },
    { name: 'Small', alias: 2, type: 'Int64', value: -5 },
  ]);
  const big = await sampleWhere(store, 'central/G/N/Big', (s) => s.quality === 'Good');
  t.is(big.metadata?.valueText, '18446744073709551615');
  t.is(big.value, 2 ** 64);
  const small = await sampleWhere(store, 'central/G/N/Small', (s) => s.quality === 'Good');
  t.is(small.value, -5);
  t.is(small.metadata?.valueText, undefined);
});

test('a seq gap, an unknown alias and DATA before BIRTH each send a rebirth request, counted and rate-limited', async (t) => {
  const { store, broker, driver } = await startHost(t, { config: { rebirthIntervalMs: 100 } });
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  // DATA before any birth.
  await edge.ddata('D', [{ name: 'x', type: 'Double', value: 1 }]);
  await edge.waitForCommand((command) => command.topic === 'spBv1.0/G/NCMD/N');
  t.is(edge.rebirthRequests(), 1);
  t.false(store.has('central/G/N/D/x'));

  await edge.nbirth();
  await edge.dbirth('D', [{ name: 'x', alias: 10, type: 'Double', value: 1 }]);
  await sampleWhere(store, 'central/G/N/D/x', good(1));
  // A gap: seq 5 where 2 is due. The value is still applied (it is the edge's).
  await edge.ddata('D', [{ alias: 10, type: 'Double', value: 2 } as never], 5);
  await sampleWhere(store, 'central/G/N/D/x', good(2));
  await edge.waitForCommand(() => edge.rebirthRequests() >= 2);
  t.is(driver.relayNodes()[0]?.sequenceErrors, 1);
  // An alias the births never gave.
  await edge.ddata('D', [{ alias: 99, type: 'Double', value: 3 } as never]);
  await edge.waitForCommand(() => edge.rebirthRequests() >= 3);
  t.is(driver.relayNodes()[0]?.rebirthsRequested, 3);
  t.is(driver.status().counters?.unknownMetrics, 1);
});

test('rebirth requests are rate-limited per node: a burst of gaps asks once per interval', async (t) => {
  const clock = new ManualClock(Date.now());
  const { broker, driver } = await startHost(t, { clock, config: { rebirthIntervalMs: 60_000 } });
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth([{ name: 'x', alias: 1, type: 'Double', value: 1 }]);
  for (let i = 0; i < 20; i++)
    await edge.ndata([{ alias: 1, type: 'Double', value: i } as never], 200);
  await edge.waitForCommand(() => edge.rebirthRequests() >= 1);
  // Every gap after the first: the same seq again is a gap each time.
  const seen = await new Promise<number>((resolve) => {
    const poll = () => {
      if (driver.relayNodes()[0]?.sequenceErrors === 20) resolve(20);
      else setTimeout(poll, 10);
    };
    poll();
  });
  t.is(seen, 20);
  t.is(driver.relayNodes()[0]?.rebirthsRequested, 1);
  // The deferred request goes out once the interval has passed.
  clock.advance(60_000);
  await edge.waitForCommand(() => edge.rebirthRequests() >= 2);
  t.is(driver.relayNodes()[0]?.rebirthsRequested, 2);
});

test('DDEATH and NDEATH (matched by bdSeq) turn tags Unavailable at once; an old NDEATH is ignored', async (t) => {
  const { store, broker } = await startHost(t);
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N', 3);
  await edge.nbirth([{ name: 'n', alias: 1, type: 'Int32', value: -7 }]);
  await edge.dbirth('D1', [{ name: 'a', alias: 2, type: 'Double', value: 1 }]);
  await edge.dbirth('D2', [{ name: 'b', alias: 3, type: 'Double', value: 2 }]);
  await sampleWhere(store, 'central/G/N/D2/b', good(2));
  t.is(store.get('central/G/N/n')?.value, -7);
  await edge.ddeath('D1');
  const a = await sampleWhere(store, 'central/G/N/D1/a', (s) => s.quality === 'Unavailable');
  t.is(a.reason, 'Disconnected');
  t.is(store.get('central/G/N/D2/b')?.quality, 'Good');
  // The Will of an earlier session (bdSeq 2) changes nothing.
  await edge.ndeath(2);
  await edge.ndata([{ alias: 1, type: 'Int32', value: 8 } as never]);
  await sampleWhere(store, 'central/G/N/n', good(8));
  t.is(store.get('central/G/N/D2/b')?.quality, 'Good');
  await edge.ndeath();
  await sampleWhere(store, 'central/G/N/D2/b', (s) => s.quality === 'Unavailable');
  t.is(store.get('central/G/N/n')?.quality, 'Unavailable');
});

test('an edge killed without a word: its Will (NDEATH) turns its tags Unavailable', async (t) => {
  const { store, broker } = await startHost(t);
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N', 1);
  await edge.nbirth([{ name: 'n', alias: 1, type: 'Double', value: 1 }]);
  await sampleWhere(store, 'central/G/N/n', good(1));
  edge.client.stream.destroy();
  const sample = await sampleWhere(store, 'central/G/N/n', (s) => s.quality === 'Unavailable');
  t.regex(sample.message ?? '', /NDEATH/);
});

test('losing the broker turns every tag Unavailable; back, the host asks known nodes to rebirth', async (t) => {
  const { store, broker, driver } = await startHost(t);
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth([{ name: 'n', alias: 1, type: 'Double', value: 1 }]);
  await sampleWhere(store, 'central/G/N/n', good(1));
  await broker.kill();
  const sample = await sampleWhere(store, 'central/G/N/n', (s) => s.quality === 'Unavailable');
  t.regex(sample.message ?? '', /lost the broker/);
  t.is(driver.relayNodes()[0]?.online, false);
  await broker.restart();
  const again = await ScriptedEdge.connect(t, broker.url, 'G', 'N', 1);
  await again.waitForCommand((command) => command.topic === 'spBv1.0/G/NCMD/N');
  await again.nbirth([{ name: 'n', alias: 1, type: 'Double', value: 2 }]);
  await sampleWhere(store, 'central/G/N/n', good(2));
  t.is(driver.status().state, 'Running');
});

test('a node born on the new connection before the host’s online STATE went out is not asked to rebirth', async (t) => {
  const broker = await startMosquitto(t);
  // A birth the host reads before its online STATE is acknowledged: retained here, so it comes
  // with the subscription (an edge answering the online STATE at once gets there too).
  const raw = await connectAsync(broker.url, { reconnectPeriod: 0 });
  t.teardown(() => raw.endAsync(true));
  await raw.publishAsync(
    'spBv1.0/G/NBIRTH/N',
    encodePayload({
      timestamp: Date.now(),
      seq: 0,
      metrics: [
        { name: 'bdSeq', type: 'UInt64', value: 0 },
        { name: 'x', alias: 1, type: 'Int32', value: 5 },
      ],
    }),
    { qos: 1, retain: true },
  );
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  const { store, driver } = await startHost(t, {
    broker,
    config: { allowWrites: true, stopDrainMs: 0 },
  });
  await sampleWhere(store, 'central/G/N/x', good(5));
  // A write goes out after any rebirth request would have: once the edge has it, it would have
  // the request too (one publisher, one subscriber: the broker keeps their order).
  void driver.write([{ fullTagId: 'central/G/N/x', value: 6 }]);
  await edge.waitForCommand((command) => command.payload.metrics?.[0]?.name === 'x');
  t.is(edge.rebirthRequests(), 0);
});

test('an edge node silent beyond staleAfterMs goes Stale (injected clock), and Good when it speaks', async (t) => {
  const clock = new ManualClock(Date.now());
  const { store, broker, driver } = await startHost(t, { clock, config: { staleAfterMs: 30_000 } });
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth([
    { name: 'a', alias: 1, type: 'Double', value: 1 },
    { name: 'b', alias: 2, type: 'Double', value: 2 },
  ]);
  await sampleWhere(store, 'central/G/N/b', good(2));
  clock.advance(29_000);
  t.is(store.get('central/G/N/a')?.quality, 'Good');
  clock.advance(1_000);
  t.is(store.get('central/G/N/a')?.quality, 'Stale');
  t.is(store.get('central/G/N/a')?.value, 1);
  t.is(store.get('central/G/N/a')?.reason, 'NoUpdate');
  t.true(driver.relayNodes()[0]?.stale);
  await edge.ndata([{ alias: 2, type: 'Double', value: 3 } as never]);
  await sampleWhere(store, 'central/G/N/b', good(3));
  t.is(store.get('central/G/N/a')?.quality, 'Good');
  t.false(driver.relayNodes()[0]?.stale);
});

test('staleness in real time: a silent node goes Stale within staleAfterMs plus the sweep', async (t) => {
  const { store, broker } = await startHost(t, { config: { staleAfterMs: 1_000 } });
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth([{ name: 'a', alias: 1, type: 'Double', value: 1 }]);
  await sampleWhere(store, 'central/G/N/a', good(1));
  const born = Date.now();
  await sampleWhere(store, 'central/G/N/a', (s) => s.quality === 'Stale');
  t.true(Date.now() - born >= 1_000);
});

test('is_historical metrics go to history at their own timestamps, never over the live value', async (t) => {
  const { store, broker, driver } = await startHost(t);
  const historical: Sample[] = [];
  store.onHistorical((samples) => historical.push(...samples));
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth();
  await edge.dbirth('D', [{ name: 'x', alias: 1, type: 'Double', value: 10 }]);
  await sampleWhere(store, 'central/G/N/D/x', good(10));
  const past = Date.now() - 60_000;
  await edge.ddata('D', [
    { alias: 1, type: 'Double', value: 1, isHistorical: true, timestamp: past } as never,
    { alias: 1, type: 'Double', value: 2, isHistorical: true, timestamp: past + 1000 } as never,
  ]);
  while (historical.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  t.like(store.get('central/G/N/D/x'), { quality: 'Good', value: 10 }, 'the live value stays');
  await edge.ddata('D', [{ alias: 1, type: 'Double', value: 11 } as never]);
  await sampleWhere(store, 'central/G/N/D/x', good(11));
  t.deepEqual(
    historical.map((sample) => [sample.value, sample.utcTimestamp]),
    [
      [1, new Date(past).toISOString()],
      [2, new Date(past + 1000).toISOString()],
    ],
  );
  t.is(driver.relayNodes()[0]?.historicalSamples, 2);
  t.true(driver.relayNodes()[0]?.catchUp);
});

test('writes: a DCMD carries the metric; the tag is Stale until DATA confirms, then Good', async (t) => {
  const { store, broker, driver } = await startHost(t, {
    config: { allowWrites: true, writeConfirmTimeoutMs: 20_000 },
  });
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth([{ name: 'Mode', alias: 1, type: 'Int32', value: 1 }]);
  await edge.dbirth('D', [
    { name: 'Setpoint', alias: 2, type: 'Int64', value: 5 },
    { name: 'On', alias: 3, type: 'Boolean', value: false },
  ]);
  await sampleWhere(store, 'central/G/N/D/On', good(false));
  const writable = driver.writableTags().map((tag) => tag.fullTagId);
  t.true(writable.includes('central/G/N/D/Setpoint'));
  const setpoint = driver.writableTags().find((tag) => tag.fullTagId === 'central/G/N/D/Setpoint');
  t.regex(setpoint?.check(1.5) ?? '', /whole number/);
  t.regex(setpoint?.check(true) ?? '', /whole number/);
  t.is(setpoint?.check('9007199254740993'), undefined);

  const result = driver.write([{ fullTagId: 'central/G/N/D/Setpoint', value: '9007199254740993' }]);
  const command = await edge.waitForCommand((c) => c.topic === 'spBv1.0/G/DCMD/N/D');
  const metric = command.payload.metrics?.[0];
  t.is(metric?.name, 'Setpoint');
  const raw = metric?.value as unknown as { low: number; high: number };
  t.is(((BigInt(raw.high >>> 0) << 32n) | BigInt(raw.low >>> 0)).toString(), '9007199254740993');
  const pending = await sampleWhere(store, 'central/G/N/D/Setpoint', (s) => s.quality === 'Stale');
  t.is(pending.value, 5);
  t.regex(pending.message ?? '', /awaiting its confirmation/);
  await edge.ddata('D', [
    { alias: 2, type: 'Int64', value: long64(9_007_199_254_740_993n) } as never,
  ]);
  t.deepEqual(await result, [{ status: 'Good' }]);
  const confirmed = store.get('central/G/N/D/Setpoint');
  t.is(confirmed?.quality, 'Good');
  t.is(confirmed?.metadata?.valueText, '9007199254740993');

  // A node metric goes as an NCMD.
  const nodeWrite = driver.write([{ fullTagId: 'central/G/N/Mode', value: 3 }]);
  const ncmd = await edge.waitForCommand(
    (c) => c.topic === 'spBv1.0/G/NCMD/N' && c.payload.metrics?.[0]?.name === 'Mode',
  );
  t.is(ncmd.payload.metrics?.[0]?.value, 3);
  await edge.ndata([{ alias: 1, type: 'Int32', value: 3 } as never]);
  t.deepEqual(await nodeWrite, [{ status: 'Good' }]);
});

test('an unconfirmed write answers Uncertain after writeConfirmTimeoutMs and the tag shows its last confirmed sample', async (t) => {
  const clock = new ManualClock(Date.now());
  const { store, broker, driver } = await startHost(t, {
    clock,
    config: { allowWrites: true, writeConfirmTimeoutMs: 5_000, staleAfterMs: 600_000 },
  });
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth([{ name: 'Speed', alias: 1, type: 'Double', value: 10 }]);
  await sampleWhere(store, 'central/G/N/Speed', good(10));
  const result = driver.write([{ fullTagId: 'central/G/N/Speed', value: 20 }]);
  await edge.waitForCommand(
    (c) => c.topic === 'spBv1.0/G/NCMD/N' && c.payload.metrics?.[0]?.name === 'Speed',
  );
  await sampleWhere(store, 'central/G/N/Speed', (s) => s.quality === 'Stale');
  // The edge reports another value meanwhile: it is the tag's confirmed value, still pending.
  await edge.ndata([{ alias: 1, type: 'Double', value: 11 } as never]);
  await sampleWhere(store, 'central/G/N/Speed', (s) => s.value === 11);
  t.is(store.get('central/G/N/Speed')?.quality, 'Stale');
  clock.advance(5_000);
  const [outcome] = await result;
  t.is(outcome?.status, 'Uncertain');
  t.is(outcome?.reason, 'OutcomeUnknown');
  t.regex(outcome?.message ?? '', /did not confirm/);
  t.like(store.get('central/G/N/Speed'), { quality: 'Good', value: 11 });
});

test('writes to an offline edge are refused before anything is sent', async (t) => {
  const { store, broker, driver } = await startHost(t, { config: { allowWrites: true } });
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth([{ name: 'Speed', alias: 1, type: 'Double', value: 10 }]);
  await sampleWhere(store, 'central/G/N/Speed', good(10));
  await edge.ndeath();
  await sampleWhere(store, 'central/G/N/Speed', (s) => s.quality === 'Unavailable');
  const [outcome] = await driver.write([{ fullTagId: 'central/G/N/Speed', value: 1 }]);
  t.like(outcome, { status: 'Bad', reason: 'Disconnected' });
  t.false(edge.commands.some((c) => c.payload.metrics?.[0]?.name === 'Speed'));
});

test('groupIds limits the groups followed', async (t) => {
  const { store, broker } = await startHost(t, { config: { groupIds: ['A'] } });
  const b = await ScriptedEdge.connect(t, broker.url, 'B', 'N');
  await b.nbirth([{ name: 'x', alias: 1, type: 'Double', value: 1 }]);
  const a = await ScriptedEdge.connect(t, broker.url, 'A', 'N');
  await a.nbirth([{ name: 'x', alias: 1, type: 'Double', value: 1 }]);
  await sampleWhere(store, 'central/A/N/x', good(1));
  t.false(store.has('central/B/N/x'));
});

test('a payload that is not Sparkplug is counted, not fatal', async (t) => {
  const { store, broker, driver } = await startHost(t);
  const raw = await connectAsync(broker.url, { reconnectPeriod: 0 });
  t.teardown(() => raw.endAsync(true));
  await raw.publishAsync('spBv1.0/G/NBIRTH/N', Buffer.from([0xff, 0xff, 0xff, 0x01]), { qos: 1 });
  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N');
  await edge.nbirth([{ name: 'x', alias: 1, type: 'Double', value: 1 }]);
  await sampleWhere(store, 'central/G/N/x', good(1));
  t.is(driver.status().counters?.malformed, 1);
  t.is(decodePayload(Buffer.from([])).metrics?.length ?? 0, 0);
});
