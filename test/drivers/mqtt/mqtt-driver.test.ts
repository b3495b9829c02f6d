/**
 * The MQTT subscriber driver against a real Mosquitto: payloads published by a test client
 * become samples; wildcards make tags; a silent topic goes Stale; a lost broker turns every tag
 * Unavailable at once and only a message on the new connection makes it Good again; the tag
 * count is bounded; bad payloads turn their tag Bad, counted and logged without their text.
 */
import test, { type ExecutionContext } from 'ava';
import { connectAsync, type MqttClient } from 'mqtt';
import type { DriverDeps } from '../../../drivers/driver.js';
import { MqttDriver } from '../../../drivers/mqtt/mqtt-driver.js';
import { type MqttDriverConfig, mqttDriverSchema } from '../../../drivers/mqtt/schema.js';
import { createDriver, driverConfigSchema } from '../../../drivers/registry.js';
import type { Clock } from '../../../src/clock.js';
import { systemClock } from '../../../src/clock.js';
import type { Sample } from '../../../src/tags/sample.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { type Mosquitto, startMosquitto } from '../../helpers/mosquitto.js';
import { subscribe } from '../../helpers/mqtt-subscriber.js';
import { driverContract } from '../contract.js';

function config(broker: Mosquitto, input: Record<string, unknown>): MqttDriverConfig {
  return mqttDriverSchema.parse({ type: 'mqtt', name: 'Mq', brokerUrl: broker.url, ...input });
}

interface Setup {
  driver: MqttDriver;
  store: TagStore;
  logs: ReturnType<typeof captureLogs>;
}

function setup(
  t: ExecutionContext,
  settings: MqttDriverConfig,
  clock: Clock = new ManualClock(),
): Setup {
  const store = new TagStore({ clock });
  const logs = captureLogs();
  const deps: DriverDeps = { store, clock, logger: logs.logger, stateDir: '/nonexistent' };
  const driver = new MqttDriver(settings, deps);
  t.teardown(async () => {
    await driver.stop();
    await store.stop();
  });
  return { driver, store, logs };
}

async function publisher(t: ExecutionContext, broker: Mosquitto): Promise<MqttClient> {
  const client = await connectAsync(broker.url, { reconnectPeriod: 0 });
  t.teardown(() => client.endAsync(true));
  return client;
}

/** Resolves once `accept` holds for the store (checked now and at every write). */
function until(store: TagStore, accept: () => boolean, what = 'the condition'): Promise<void> {
  return new Promise((resolve, reject) => {
    if (accept()) return resolve();
    // A safety net for a test that would otherwise hang, never an assertion on speed.
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`${what} never held`));
    }, 60_000);
    const stop = store.subscribe(() => {
      if (!accept()) return;
      stop();
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Resolves once the sample of `id` satisfies `accept`. */
async function sampleWhen(
  store: TagStore,
  id: string,
  accept: (sample: Sample) => boolean,
): Promise<Sample> {
  await until(
    store,
    () => {
      const sample = store.get(id);
      return sample !== undefined && accept(sample);
    },
    `a sample of ${id}`,
  );
  return store.require(id);
}

/** Waits (pacing only) until the driver reports Running: subscribed on a live connection. */
async function running(driver: MqttDriver): Promise<void> {
  for (let i = 0; i < 6000 && driver.status().state !== 'Running'; i++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  if (driver.status().state !== 'Running') throw new Error(`driver ${driver.status().state}`);
}

const good = (value: unknown) => (sample: Sample) =>
  sample.quality === 'Good' && sample.value === value;

test('plain payloads: number, boolean, string and a 64-bit integer kept exact', async (t) => {
  const broker = await startMosquitto(t);
  const { driver, store } = setup(
    t,
    config(broker, {
      subscriptions: [
        { topic: 'plant/temp', tag: 'Temp', unit: '°C', description: 'Oven' },
        { topic: 'plant/run', tag: 'Run', dataType: 'boolean' },
        { topic: 'plant/mode', tag: 'Mode', dataType: 'string' },
        { topic: 'plant/count', tag: 'Count' },
      ],
    }),
  );
  await driver.start();
  t.is(store.require('Mq/Temp').reason, 'NeverRead', 'declared at start');
  await running(driver);
  const client = await publisher(t, broker);
  await client.publishAsync('plant/temp', ' 21.5 ');
  await client.publishAsync('plant/run', 'true');
  await client.publishAsync('plant/mode', 'Auto run');
  await client.publishAsync('plant/count', '9007199254740993');
  const temp = await sampleWhen(store, 'Mq/Temp', good(21.5));
  t.deepEqual(temp.metadata, { unit: '°C', description: 'Oven', source: 'mqtt:plant/temp' });
  await sampleWhen(store, 'Mq/Run', good(true));
  await sampleWhen(store, 'Mq/Mode', good('Auto run'));
  const count = await sampleWhen(store, 'Mq/Count', (s) => s.quality === 'Good');
  t.is(count.value, 9007199254740992);
  t.is(count.metadata?.valueText, '9007199254740993');
  t.is(driver.status().counters?.messagesReceived, 4);
});

test('JSON payloads read at JSON Pointers: value, timestamp and quality', async (t) => {
  const broker = await startMosquitto(t);
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
  const { driver, store } = setup(
    t,
    config(broker, {
      subscriptions: [
        {
          topic: 'dev/a',
          tag: 'A',
          format: 'json',
          valuePath: '/data/readings/1/v',
          timestampPath: '/ts',
          qualityPath: '/q',
        },
        {
          topic: 'dev/b',
          tag: 'B',
          format: 'json',
          valuePath: '/a~1b',
          timestampPath: '/t',
          timestampUnit: 's',
        },
        { topic: 'dev/c', tag: 'C', format: 'json', valuePath: '/v', qualityPath: '/quality' },
      ],
    }),
    clock,
  );
  await driver.start();
  await running(driver);
  const client = await publisher(t, broker);
  await client.publishAsync(
    'dev/a',
    JSON.stringify({
      data: { readings: [{ v: 1 }, { v: 2.25 }] },
      ts: '2026-01-01T11:59:59.500Z',
      q: 192,
    }),
  );
  const a = await sampleWhen(store, 'Mq/A', good(2.25));
  t.is(a.utcTimestamp, '2026-01-01T11:59:59.500Z', 'the payload’s own timestamp');
  await client.publishAsync('dev/b', `{"a/b": 12345678901234567890, "t": ${clock.now() / 1000}}`);
  const b = await sampleWhen(store, 'Mq/B', (s) => s.quality === 'Good');
  t.is(b.metadata?.valueText, '12345678901234567890');
  t.is(b.utcTimestamp, new Date(clock.now()).toISOString());
  // OPC DA 64–191 is Uncertain: Stale with the value; a stated Bad keeps no value.
  await client.publishAsync('dev/a', '{"data":{"readings":[0,{"v":3}]},"ts":1767268799000,"q":64}');
  const uncertain = await sampleWhen(store, 'Mq/A', (s) => s.value === 3);
  t.is(uncertain.quality, 'Stale');
  await client.publishAsync('dev/c', '{"v": 7, "quality": "Bad"}');
  const bad = await sampleWhen(store, 'Mq/C', (s) => s.quality === 'Bad');
  t.is(bad.value, undefined);
  t.is(bad.reason, 'DeviceException');
  await client.publishAsync('dev/c', '{"quality": "Unavailable"}');
  await sampleWhen(store, 'Mq/C', (s) => s.quality === 'Unavailable');
  await client.publishAsync('dev/c', '{"v": 8, "quality": "good"}');
  await sampleWhen(store, 'Mq/C', good(8));
});

test('wildcards map topic levels to tag path segments; a topic that makes no path is refused', async (t) => {
  const broker = await startMosquitto(t);
  const { driver, store, logs } = setup(
    t,
    config(broker, {
      subscriptions: [
        { topic: 'plant/+/+/temp', tag: 'Lines/{1}/{2}/Temperature' },
        { topic: 'site/#', tag: 'Site/{1}' },
        { topic: 'other/+', tag: 'Site/{1}' },
      ],
    }),
  );
  await driver.start();
  t.is(driver.status().tagCount, 0, 'wildcard tags appear with their first message');
  await running(driver);
  const client = await publisher(t, broker);
  await client.publishAsync('plant/L1/oven2/temp', '180');
  await client.publishAsync('site/hall1/boiler/pressure', '2.5');
  await client.publishAsync('plant/bad level/x/temp', '1');
  await sampleWhen(store, 'Mq/Lines/L1/oven2/Temperature', good(180));
  await sampleWhen(store, 'Mq/Site/hall1/boiler/pressure', good(2.5));
  // Site/hall1 is not taken; other/x maps to Site/x, free; then site/x conflicts with it.
  await client.publishAsync('other/x', '5');
  await sampleWhen(store, 'Mq/Site/x', good(5));
  await client.publishAsync('site/x', '6');
  await client.publishAsync('other/x', '7');
  await sampleWhen(store, 'Mq/Site/x', good(7));
  const counters = driver.status().counters ?? {};
  t.is(counters.topicsRefused, 1, 'a space is no tag path character');
  t.is(counters.topicConflicts, 1, 'one tag, one topic');
  t.is(store.require('Mq/Site/x').metadata?.source, 'mqtt:other/x');
  t.is(driver.status().tagCount, 3);
  t.regex(logs.text(), /plant\/bad level\/x\/temp makes no valid tag path/);
});

test('a silent topic turns Stale after staleAfterMs (injected clock); old messages arrive Stale', async (t) => {
  const broker = await startMosquitto(t);
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
  const { driver, store } = setup(
    t,
    config(broker, {
      staleAfterMs: 5000,
      subscriptions: [
        { topic: 'a', tag: 'A' },
        { topic: 'b', tag: 'B', staleAfterMs: 0 },
        { topic: 'c/+', tag: 'C/{1}', format: 'json', valuePath: '/v', timestampPath: '/t' },
      ],
    }),
    clock,
  );
  await store.start();
  await driver.start();
  await running(driver);
  const client = await publisher(t, broker);
  await client.publishAsync('a', '1');
  await client.publishAsync('b', '2');
  await client.publishAsync('c/x', JSON.stringify({ v: 3, t: clock.now() - 1000 }));
  await sampleWhen(store, 'Mq/A', good(1));
  await sampleWhen(store, 'Mq/B', good(2));
  await sampleWhen(store, 'Mq/C/x', good(3));
  clock.advance(4999);
  t.is(store.require('Mq/A').quality, 'Good');
  clock.advance(2);
  const stale = store.require('Mq/A');
  t.is(stale.quality, 'Stale');
  t.is(stale.reason, 'NoUpdate');
  t.is(stale.value, 1, 'Stale keeps the last value');
  t.is(store.require('Mq/C/x').quality, 'Stale', 'a wildcard tag has the bound too');
  t.is(store.require('Mq/B').quality, 'Good', 'staleAfterMs 0: never Stale');
  await client.publishAsync('a', '4');
  await sampleWhen(store, 'Mq/A', good(4));
  // A message whose own timestamp is older than the bound (a retained one) is not Good.
  await client.publishAsync('c/y', JSON.stringify({ v: 9, t: clock.now() - 6000 }));
  const old = await sampleWhen(store, 'Mq/C/y', (s) => s.value === 9);
  t.is(old.quality, 'Stale');
  t.regex(old.message ?? '', /6000 ms old/);
});

test('real time: a silent topic turns Stale once staleAfterMs has passed', async (t) => {
  const broker = await startMosquitto(t);
  const { driver, store } = setup(
    t,
    config(broker, { staleAfterMs: 1000, subscriptions: [{ topic: 'a', tag: 'A' }] }),
    systemClock,
  );
  await store.start();
  await driver.start();
  await running(driver);
  const client = await publisher(t, broker);
  await client.publishAsync('a', '1');
  await sampleWhen(store, 'Mq/A', good(1));
  const since = Date.now();
  await sampleWhen(store, 'Mq/A', (s) => s.quality === 'Stale');
  t.true(Date.now() - since >= 1000 - 50, 'not before the bound (the sweep runs every 250 ms)');
});

test('broker killed: every tag Unavailable at once; reconnected: Good again only on fresh data', async (t) => {
  const broker = await startMosquitto(t);
  const clock = new ManualClock();
  const { driver, store } = setup(
    t,
    config(broker, {
      reconnectDelayMs: 1000,
      subscriptions: [
        { topic: 'a', tag: 'A' },
        { topic: 'w/+', tag: 'W/{1}' },
      ],
    }),
    clock,
  );
  await driver.start();
  await running(driver);
  let client = await publisher(t, broker);
  await client.publishAsync('a', '1', { retain: true });
  await client.publishAsync('w/x', '2');
  await sampleWhen(store, 'Mq/A', good(1));
  await sampleWhen(store, 'Mq/W/x', good(2));
  await broker.kill();
  const lost = await sampleWhen(store, 'Mq/A', (s) => s.quality === 'Unavailable');
  t.is(lost.reason, 'Disconnected');
  t.is(lost.value, undefined);
  t.is(store.require('Mq/W/x').quality, 'Unavailable', 'wildcard tags too');
  t.is(driver.status().state, 'Reconnecting');
  t.is(driver.status().counters?.disconnects, 1);
  await broker.restart();
  clock.advance(1000);
  await running(driver);
  // The broker lost its retained message with the kill: nothing fresh came, nothing is Good.
  t.is(store.require('Mq/A').quality, 'Unavailable');
  t.is(store.require('Mq/W/x').quality, 'Unavailable');
  client = await publisher(t, broker);
  await client.publishAsync('w/x', '3');
  await sampleWhen(store, 'Mq/W/x', good(3));
  t.is(store.require('Mq/A').quality, 'Unavailable', 'a tag without a new message stays so');
  await client.publishAsync('a', '4');
  await sampleWhen(store, 'Mq/A', good(4));
});

test('maxTags bounds the tags a wildcard creates; the tags there keep updating', async (t) => {
  const broker = await startMosquitto(t);
  const { driver, store, logs } = setup(
    t,
    config(broker, { maxTags: 5, subscriptions: [{ topic: 'storm/+', tag: 'S/{1}' }] }),
  );
  await driver.start();
  await running(driver);
  const client = await publisher(t, broker);
  for (let i = 0; i < 50; i++) await client.publishAsync(`storm/t${i}`, String(i), { qos: 1 });
  await client.publishAsync('storm/t0', '100', { qos: 1 });
  await sampleWhen(store, 'Mq/S/t0', good(100));
  t.is(driver.status().tagCount, 5);
  t.is([...store.ids()].length, 5);
  t.is(driver.status().counters?.tagsRefused, 45);
  t.false(store.has('Mq/S/t5'));
  const lines = logs.lines.filter((line) => /maxTags \(5\)/.test(String(line.msg)));
  t.is(lines.length, 1, 'logged once, not per message');
});

test('bad payloads turn their tag Bad with a counted reason, logged rate-limited without the payload', async (t) => {
  const broker = await startMosquitto(t);
  const { driver, store, logs } = setup(
    t,
    config(broker, {
      maxPayloadBytes: 100,
      subscriptions: [
        { topic: 'j', tag: 'J', format: 'json', valuePath: '/v', timestampPath: '/t' },
        { topic: 'n', tag: 'N' },
        { topic: 'g', tag: 'G', format: 'tagd' },
      ],
    }),
  );
  await driver.start();
  await running(driver);
  const client = await publisher(t, broker);
  const secretText = 'password=hunter2';
  await client.publishAsync('j', `{"v": 1, ${secretText}`);
  let sample = await sampleWhen(store, 'Mq/J', (s) => s.quality === 'Bad');
  t.is(sample.reason, 'DecodeError');
  t.regex(sample.message ?? '', /not JSON/);
  await client.publishAsync('j', '{"v": 1}');
  await sampleWhen(store, 'Mq/J', (s) => /no timestamp at \/t/.test(s.message ?? ''));
  await client.publishAsync('j', '{"v": "x", "t": "2026-01-01T00:00:00Z"}');
  await sampleWhen(store, 'Mq/J', (s) => /not a number/.test(s.message ?? ''));
  await client.publishAsync('j', '{"v": 1, "t": "yesterday"}');
  await sampleWhen(store, 'Mq/J', (s) => /timestamp at \/t is neither/.test(s.message ?? ''));
  await client.publishAsync('n', secretText);
  sample = await sampleWhen(store, 'Mq/N', (s) => s.quality === 'Bad');
  await client.publishAsync('n', Buffer.from([0xff, 0xfe]));
  await sampleWhen(store, 'Mq/N', (s) => /not UTF-8/.test(s.message ?? ''));
  await client.publishAsync('n', 'x'.repeat(101));
  await sampleWhen(store, 'Mq/N', (s) => /101 bytes/.test(s.message ?? ''));
  await client.publishAsync('g', '{"fullTagId":"X","utcTimestamp":"2026-01-01T00:00:00Z"}');
  await sampleWhen(store, 'Mq/G', (s) => /no quality at \/quality/.test(s.message ?? ''));
  await client.publishAsync('n', '5');
  await sampleWhen(store, 'Mq/N', good(5));
  const counters = driver.status().counters ?? {};
  t.like(counters, {
    payloadNotJson: 1,
    timestampInvalid: 2,
    valueWrongType: 2,
    payloadNotText: 1,
    payloadTooLarge: 1,
    qualityInvalid: 1,
    malformed: 8,
  });
  t.false(logs.text().includes('hunter2'), 'no payload in the log');
  const notJson = logs.lines.filter((line) => line.kind === 'payloadNotJson');
  t.is(notJson.length, 1);
  const wrongType = logs.lines.filter((line) => line.kind === 'valueWrongType');
  t.is(wrongType.length, 1, 'the second of a kind within the minute is only counted');
});

test('a retained message without a timestamp is Stale (age unknown) until a live one; with one, judged by it; acceptRetained false ignores them', async (t) => {
  const broker = await startMosquitto(t);
  const client = await publisher(t, broker);
  const clock = new ManualClock();
  // Published before the driver starts: the broker keeps each as its topic's retained message,
  // and hands it to the driver when it subscribes, however old it is.
  const retain = { retain: true, qos: 1 } as const;
  await client.publishAsync('r/a', '1', retain);
  await client.publishAsync('r/b', '2', retain);
  await client.publishAsync('w/x', '5', retain);
  await client.publishAsync('j/fresh', JSON.stringify({ v: 7, t: clock.now() - 1000 }), retain);
  await client.publishAsync('j/old', JSON.stringify({ v: 8, t: clock.now() - 6000 }), retain);
  const { driver, store } = setup(
    t,
    config(broker, {
      staleAfterMs: 5000,
      subscriptions: [
        { topic: 'r/a', tag: 'A' },
        { topic: 'r/b', tag: 'B', acceptRetained: false },
        { topic: 'w/+', tag: 'W/{1}' },
        { topic: 'j/+', tag: 'J/{1}', format: 'json', valuePath: '/v', timestampPath: '/t' },
      ],
    }),
    clock,
  );
  await driver.start();
  const unknownAge = /^Retained value of unknown age/;
  const retained = await sampleWhen(store, 'Mq/A', (s) => s.value === 1);
  t.like(
    retained,
    { quality: 'Stale', reason: 'NoUpdate' },
    'never Good: its publisher may be dead',
  );
  t.regex(retained.message ?? '', unknownAge);
  const wildcard = await sampleWhen(store, 'Mq/W/x', (s) => s.value === 5);
  t.like(wildcard, { quality: 'Stale', reason: 'NoUpdate' });
  t.regex(wildcard.message ?? '', unknownAge);
  // A retained payload with its own timestamp is judged by it, against staleAfterMs.
  t.like(await sampleWhen(store, 'Mq/J/fresh', (s) => s.value === 7), { quality: 'Good' });
  const old = await sampleWhen(store, 'Mq/J/old', (s) => s.value === 8);
  t.is(old.quality, 'Stale');
  t.regex(old.message ?? '', /6000 ms old/);
  await running(driver);
  t.is(store.require('Mq/B').quality, 'Unavailable', 'acceptRetained false: ignored');
  t.is(store.require('Mq/A').quality, 'Stale', 'still Stale: nothing live came');

  // Live messages are Good (a retained publish reaches a subscriber live, its flag cleared).
  await client.publishAsync('r/a', '3', { qos: 1 });
  await sampleWhen(store, 'Mq/A', good(3));
  await client.publishAsync('r/b', '4', retain);
  await sampleWhen(store, 'Mq/B', good(4));
  await client.publishAsync('w/x', '6', { qos: 1 });
  await sampleWhen(store, 'Mq/W/x', good(6));
  t.like(driver.status().counters, { retainedIgnored: 1, retainedUnknownAge: 2 });
});

test('writes publish on writeTopic only with allowWrites; the tag waits for the device', async (t) => {
  const broker = await startMosquitto(t);
  const settings = (allowWrites: boolean) =>
    config(broker, {
      allowWrites,
      subscriptions: [
        { topic: 'dev/sp', tag: 'Setpoint', writeTopic: 'dev/sp/set', writeMax: 100 },
        {
          topic: 'dev/j',
          tag: 'J',
          format: 'json',
          valuePath: '/cmd/v',
          writeTopic: 'dev/j/set',
        },
      ],
    });
  const { driver, store } = setup(t, settings(true));
  await driver.start();
  await running(driver);
  const tags = driver.writableTags();
  t.deepEqual(
    tags.map((tag) => [tag.fullTagId, tag.allowWrites, tag.writeMax]),
    [
      ['Mq/Setpoint', true, 100],
      ['Mq/J', true, undefined],
    ],
  );
  t.is(tags[0]?.check('x'), 'The tag takes a number.');
  const sub = await subscribe(t, broker.url, 'dev/+/set');
  const results = await driver.write([
    { fullTagId: 'Mq/Setpoint', value: 42.5 },
    { fullTagId: 'Mq/J', value: 9007199254740992, numberText: '9007199254740993' },
  ]);
  t.deepEqual(
    results.map((result) => result.status),
    ['Good', 'Good'],
  );
  const got = await sub.waitForCount(2);
  t.deepEqual(
    got.map((message) => [message.topic, message.payload.toString()]),
    [
      ['dev/sp/set', '42.5'],
      ['dev/j/set', '{"cmd":{"v":9007199254740993}}'],
    ],
  );
  t.is(store.require('Mq/Setpoint').reason, 'NeverRead', 'the tag shows what the device publishes');
  const off = setup(t, { ...settings(false), name: 'Off' });
  await off.driver.start();
  t.true(off.driver.writableTags().every((tag) => !tag.allowWrites));
  await broker.kill();
  await sampleWhen(store, 'Mq/Setpoint', (s) => s.reason === 'Disconnected');
  const refused = await driver.write([{ fullTagId: 'Mq/Setpoint', value: 1 }]);
  t.like(refused[0], { status: 'Bad', reason: 'Disconnected' });
});

test('username and password: a refused password is retried and reported with a hint, never logged', async (t) => {
  const broker = await startMosquitto(t, {
    users: { central: 'right-pw', device: 'device-pw' },
    acl: 'user central\ntopic read ok/#\nuser device\ntopic write ok/#\n',
  });
  const clock = new ManualClock();
  const settings = (password: string) =>
    config(broker, {
      authentication: { mode: 'Username password', username: 'central', password },
      subscriptions: [
        { topic: 'ok/a', tag: 'A' },
        { topic: 'secret/#', tag: 'S/{1}' },
      ],
    });
  const wrong = setup(t, { ...settings('wrong-pw'), name: 'Wrong' }, clock);
  await wrong.driver.start();
  await sampleWhen(wrong.store, 'Wrong/A', (s) => s.reason === 'Disconnected');
  t.is(wrong.driver.status().state, 'Reconnecting');
  t.regex(
    wrong.driver.status().message ?? '',
    /not authorized by the broker \(MQTT reason 135\)\. Check the driver’s authentication/,
  );
  t.false(wrong.logs.text().includes('wrong-pw'), 'no password in the log');
  t.is(wrong.driver.status().counters?.failedAttempts, 1);
  const { driver, store } = setup(t, settings('right-pw'), clock);
  await driver.start();
  await running(driver);
  // Mosquitto grants a subscription its ACL denies (and delivers nothing on it).
  t.is(driver.status().counters?.subscriptionsRefused, 0);
  const device = await connectAsync(broker.url, {
    reconnectPeriod: 0,
    username: 'device',
    password: 'device-pw',
  });
  t.teardown(() => device.endAsync(true));
  await device.publishAsync('ok/a', '1', { qos: 1 });
  await sampleWhen(store, 'Mq/A', good(1));
});

test('the registry builds the driver from a profile entry; the broker URL is a secret', async (t) => {
  const entry = driverConfigSchema.parse({
    type: 'mqtt',
    name: 'Remote',
    brokerUrl: 'mqtt://user:pw@127.0.0.1:1',
    subscriptions: [{ topic: 'a/#', tag: '{1}', format: 'tagd' }],
  });
  const store = new TagStore();
  const driver = await createDriver(entry, {
    store,
    clock: systemClock,
    logger: captureLogs().logger,
    stateDir: '/nonexistent',
  });
  t.is(driver.type, 'mqtt');
  const { findSecrets } = await import('../../../src/profile/secret-fields.js');
  t.deepEqual(
    findSecrets(driverConfigSchema, entry).map((found) => found.path),
    [['brokerUrl']],
  );
});

let contractBroker: Mosquitto | undefined;
driverContract(test, {
  type: 'mqtt',
  hasPeer: true,
  async setup() {
    const stub = { teardown: () => undefined } as unknown as ExecutionContext;
    const broker = await startMosquitto(stub);
    contractBroker = broker;
    const clock = new ManualClock();
    const store = new TagStore({ clock });
    const driver = new MqttDriver(
      config(broker, {
        subscriptions: [
          { topic: 'c/a', tag: 'A' },
          { topic: 'c/b', tag: 'B', dataType: 'string' },
        ],
      }),
      { store, clock, logger: captureLogs().logger, stateDir: '/nonexistent' },
    );
    const tagIds = ['Mq/A', 'Mq/B'];
    let client: MqttClient | undefined;
    let up = true;
    return {
      driver,
      store,
      tagIds,
      clock,
      async produce() {
        if (!up) {
          await until(store, () => tagIds.every((id) => store.get(id)?.quality === 'Unavailable'));
          return;
        }
        await running(driver);
        client ??= await connectAsync(broker.url, { reconnectPeriod: 0 });
        await client.publishAsync('c/a', '1');
        await client.publishAsync('c/b', 'on');
        await until(store, () => tagIds.every((id) => store.get(id)?.quality === 'Good'));
      },
      async disconnect() {
        up = false;
        await client?.endAsync(true);
        await broker.kill();
      },
      async teardown() {
        await client?.endAsync(true);
        await broker.stop();
        contractBroker = undefined;
      },
    };
  },
});
test.after.always(async () => {
  await contractBroker?.kill();
});
