/**
 * The subscription watchdog on a manual clock: the bound of a subscription, silence noticed at
 * the bound and not before, messages that put it off, several subscriptions on one timer,
 * pause and resume, and no timer left behind.
 */
import test from 'ava';
import {
  SubscriptionWatchdog,
  silenceBoundMs,
  silenceMarginMs,
} from '../../../drivers/opcua/subscription-watchdog.js';
import { ManualClock } from '../../helpers/manual-clock.js';

function setup() {
  const clock = new ManualClock();
  const silent: [string, number][] = [];
  const watchdog = new SubscriptionWatchdog<string>(clock, (key, silentMs) =>
    silent.push([key, silentMs]),
  );
  return { clock, silent, watchdog };
}

test('the bound: the keep-alive window or the heartbeat, whichever is longer, + one interval + 2 s', (t) => {
  t.is(silenceMarginMs, 2000);
  // tagd's defaults: 1000 ms publishing, 10 keep-alive counts, the heartbeat sampled as often.
  t.is(silenceBoundMs({ publishingIntervalMs: 1000, maxKeepAliveCount: 10 }), 13_000);
  t.is(
    silenceBoundMs({
      publishingIntervalMs: 1000,
      maxKeepAliveCount: 10,
      heartbeatIntervalMs: 10_000,
    }),
    13_000,
  );
  // A server that samples its CurrentTime more slowly than asked.
  t.is(
    silenceBoundMs({ publishingIntervalMs: 50, maxKeepAliveCount: 20, heartbeatIntervalMs: 5000 }),
    7050,
  );
  t.is(silenceBoundMs({ publishingIntervalMs: 50, maxKeepAliveCount: 20 }), 3050);
});

test('silence is noticed at the bound, once, and not before', (t) => {
  const { clock, silent, watchdog } = setup();
  watchdog.watch('a', 3050);
  clock.advance(3049);
  t.deepEqual(silent, []);
  clock.advance(1);
  t.deepEqual(silent, [['a', 3050]]);
  t.false(watchdog.has('a'), 'no longer watched');
  clock.advance(10_000);
  t.is(silent.length, 1);
  t.is(clock.pendingTimers(), 0);
});

test('each message puts the bound off', (t) => {
  const { clock, silent, watchdog } = setup();
  watchdog.watch('a', 1000);
  for (let i = 0; i < 10; i++) {
    clock.advance(900);
    watchdog.heard('a');
  }
  t.deepEqual(silent, []);
  clock.advance(999);
  t.deepEqual(silent, []);
  clock.advance(1);
  t.deepEqual(silent, [['a', 1000]]);
});

test('subscriptions with their own bounds share one timer', (t) => {
  const { clock, silent, watchdog } = setup();
  watchdog.watch('slow', 5000);
  watchdog.watch('fast', 1000);
  t.is(clock.pendingTimers(), 1);
  clock.advance(1000);
  t.deepEqual(silent, [['fast', 1000]]);
  clock.advance(3000);
  watchdog.heard('slow');
  watchdog.heard('gone');
  clock.advance(4999);
  t.deepEqual(silent, [['fast', 1000]]);
  clock.advance(1);
  t.deepEqual(silent, [
    ['fast', 1000],
    ['slow', 5000],
  ]);
  t.is(clock.pendingTimers(), 0);
});

test('watching anew starts from now, with the new bound', (t) => {
  const { clock, silent, watchdog } = setup();
  watchdog.watch('a', 1000);
  clock.advance(800);
  watchdog.watch('a', 3000);
  clock.advance(2999);
  t.deepEqual(silent, []);
  clock.advance(1);
  t.deepEqual(silent, [['a', 3000]]);
});

test('paused, nothing is silent; resumed, the silence counts from then', (t) => {
  const { clock, silent, watchdog } = setup();
  watchdog.watch('a', 1000);
  clock.advance(500);
  watchdog.pause();
  t.is(clock.pendingTimers(), 0);
  clock.advance(60_000);
  t.deepEqual(silent, []);
  watchdog.resume();
  clock.advance(999);
  t.deepEqual(silent, []);
  clock.advance(1);
  t.deepEqual(silent, [['a', 1000]]);
});

test('forget and clear leave no timer', (t) => {
  const { clock, silent, watchdog } = setup();
  watchdog.watch('a', 1000);
  watchdog.watch('b', 2000);
  watchdog.forget('a');
  clock.advance(1000);
  t.deepEqual(silent, []);
  watchdog.clear();
  t.is(clock.pendingTimers(), 0);
  clock.advance(5000);
  t.deepEqual(silent, []);
});

test('a key watched again from its own silence callback is watched anew', (t) => {
  const clock = new ManualClock();
  let calls = 0;
  const watchdog: SubscriptionWatchdog<string> = new SubscriptionWatchdog(clock, (key) => {
    calls++;
    watchdog.watch(key, 1000);
  });
  watchdog.watch('a', 1000);
  clock.advance(1000);
  t.is(calls, 1);
  clock.advance(999);
  t.is(calls, 1);
  clock.advance(1);
  t.is(calls, 2);
});
