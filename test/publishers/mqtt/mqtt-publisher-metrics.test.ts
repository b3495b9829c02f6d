/**
 * What an MQTT publisher tells the metrics: each publish's outcome and duration through its
 * `PublisherMetrics` port, and its queue and outbox through `queue()`. A real broker
 * (mosquitto), the ticks on a ManualClock.
 */
import test from 'ava';
import { MqttPublisher, mqttHealthTagIds } from '../../../src/publishers/mqtt/mqtt-publisher.js';
import { mqttConfigSchema } from '../../../src/publishers/mqtt/schema.js';
import type { PublisherMetrics } from '../../../src/publishers/publisher.js';
import { Collections } from '../../../src/tags/collections.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { startMosquitto } from '../../helpers/mosquitto.js';
import { subscribe } from '../../helpers/mqtt-subscriber.js';
import { tempDir } from '../../helpers/temp-dir.js';

const t0 = Date.UTC(2026, 0, 1);

test('a publish reports success with its duration; queue() shows the outbox', async (t) => {
  const broker = await startMosquitto(t);
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  store.write([
    {
      fullTagId: 'Line1/Temp',
      utcTimestamp: new Date(t0).toISOString(),
      quality: 'Good',
      value: 1,
    },
  ]);
  const collections = new Collections(store, [{ name: 'line1', members: ['Line1/**'] }]);
  await collections.start();
  t.teardown(() => collections.stop());
  const deliveries: { publisher: string; outcome: string; seconds: number }[] = [];
  const port: PublisherMetrics = {
    deliveryEnded: (publisher, outcome, seconds) =>
      deliveries.push({ publisher, outcome, seconds }),
    removed: () => undefined,
  };
  const publisher = new MqttPublisher(
    mqttConfigSchema.parse({
      name: 'plant',
      collections: ['line1'],
      topicPrefix: 'tagd/gw1',
      brokerUrl: broker.url,
    }),
    {
      store,
      collections,
      clock,
      logger: captureLogs().logger,
      stateDir: await tempDir(t),
      metrics: port,
    },
  );
  t.teardown(() => publisher.stop());
  const sub = await subscribe(t, broker.url, 'tagd/gw1/#');
  const statusId = mqttHealthTagIds('plant').status;
  const on = new Promise<void>((resolve) => {
    const off = store.subscribe((updates) => {
      if (updates.some((u) => u.sample.fullTagId === statusId && u.sample.value === 'On')) {
        off();
        resolve();
      }
    });
  });
  await publisher.start();
  await on;
  clock.advance(1000);
  await sub.waitForCount(1);
  while (deliveries.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  t.like(deliveries[0], { publisher: 'plant', outcome: 'success' });
  t.true((deliveries[0]?.seconds ?? -1) >= 0);
  const queue = publisher.queue();
  t.is(queue.name, 'plant');
  t.is(queue.depth, 0);
  t.is(queue.oldestQueuedAt, undefined);
  // The json format keeps an outbox: its series exist, empty.
  t.deepEqual(queue.outbox, { messages: 0, bytes: 0, dropped: 0 });
});
