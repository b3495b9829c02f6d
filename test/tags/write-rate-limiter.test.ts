import test from 'ava';
import { WriteRateLimiter } from '../../src/tags/write-rate-limiter.js';

test('each account may write its rate per second, items counted, refilled continuously', (t) => {
  let now = 0;
  const limiter = new WriteRateLimiter(() => now, 20);
  t.is(limiter.take('a', 15), 0);
  t.is(limiter.take('a', 5), 0);
  t.is(limiter.take('a', 1), 1, 'the 21st write within a second waits');
  t.is(limiter.take('b', 20), 0, 'accounts do not share a budget');
  now = 50; // one write's worth refilled
  t.is(limiter.take('a', 1), 0);
  t.is(limiter.take('a', 1), 1);
});

test('a batch larger than a second’s budget passes on a full bucket and leaves a debt', (t) => {
  let now = 0;
  const limiter = new WriteRateLimiter(() => now, 20);
  t.is(limiter.take('a', 100), 0);
  // 80 in debt plus one write: (1 + 80) / 20 → 5 s.
  t.is(limiter.take('a', 1), 5);
  now = 4000;
  t.is(limiter.take('a', 1), 1, 'still 1 short after 4 s');
  now = 4050;
  t.is(limiter.take('a', 1), 0);
  now = 100_000;
  t.is(limiter.take('a', 100), 0, 'full again: another batch');
  // A second batch waits until the bucket is full again: (20 + 80) / 20 s.
  t.is(limiter.take('a', 100), 5);
});
