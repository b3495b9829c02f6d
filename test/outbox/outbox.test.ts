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

test('messages carry samples: counted while queued, removed and dropped; a window is read by its samples', async (t) => {
  const file = join(await tempDir(t), 'outbox', 's.db');
  const outbox = new Outbox({ file, limitBytes: 40 });
  outbox.open();
  t.teardown(() => outbox.close());
  outbox.append([
    { topic: 't', payload: 'aaaaaaaaa', samples: 5 },
    { topic: 't', payload: 'bbbbbbbbb', samples: 3 },
    { topic: 't', payload: 'ccccccccc' },
  ]);
  t.is(outbox.samples, 9);
  t.deepEqual(
    outbox.peekSamples(8, 100).map((m) => m.samples),
    [5, 3],
  );
  // At least one message, whatever its samples.
  t.deepEqual(
    outbox.peekSamples(2, 100).map((m) => m.samples),
    [5],
  );
  t.deepEqual(
    outbox.peekSamples(100, 2).map((m) => m.samples),
    [5, 3],
  );
  // 30 bytes kept; 30 more drop the two oldest (5 and 3 samples).
  outbox.append([{ topic: 't', payload: 'd'.repeat(29), samples: 4 }]);
  t.is(outbox.dropped, 2);
  t.is(outbox.droppedSamples, 8);
  t.is(outbox.samples, 5);
  outbox.remove(outbox.peek(1).map((m) => m.id));
  t.is(outbox.samples, 4);
});

test('an outbox written before messages counted samples opens, each message counting one', async (t) => {
  const file = join(await tempDir(t), 'outbox', 'old.db');
  const { default: Database } = await import('better-sqlite3');
  const { mkdirSync } = await import('node:fs');
  const { dirname } = await import('node:path');
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.exec(
    'CREATE TABLE messages (id INTEGER PRIMARY KEY, topic TEXT NOT NULL, payload BLOB NOT NULL, size INTEGER NOT NULL, t INTEGER NOT NULL)',
  );
  db.prepare('INSERT INTO messages (topic, payload, size, t) VALUES (?, ?, ?, ?)').run(
    'a',
    Buffer.from('x'),
    2,
    1,
  );
  db.close();
  const outbox = new Outbox({ file, limitBytes: 1_000 });
  outbox.open();
  t.teardown(() => outbox.close());
  t.is(outbox.depth, 1);
  t.is(outbox.samples, 1);
  outbox.append([{ topic: 'b', payload: 'y', samples: 7 }]);
  t.deepEqual(
    outbox.peek(10).map((m) => [m.topic, m.samples]),
    [
      ['a', 1],
      ['b', 7],
    ],
  );
});
