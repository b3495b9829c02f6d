import test from 'ava';
import { PendingBytes } from '../../../../drivers/modbus/transports/pending-bytes.js';

test('nothing waiting: the chunk itself; a kept tail comes before the next chunk', (t) => {
  const pending = new PendingBytes();
  const first = Uint8Array.of(1, 2, 3, 4);
  t.is(pending.joined(first), first);
  pending.keep(first, 2);
  t.deepEqual([...pending.joined(Uint8Array.of(5, 6))], [3, 4, 5, 6]);
});

test('keeping from the end, or clearing, leaves nothing waiting', (t) => {
  const pending = new PendingBytes();
  const bytes = Uint8Array.of(7, 8, 9);
  pending.keep(bytes, 1);
  pending.clear();
  const next = Uint8Array.of(10);
  t.is(pending.joined(next), next);
  pending.keep(bytes, 3);
  t.is(pending.joined(next), next);
});

test('the kept tail is a copy: the stream may reuse its buffer', (t) => {
  const pending = new PendingBytes();
  const bytes = Uint8Array.of(1, 2, 3);
  pending.keep(bytes, 1);
  bytes.fill(0);
  t.deepEqual([...pending.joined(Uint8Array.of(4))], [2, 3, 4]);
});
