import test from 'ava';
import { webhookConfigSchema } from '../../../src/publishers/webhook/schema.js';
import {
  sendWebhookTest,
  testBatchLimit,
  testSamples,
} from '../../../src/publishers/webhook/test-delivery.js';
import { Collections } from '../../../src/tags/collections.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { startReceiver } from '../../helpers/webhook-receiver.js';

const t0 = Date.UTC(2026, 0, 1);

function storeWith(
  clock: ManualClock,
  count: number,
  extra: { id: string; value: unknown }[] = [],
) {
  const store = new TagStore({ clock });
  const at = new Date(t0).toISOString();
  store.write([
    ...Array.from({ length: count }, (_, i) => ({
      fullTagId: `Line1/T${String(i).padStart(5, '0')}`,
      utcTimestamp: at,
      quality: 'Good' as const,
      value: i,
    })),
    ...extra.map(({ id, value }) => ({
      fullTagId: id,
      utcTimestamp: at,
      quality: 'Good' as const,
      value: value as number,
    })),
  ]);
  return store;
}

test('a test batch holds each member once, numeric tags only, at most testBatchLimit tags', async (t) => {
  const clock = new ManualClock(t0);
  const store = storeWith(clock, testBatchLimit + 5, [
    { id: 'Line1/Running', value: true },
    { id: 'Line1/Recipe', value: 'A-12' },
  ]);
  // Two collections sharing every tag: each tag counts once.
  const collections = new Collections(store, [
    { name: 'a', members: ['Line1/**'] },
    { name: 'b', members: ['Line1/*'] },
  ]);
  await collections.start();
  t.teardown(() => collections.stop());
  const samples = testSamples({ store, collections }, ['a', 'b', 'missing']);
  t.is(samples.length, testBatchLimit);
  t.is(new Set(samples.map((sample) => sample.fullTagId)).size, testBatchLimit);

  const receiver = await startReceiver(t);
  receiver.script(503);
  const config = webhookConfigSchema.parse({
    name: 'feed',
    destinationUrl: receiver.url,
    collections: ['b'],
  });
  // One attempt, the answer as the receiver gave it: no retry waits on the (manual) clock.
  const failed = await sendWebhookTest(config, { store, collections, clock, version: 't' });
  t.like(failed, { ok: false, httpStatus: 503, attempts: 1 });
  t.is(receiver.requests.length, 1);
  const delivered = await sendWebhookTest(config, { store, collections, clock, version: 't' });
  t.like(delivered, { ok: true, httpStatus: 200, attempts: 1 });
  const body = receiver.requests[1]?.json as { fullTagId: string; value?: unknown }[];
  t.is(body.length, delivered.samples);
  t.false(
    body.some((entry) => entry.fullTagId === 'Line1/Running' || entry.fullTagId === 'Line1/Recipe'),
  );
});
