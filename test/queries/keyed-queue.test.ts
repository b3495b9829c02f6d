import test from 'ava';
import { KeyedQueue } from '../../src/queries/keyed-queue.js';

/** A promise and its resolver, to finish work when the test says. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

test('work of one key runs one piece at a time, in call order', async (t) => {
  const queue = new KeyedQueue();
  const events: string[] = [];
  const first = gate();
  const a = queue.run('set', async () => {
    events.push('a starts');
    await first.promise;
    events.push('a ends');
    return 'a';
  });
  const b = queue.run('set', async () => {
    events.push('b starts');
    return 'b';
  });
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(events, ['a starts'], 'b waits for a');
  first.open();
  t.deepEqual(await Promise.all([a, b]), ['a', 'b']);
  t.deepEqual(events, ['a starts', 'a ends', 'b starts']);
});

test('work of different keys runs side by side', async (t) => {
  const queue = new KeyedQueue();
  const blocked = gate();
  const a = queue.run('one', () => blocked.promise.then(() => 'a'));
  t.is(await queue.run('two', async () => 'b'), 'b');
  blocked.open();
  t.is(await a, 'a');
});

test('a failure is its caller’s alone: the next piece still runs, and idle keys are forgotten', async (t) => {
  const queue = new KeyedQueue();
  const failed = queue.run('set', async () => {
    throw new Error('read failed');
  });
  const next = queue.run('set', async () => 'next');
  await t.throwsAsync(failed, { message: 'read failed' });
  t.is(await next, 'next');
  await new Promise((resolve) => setImmediate(resolve));
  t.is(queue.size, 0);
});
