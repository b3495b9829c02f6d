import { performance } from 'node:perf_hooks';
import test, { type ExecutionContext } from 'ava';
import { systemClock } from '../../../src/clock.js';
import {
  MqttPublisher,
  mqttDeliveryFailedMessage,
  mqttHealthTagIds,
} from '../../../src/publishers/mqtt/mqtt-publisher.js';
import { type MqttConfig, mqttConfigSchema } from '../../../src/publishers/mqtt/schema.js';
import { Collections } from '../../../src/tags/collections.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { makeCertificates } from '../../helpers/certificates.js';
import { sample } from '../../helpers/clock-sample.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { makeClientCertificate, startMosquitto } from '../../helpers/mosquitto.js';
import { subscribe } from '../../helpers/mqtt-subscriber.js';
import { tempDir } from '../../helpers/temp-dir.js';

const t0 = Date.UTC(2026, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();

/** Resolves once the publisher's LastDeliveryError health tag is set. */
function deliveryError(store: TagStore): Promise<void> {
  const id = mqttHealthTagIds('plant').lastDeliveryError;
  return new Promise<void>((resolve) => {
    const off = store.subscribe((updates) => {
      if (updates.some((u) => u.sample.fullTagId === id && u.sample.value !== '')) {
        off();
        resolve();
      }
    });
  });
}

type Input = Partial<Omit<MqttConfig, 'authentication'>> & {
  brokerUrl: string;
  authentication?: Record<string, unknown>;
};

/**
 * A publisher `plant` over collection `line1` (Line1/**) on a ManualClock: the broker I/O is
 * real, the ticks and reconnection waits are the test's.
 */
async function setup(t: ExecutionContext, config: Input) {
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  store.write([
    sample(clock, 'Line1/Oven/Temp', 181.5),
    sample(clock, 'Line1/Oven/State', 'Running'),
    sample(clock, 'Line1/Press/Force', 12, 'Stale'),
    sample(clock, 'Line1/Press/Door', undefined, 'Bad'),
    sample(clock, 'Line2/Oven/Temp', 99),
  ]);
  const collections = new Collections(store, [
    { name: 'line1', members: ['Line1/**'] },
    { name: 'line2', members: ['Line2/**'] },
  ]);
  await collections.start();
  t.teardown(() => collections.stop());
  const logs = captureLogs();
  const stateDir = await tempDir(t);
  const publisher = new MqttPublisher(
    mqttConfigSchema.parse({
      name: 'plant',
      collections: ['line1'],
      topicPrefix: 'tagd/gw1',
      ...config,
    }),
    { store, collections, clock, logger: logs.logger, stateDir },
  );
  t.teardown(() => publisher.stop());
  /** Resolves once the health tag Status reads `status`. */
  const statusIs = (status: string) =>
    new Promise<void>((resolve) => {
      const id = mqttHealthTagIds('plant').status;
      if (store.get(id)?.value === status) return resolve();
      const off = store.subscribe((updates) => {
        if (updates.some((u) => u.sample.fullTagId === id && u.sample.value === status)) {
          off();
          resolve();
        }
      });
    });
  return { clock, store, collections, publisher, logs, statusIs, stateDir };
}

test('json: one message per collection, the webhook entries, On Change then only changes', async (t) => {
  const broker = await startMosquitto(t);
  const { clock, store, publisher, statusIs } = await setup(t, {
    brokerUrl: broker.url,
    collections: ['line1', 'line2'],
  });
  const sub = await subscribe(t, broker.url, 'tagd/gw1/#');
  const on = statusIs('On');
  await publisher.start();
  await on;
  clock.advance(1000);
  const first = await sub.waitForCount(2);
  t.deepEqual(
    first.map((m) => m.topic),
    ['tagd/gw1/line1', 'tagd/gw1/line2'],
  );
  t.false(first[0]?.retain);
  t.deepEqual(JSON.parse(String(first[0]?.payload)), [
    { fullTagId: 'Line1/Oven/Temp', utcTimestamp: iso(t0), quality: 'Good', value: 181.5 },
    { fullTagId: 'Line1/Press/Force', utcTimestamp: iso(t0), quality: 'Stale', value: 12 },
    { fullTagId: 'Line1/Press/Door', utcTimestamp: iso(t0), quality: 'Bad' },
  ]);
  t.deepEqual(JSON.parse(String(first[1]?.payload)), [
    { fullTagId: 'Line2/Oven/Temp', utcTimestamp: iso(t0), quality: 'Good', value: 99 },
  ]);
  await publisher.idle();
  clock.advance(1000);
  store.write([sample(clock, 'Line1/Oven/Temp', 182)]);
  clock.advance(1000);
  const second = await sub.waitForCount(3);
  t.is(second[2]?.topic, 'tagd/gw1/line1');
  t.deepEqual(JSON.parse(String(second[2]?.payload)), [
    { fullTagId: 'Line1/Oven/Temp', utcTimestamp: iso(t0 + 2000), quality: 'Good', value: 182 },
  ]);
  await publisher.idle();
  const state = publisher.state();
  t.is(state.status, 'On');
  t.true(state.connected);
  t.is(state.counters.batches, 2);
  t.is(state.messages, 3);
  t.is(state.queueDepth, 0);
});

test('json-per-tag: one retained entry per tag under the tag path', async (t) => {
  const broker = await startMosquitto(t);
  const { clock, publisher, statusIs } = await setup(t, {
    brokerUrl: broker.url,
    format: 'json-per-tag',
    loggingMode: 'Snapshot',
  });
  const on = statusIs('On');
  await publisher.start();
  await on;
  clock.advance(1000);
  await publisher.idle();
  // Retained: a subscriber arriving afterwards still gets every tag's last entry.
  const late = await subscribe(t, broker.url, 'tagd/gw1/#');
  const got = await late.waitForCount(3);
  const byTopic = Object.fromEntries(got.map((m) => [m.topic, m]));
  t.deepEqual(Object.keys(byTopic).sort(), [
    'tagd/gw1/Line1/Oven/Temp',
    'tagd/gw1/Line1/Press/Door',
    'tagd/gw1/Line1/Press/Force',
  ]);
  t.true(byTopic['tagd/gw1/Line1/Oven/Temp']?.retain);
  t.deepEqual(JSON.parse(String(byTopic['tagd/gw1/Line1/Press/Door']?.payload)), {
    fullTagId: 'Line1/Press/Door',
    utcTimestamp: iso(t0),
    quality: 'Bad',
  });
  t.deepEqual(JSON.parse(String(byTopic['tagd/gw1/Line1/Oven/Temp']?.payload)), {
    fullTagId: 'Line1/Oven/Temp',
    utcTimestamp: iso(t0),
    quality: 'Good',
    value: 181.5,
  });
});

test('Everything at QoS 0: every update in order, uncoalesced', async (t) => {
  const broker = await startMosquitto(t);
  const { clock, store, publisher, statusIs } = await setup(t, {
    brokerUrl: broker.url,
    loggingMode: 'Everything',
    qos: 0,
  });
  const sub = await subscribe(t, broker.url, 'tagd/gw1/line1');
  const on = statusIs('On');
  await publisher.start();
  await on;
  for (let i = 1; i <= 3; i++) store.write([sample(clock, 'Line1/Oven/Temp', 180 + i)]);
  clock.advance(1000);
  const [message] = await sub.waitForCount(1);
  t.deepEqual(
    (JSON.parse(String(message?.payload)) as { value: number }[]).map((entry) => entry.value),
    [181, 182, 183],
  );
});

test('username and password: accepted, and a wrong password is named without the credential', async (t) => {
  const broker = await startMosquitto(t, { users: { gateway: 's3cret-pass' } });
  const good = await setup(t, {
    brokerUrl: broker.url,
    authentication: { mode: 'Username password', username: 'gateway', password: 's3cret-pass' },
  });
  const sub = await subscribe(t, broker.url, 'tagd/gw1/#', {
    username: 'gateway',
    password: 's3cret-pass',
  });
  const on = good.statusIs('On');
  await good.publisher.start();
  await on;
  good.clock.advance(1000);
  await sub.waitForCount(1);

  const bad = await setup(t, {
    brokerUrl: broker.url,
    clientId: 'wrong-one',
    authentication: { mode: 'Username password', username: 'gateway', password: 'wrong-pass' },
  });
  const refused = deliveryError(bad.store);
  await bad.publisher.start();
  await refused;
  const state = bad.publisher.state();
  t.is(state.status, 'Error');
  // Mosquitto 2.0 answers a wrong password with 135 (not authorized), later ones with 134.
  t.regex(
    state.reason ?? '',
    /^(the broker refused the username or password|not authorized by the broker) \(MQTT reason 13[45]\)$/,
  );
  t.is(
    bad.store.get(mqttHealthTagIds('plant').lastDeliveryError)?.value,
    mqttDeliveryFailedMessage,
  );
  t.is(bad.store.get(mqttHealthTagIds('plant').lastDeliverySuccess)?.value, false);
  const log = bad.logs.text();
  t.regex(
    log,
    /cannot connect to the broker \(.*\(MQTT reason 13[45]\)\); retrying\. Check the publisher’s authentication/,
  );
  t.notRegex(log, /wrong-pass/);
  await bad.publisher.stop();
});

test('TLS with a test CA (caFile) and a client certificate', async (t) => {
  const certs = await makeCertificates(t);
  const client = await makeClientCertificate(certs, 'gateway1');
  const broker = await startMosquitto(t, { tls: { certs, requireClientCert: true } });
  const { clock, publisher, statusIs } = await setup(t, {
    brokerUrl: broker.url,
    caFile: certs.caFile,
    authentication: {
      mode: 'Client certificate',
      certFile: client.certFile,
      keyFile: client.keyFile,
    },
  });
  const subscriberCert = await makeClientCertificate(certs, 'subscriber');
  const { readFile } = await import('node:fs/promises');
  const sub = await subscribe(t, broker.url, 'tagd/gw1/#', {
    ca: certs.ca,
    cert: await readFile(subscriberCert.certFile),
    key: await readFile(subscriberCert.keyFile),
  });
  const on = statusIs('On');
  await publisher.start();
  await on;
  clock.advance(1000);
  const [message] = await sub.waitForCount(1);
  t.is(message?.topic, 'tagd/gw1/line1');
});

test('TLS without trusting the CA: refused, named as an untrusted certificate', async (t) => {
  const certs = await makeCertificates(t);
  const broker = await startMosquitto(t, { tls: { certs } });
  const { publisher, store } = await setup(t, { brokerUrl: broker.url });
  const refused = deliveryError(store);
  await publisher.start();
  await refused;
  t.regex(publisher.state().reason ?? '', /^the broker's certificate is not trusted \(/);
});

test('ACL refusal: a publish the broker does not authorize is named, status Error', async (t) => {
  const broker = await startMosquitto(t, {
    users: { gateway: 'pw-123456' },
    acl: 'user gateway\ntopic read tagd/#\n',
  });
  const { clock, publisher, statusIs, logs } = await setup(t, {
    brokerUrl: broker.url,
    authentication: { mode: 'Username password', username: 'gateway', password: 'pw-123456' },
  });
  const on = statusIs('On');
  await publisher.start();
  await on;
  const error = statusIs('Error');
  clock.advance(1000);
  await error;
  await publisher.idle();
  t.regex(publisher.state().reason ?? '', /not authorized by the broker \(MQTT reason 135\)/);
  t.is(publisher.state().counters.failures, 1);
  // Refused messages would be refused again: they are not kept in the outbox.
  t.is(publisher.state().queueDepth, 0);
  t.regex(logs.text(), /a batch was not delivered \(not authorized/);
});

test('real time: with updateIntervalMs 50 a change reaches a subscriber at the next tick', async (t) => {
  const broker = await startMosquitto(t);
  const store = new TagStore({ clock: systemClock });
  const write = (value: number) =>
    store.write([
      {
        fullTagId: 'Line1/Oven/Temp',
        utcTimestamp: new Date().toISOString(),
        quality: 'Good',
        value,
      },
    ]);
  write(1);
  const collections = new Collections(store, [{ name: 'line1', members: ['Line1/**'] }]);
  await collections.start();
  t.teardown(() => collections.stop());
  const publisher = new MqttPublisher(
    mqttConfigSchema.parse({
      name: 'plant',
      brokerUrl: broker.url,
      collections: ['line1'],
      topicPrefix: 'tagd/gw1',
      updateIntervalMs: 50,
    }),
    {
      store,
      collections,
      clock: systemClock,
      logger: captureLogs().logger,
      stateDir: await tempDir(t),
    },
  );
  t.teardown(() => publisher.stop());
  const sub = await subscribe(t, broker.url, 'tagd/gw1/#');
  await publisher.start();
  await sub.waitForCount(1);
  const written = performance.now();
  write(2);
  await sub.waitForCount(2);
  const elapsed = performance.now() - written;
  t.deepEqual(
    (JSON.parse(String(sub.messages[1]?.payload)) as { value: number }[]).map((e) => e.value),
    [2],
  );
  // One interval plus the broker's round trip; generous for a loaded machine.
  t.true(elapsed < 1_000, `${elapsed} ms`);
});

test('its own health tags are not published, even by a collection of every tag', async (t) => {
  const broker = await startMosquitto(t);
  const { clock, store, collections, publisher, statusIs } = await setup(t, {
    brokerUrl: broker.url,
    format: 'json-per-tag',
    collections: ['all'],
  });
  collections.put({ name: 'all', members: ['**'] });
  const sub = await subscribe(t, broker.url, 'tagd/gw1/#');
  const on = statusIs('On');
  await publisher.start();
  await on;
  clock.advance(1000);
  await publisher.idle();
  clock.advance(1000);
  await publisher.idle();
  // A sentinel: once its message arrived, every earlier one has (one client, in order).
  store.write([sample(clock, 'Line1/Oven/Temp', 999)]);
  clock.advance(1000);
  await sub.waitFor((list) => list.some((m) => String(m.payload).includes('"value":999')));
  t.true(sub.messages.some((m) => m.topic === 'tagd/gw1/Line2/Oven/Temp'));
  t.false(sub.messages.some((m) => m.topic.startsWith('tagd/gw1/Publishers/plant/')));
});
