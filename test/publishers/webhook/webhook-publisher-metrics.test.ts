/**
 * What a webhook publisher tells the metrics: each delivery's outcome and duration through its
 * `PublisherMetrics` port, and what waits in its Everything buffer through `queue()`; the
 * manager removes a publisher's series with the publisher.
 */
import { setTimeout as delay } from 'node:timers/promises';
import test from 'ava';
import { unlicensed } from '../../../src/license/license.js';
import type { PublisherMetrics } from '../../../src/publishers/publisher.js';
import { webhookConfigSchema } from '../../../src/publishers/webhook/schema.js';
import { WebhookPublisher } from '../../../src/publishers/webhook/webhook-publisher.js';
import { WebhookPublishers } from '../../../src/publishers/webhook/webhook-publishers.js';
import { Collections } from '../../../src/tags/collections.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { startReceiver } from '../../helpers/webhook-receiver.js';

const t0 = Date.UTC(2026, 0, 1);

/** A port that records every call. */
function recordingPort() {
  const deliveries: { publisher: string; outcome: string; seconds: number }[] = [];
  const removed: string[] = [];
  const port: PublisherMetrics = {
    deliveryEnded: (publisher, outcome, seconds) =>
      deliveries.push({ publisher, outcome, seconds }),
    removed: (publisher) => removed.push(publisher),
  };
  return { port, deliveries, removed };
}

async function world() {
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
  return { clock, store, collections, logs: captureLogs() };
}

test('deliveries report their outcome and duration; the Everything buffer is the queue', async (t) => {
  const receiver = await startReceiver(t);
  const { clock, store, collections, logs } = await world();
  t.teardown(() => collections.stop());
  const recorded = recordingPort();
  const publisher = new WebhookPublisher(
    webhookConfigSchema.parse({
      name: 'cloud',
      collections: ['line1'],
      destinationUrl: receiver.url,
      loggingMode: 'Everything',
    }),
    { store, collections, clock, logger: logs.logger, version: '1', metrics: recorded.port },
  );
  t.teardown(() => publisher.stop());
  await publisher.start();
  t.deepEqual(publisher.queue(), { name: 'cloud', depth: 0 });
  clock.advance(3_000);
  for (const value of [2, 3, 4]) {
    store.write([
      {
        fullTagId: 'Line1/Temp',
        utcTimestamp: new Date(clock.now()).toISOString(),
        quality: 'Good',
        value,
      },
    ]);
  }
  // Three updates wait, the oldest since the start (the buffer's last drain).
  t.deepEqual(publisher.queue(), { name: 'cloud', depth: 3, oldestQueuedAt: t0 });

  clock.advance(7_000);
  await receiver.waitForRequests(1);
  await publisher.idle();
  t.deepEqual(publisher.queue(), { name: 'cloud', depth: 0 });
  t.is(recorded.deliveries.length, 1);
  t.like(recorded.deliveries[0], { publisher: 'cloud', outcome: 'success' });
  t.true((recorded.deliveries[0]?.seconds ?? -1) >= 0);

  // Every attempt refused: one failure, its waits (1 s and 2 s on the clock) in its duration.
  receiver.script(500, 500, 500);
  store.write([
    {
      fullTagId: 'Line1/Temp',
      utcTimestamp: new Date(clock.now()).toISOString(),
      quality: 'Good',
      value: 5,
    },
  ]);
  clock.advance(10_000);
  while (recorded.deliveries.length < 2) {
    if (clock.pendingTimers() > 1) clock.advance(500);
    await delay(2);
  }
  t.like(recorded.deliveries[1], { publisher: 'cloud', outcome: 'failure' });
  t.true((recorded.deliveries[1]?.seconds ?? 0) >= 3);
});

test('the manager removes the series of a removed publisher', async (t) => {
  const { clock, store, collections, logs } = await world();
  t.teardown(() => collections.stop());
  const recorded = recordingPort();
  const publishers = new WebhookPublishers({
    store,
    collections,
    clock,
    logger: logs.logger,
    // Unlicensed: the publisher stays Off, which is all removal needs.
    license: () => unlicensed,
    version: '1',
    metrics: recorded.port,
  });
  const config = webhookConfigSchema.parse({
    name: 'cloud',
    collections: ['line1'],
    destinationUrl: 'http://127.0.0.1:9/hook',
  });
  await publishers.startAll([config]);
  t.deepEqual(publishers.queues(), [{ name: 'cloud', depth: 0 }]);
  t.true(await publishers.remove('cloud'));
  t.deepEqual(recorded.removed, ['cloud']);
  t.deepEqual(publishers.queues(), []);
});
