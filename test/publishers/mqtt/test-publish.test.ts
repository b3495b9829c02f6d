import test from 'ava';
import { mqttConfigSchema } from '../../../src/publishers/mqtt/schema.js';
import {
  publishMqttTest,
  sparkplugTestRefusal,
} from '../../../src/publishers/mqtt/test-publish.js';
import { Collections } from '../../../src/tags/collections.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { startMosquitto } from '../../helpers/mosquitto.js';
import { subscribe } from '../../helpers/mqtt-subscriber.js';

const t0 = Date.UTC(2026, 0, 1);

async function rig(t: import('ava').ExecutionContext) {
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  const at = new Date(t0).toISOString();
  store.write([
    { fullTagId: 'Line1/Speed', utcTimestamp: at, quality: 'Good', value: 12.5 },
    { fullTagId: 'Line1/Running', utcTimestamp: at, quality: 'Good', value: true },
  ]);
  const collections = new Collections(store, [{ name: 'line1', members: ['Line1/**'] }]);
  await collections.start();
  t.teardown(() => collections.stop());
  return { store, collections, clock, baseDir: process.cwd() };
}

test('a json publisher test publishes the numeric tags once to <topicPrefix>/test, not retained, and reports the PUBACK', async (t) => {
  const broker = await startMosquitto(t);
  const deps = await rig(t);
  const watcher = await subscribe(t, broker.url, 'plant/test');
  const config = mqttConfigSchema.parse({
    name: 'cloud',
    brokerUrl: broker.url,
    collections: ['line1'],
    topicPrefix: 'plant',
  });
  const result = await publishMqttTest(config, deps);
  t.like(result, { ok: true, pubackReasonCode: 0, attempts: 1, samples: 1 });
  const [message] = await watcher.waitForCount(1);
  t.false(message?.retain);
  t.deepEqual(JSON.parse(String(message?.payload)), [
    {
      fullTagId: 'Line1/Speed',
      utcTimestamp: new Date(t0).toISOString(),
      quality: 'Good',
      value: 12.5,
    },
  ]);
});

test('a sparkplugB publisher has no test message: ok false, saying why, nothing connected', async (t) => {
  const deps = await rig(t);
  const config = mqttConfigSchema.parse({
    name: 'spb',
    brokerUrl: 'mqtt://127.0.0.1:1',
    collections: ['line1'],
    format: 'sparkplugB',
    groupId: 'G',
    edgeNodeId: 'E',
  });
  t.like(await publishMqttTest(config, deps), {
    ok: false,
    attempts: 0,
    error: sparkplugTestRefusal,
  });
});
