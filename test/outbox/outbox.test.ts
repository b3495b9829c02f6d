import { join } from 'node:path';
import test from 'ava';
import { Outbox } from '../../src/outbox/outbox.js';
import { tempDir } from '../helpers/temp-dir.js';

test('messages come back in order and survive closing and reopening', async (t) => {
  const file = join(await tempDir(t), 'outbox', 'a.db');
  const outbox = new Outbox({ file, limitBytes: 1_000_000, now: () => 1000 });
  outbox.open();
  outbox.append([
    { topic: 'a', payload: 'one' },
    { topic: 'b', payload: Buffer.from([1, 2, 3]) },
  ]);
  outbox.append([{ topic: 'c', payload: 'three' }]);
  t.is(outbox.depth, 3);
  t.is(outbox.sizeBytes, 1 + 3 + 1 + 3 + 1 + 5);
  outbox.close();

  const again = new Outbox({ file, limitBytes: 1_000_000 });
  again.open();
  t.teardown(() => again.close());
  t.is(again.depth, 3);
  t.is(again.oldestQueuedAt(), 1000);
  const all = again.peek(10);
  t.deepEqual(
    all.map((m) => [m.topic, m.payload.toString('hex')]),
    [
      ['a', Buffer.from('one').toString('hex')],
      ['b', '010203'],
      ['c', Buffer.from('three').toString('hex')],
    ],
  );
  again.remove([all[0]?.id as number, all[2]?.id as number]);
  t.deepEqual(
    again.peek(10).map((m) => m.topic),
    ['b'],
  );
  t.is(again.depth, 1);
  t.is(again.sizeBytes, 4);
  // New messages go after the ones left, whatever was removed.
  again.append([{ topic: 'd', payload: 'x' }]);
  t.deepEqual(
    again.peek(10).map((m) => m.topic),
    ['b', 'd'],
  );
});

test('beyond the limit the oldest messages are dropped and counted', async (t) => {
  const file = join(await tempDir(t), 'b.db');
  const outbox = new Outbox({ file, limitBytes: 50 });
  outbox.open();
  t.teardown(() => outbox.close());
  // 10 bytes each: topic "t" and a 9-byte payload.
  for (let i = 0; i < 5; i++) t.is(outbox.append([{ topic: 't', payload: `payload-${i}` }]), 0);
  t.is(
    outbox.append([
      { topic: 't', payload: 'payload-5' },
      { topic: 't', payload: 'payload-6' },
    ]),
    2,
  );
  t.is(outbox.dropped, 2);
  t.is(outbox.depth, 5);
  t.deepEqual(
    outbox.peek(10).map((m) => m.payload.toString()),
    ['payload-2', 'payload-3', 'payload-4', 'payload-5', 'payload-6'],
  );
});
