import { setTimeout as delay } from 'node:timers/promises';
import test, { type ExecutionContext } from 'ava';
import type { PayloadEntry } from '../../../src/publishers/trigger/payload.js';
import { webhookConfigSchema } from '../../../src/publishers/webhook/schema.js';
import { WebhookPublisher } from '../../../src/publishers/webhook/webhook-publisher.js';
import { Collections } from '../../../src/tags/collections.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { startReceiver } from '../../helpers/webhook-receiver.js';

const t0 = Date.UTC(2026, 0, 1);

/** A storeAndForward publisher in Everything mode on a manual clock, and its receiver (down). */
async function storeAndForwardSetup(t: ExecutionContext) {
  const receiver = await startReceiver(t, { down: true });
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  const write = (value: number) =>
    store.write([
      {
        fullTagId: 'Line1/Count',
        utcTimestamp: new Date(clock.now()).toISOString(),
        quality: 'Good',
        value,
      },
    ]);
  write(0);
  const collections = new Collections(store, [{ name: 'line1', members: ['Line1/**'] }]);
  await collections.start();
  t.teardown(() => collections.stop());
  const logs = captureLogs();
  const publisher = new WebhookPublisher(
    webhookConfigSchema.parse({
      name: 'cloud',
      destinationUrl: receiver.url,
      collections: ['line1'],
      loggingMode: 'Everything',
      storeAndForward: true,
    }),
    {
      store,
      collections,
      clock,
      logger: logs.logger,
      version: '1.0.0',
      stateDir: await tempDir(t),
    },
  );
  t.teardown(() => publisher.stop());
  await publisher.start();

  /** Moves to the next tick and lets its delivery end, running the waits between attempts. */
  const tick = async () => {
    clock.advance(10_000);
    let done = false;
    const idle = publisher.idle().then(() => {
      done = true;
    });
    while (!done) {
      // Beyond the interval timer, a pending timer is a wait between attempts.
      if (clock.pendingTimers() > 1) clock.advance(500);
      await delay(2);
    }
    await idle;
  };
  const values = () =>
    receiver.requests.map((request) =>
      (request.json as PayloadEntry[]).map((entry) => entry.value),
    );
  return { receiver, clock, write, logs, publisher, tick, values };
}

test('storeAndForward: receiver down for a minute, then up: every batch arrives once, in order', async (t) => {
  const { receiver, write, logs, publisher, tick, values: sent } = await storeAndForwardSetup(t);
  // A minute down: six batches, each failing its attempts, each kept.
  for (let value = 1; value <= 6; value++) {
    write(value);
    await tick();
  }
  t.is(receiver.requests.length, 0);
  t.is(publisher.state().status, 'Error');
  t.regex(logs.text(), /was kept in the outbox to be sent again/);

  await receiver.up();
  write(7);
  await tick();
  t.deepEqual(sent(), [[1], [2], [3], [4], [5], [6], [7]]);
  t.is(publisher.state().status, 'On');
  t.is(publisher.state().counters.batches, 7);

  // Nothing is sent twice afterwards.
  write(8);
  await tick();
  t.deepEqual(
    receiver.requests.map((request) => (request.json as PayloadEntry[])[0]?.value),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
});

test('storeAndForward: a batch whose delivery a stop cut short is kept and sent after the next start', async (t) => {
  const { receiver, clock, write, publisher, tick, values } = await storeAndForwardSetup(t);
  write(1);
  clock.advance(10_000);
  // The first attempt failed once a wait before the next one is pending beside the interval.
  while (clock.pendingTimers() <= 1) await delay(2);
  await publisher.stop();
  t.is(receiver.requests.length, 0);

  await receiver.up();
  await publisher.start();
  write(2);
  await tick();
  t.deepEqual(values(), [[1], [2]]);
});

test('without storeAndForward (the default) a failed batch is dropped, as the spec says', async (t) => {
  const config = webhookConfigSchema.parse({
    name: 'cloud',
    destinationUrl: 'http://127.0.0.1:1/hook',
    collections: ['line1'],
  });
  t.is(config.storeAndForward, undefined);
});
