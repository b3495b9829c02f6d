import test from 'ava';
import { RingBuffer } from '../../../src/publishers/trigger/ring-buffer.js';

test('keeps items in order up to its capacity', (t) => {
  const ring = new RingBuffer<number>(4);
  for (const n of [1, 2, 3]) t.false(ring.push(n));
  t.is(ring.length, 3);
  t.deepEqual(ring.drain(), [1, 2, 3]);
  t.is(ring.length, 0);
  t.deepEqual(ring.drain(), []);
  t.is(ring.dropped, 0);
});

test('a full ring drops the oldest items and counts them', (t) => {
  const ring = new RingBuffer<number>(3);
  const droppedFlags = [1, 2, 3, 4, 5, 6, 7].map((n) => ring.push(n));
  t.deepEqual(droppedFlags, [false, false, false, true, true, true, true]);
  t.is(ring.length, 3);
  t.is(ring.dropped, 4);
  t.deepEqual(ring.drain(), [5, 6, 7]);
});

test('wraps around across drains', (t) => {
  const ring = new RingBuffer<number>(3);
  ring.push(1);
  ring.push(2);
  t.deepEqual(ring.drain(), [1, 2]);
  for (const n of [3, 4, 5, 6]) ring.push(n);
  t.deepEqual(ring.drain(), [4, 5, 6]);
  ring.push(7);
  ring.push(8);
  t.deepEqual(ring.drain(), [7, 8]);
  t.is(ring.dropped, 1);
});

test('clear forgets the items but not the dropped count', (t) => {
  const ring = new RingBuffer<string>(1);
  ring.push('a');
  ring.push('b');
  ring.clear();
  t.is(ring.length, 0);
  t.is(ring.dropped, 1);
  t.deepEqual(ring.drain(), []);
});

test('refuses a capacity below 1', (t) => {
  t.throws(() => new RingBuffer(0), { instanceOf: RangeError });
  t.throws(() => new RingBuffer(1.5), { instanceOf: RangeError });
});
