import test, { type ExecutionContext } from 'ava';
import { ConnectionLifecycle } from '../../drivers/connection-lifecycle.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** A lifecycle on a manual clock: waits of 100 ms doubling up to 500 ms. */
function setup() {
  const clock = new ManualClock();
  const logs = captureLogs();
  const unavailable: string[] = [];
  const lifecycle = new ConnectionLifecycle(
    'Test',
    { clock, logger: logs.logger },
    { reconnectDelayMs: 100, maxReconnectDelayMs: 500 },
    {
      counters: () => ({ polls: 3 }),
      writeUnavailable: (message) => unavailable.push(message),
    },
  );
  return { clock, logs, unavailable, lifecycle };
}

/** A promise to settle by hand. */
function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** Fails the connection once and checks that the retry comes after exactly `expectedMs`. */
function failAndExpectWait(
  t: ExecutionContext,
  { clock, lifecycle }: ReturnType<typeof setup>,
  expectedMs: number,
  message = 'refused',
): void {
  let retried = 0;
  lifecycle.retryLater(message, () => retried++);
  clock.advance(expectedMs - 1);
  t.is(retried, 0, `no retry before ${expectedMs} ms`);
  clock.advance(1);
  t.is(retried, 1, `a retry at ${expectedMs} ms`);
}

test('start is single-flight: concurrent calls share one begin, a running driver skips it', async (t) => {
  const { lifecycle } = setup();
  const gate = deferred();
  let begins = 0;
  const begin = async () => {
    begins++;
    await gate.promise;
    lifecycle.started();
  };
  const first = lifecycle.start(begin);
  const second = lifecycle.start(begin);
  t.is(first, second);
  t.is(begins, 1);
  t.false(lifecycle.running);
  gate.resolve();
  await first;
  t.true(lifecycle.running);
  t.is(lifecycle.status(2).state, 'Starting');
  await lifecycle.start(begin);
  t.is(begins, 1, 'a running driver does not begin again');
});

test('a failed start leaves the driver stopped and the next start begins again', async (t) => {
  const { lifecycle } = setup();
  let begins = 0;
  const failing = async () => {
    begins++;
    lifecycle.setState('Error', 'no DBC');
    throw new Error('no DBC');
  };
  await t.throwsAsync(lifecycle.start(failing), { message: 'no DBC' });
  t.false(lifecycle.running);
  t.like(lifecycle.status(0), { state: 'Error', message: 'no DBC' });
  await t.throwsAsync(lifecycle.start(failing));
  t.is(begins, 2);
});

test('stop during a start waits for it, then releases and leaves the tags Unavailable', async (t) => {
  const { lifecycle, unavailable, logs } = setup();
  const gate = deferred();
  const order: string[] = [];
  let generation = -1;
  const starting = lifecycle.start(async () => {
    await gate.promise;
    generation = lifecycle.started();
    order.push('started');
  });
  const stopping = lifecycle.stop(async () => {
    order.push('released');
  });
  await Promise.resolve();
  t.deepEqual(order, [], 'stop does not release before the start has settled');
  gate.resolve();
  await Promise.all([starting, stopping]);
  t.deepEqual(order, ['started', 'released']);
  t.false(lifecycle.running);
  t.false(lifecycle.isCurrent(generation), 'callbacks of the stopped run are stale');
  t.deepEqual(unavailable, ['The driver is stopped.']);
  t.like(lifecycle.status(1), { state: 'Stopped', tagCount: 1, counters: { polls: 3 } });
  t.is(lifecycle.status(1).message, undefined);
  const stopped = logs.lines.find((line) => line.msg === 'Test driver stopped');
  t.deepEqual(stopped?.counters, { polls: 3 });
});

test('stop of a driver that never started does nothing', async (t) => {
  const { lifecycle, unavailable, logs } = setup();
  let released = false;
  await lifecycle.stop(async () => {
    released = true;
  });
  t.false(released);
  t.deepEqual(unavailable, []);
  t.is(logs.lines.length, 0);
});

test('stop after a start that failed does not release anything', async (t) => {
  const { lifecycle } = setup();
  const starting = lifecycle.start(async () => {
    throw new Error('refused');
  });
  let released = false;
  await lifecycle.stop(async () => {
    released = true;
  });
  await t.throwsAsync(starting);
  t.false(released);
});

test('the wait doubles after every failure up to the cap', async (t) => {
  const context = setup();
  await context.lifecycle.start(async () => {
    context.lifecycle.started();
  });
  for (const wait of [100, 200, 400, 500, 500]) failAndExpectWait(t, context, wait);
  t.like(context.lifecycle.status(0), { state: 'Reconnecting', message: 'refused' });
});

test('a repeated failure is logged once as a warning, then at debug level', async (t) => {
  const context = setup();
  const { lifecycle, logs } = context;
  await lifecycle.start(async () => {
    lifecycle.started();
  });
  failAndExpectWait(t, context, 100);
  failAndExpectWait(t, context, 200);
  failAndExpectWait(t, context, 400, 'timed out');
  const failures = logs.lines
    .filter((line) => line.msg?.startsWith('Test connection failed'))
    .map((line) => [line.level, line.msg, line.retryInMs]);
  t.deepEqual(failures, [
    [40, 'Test connection failed: refused', 100],
    [20, 'Test connection failed again', 200],
    [40, 'Test connection failed: timed out', 400],
  ]);
});

test('after a success the wait starts over and the same failure is news again', async (t) => {
  const context = setup();
  const { lifecycle, logs } = context;
  await lifecycle.start(async () => {
    lifecycle.started();
  });
  lifecycle.attempt();
  failAndExpectWait(t, context, 100);
  lifecycle.attempt();
  failAndExpectWait(t, context, 200);
  lifecycle.attempt();
  t.is(lifecycle.attempts, 3);
  lifecycle.resetBackoff();
  t.is(lifecycle.attempts, 0);
  failAndExpectWait(t, context, 100);
  const warnings = logs.lines.filter((line) => line.level === 40);
  t.is(warnings.length, 2, 'the failure after the success is logged as a warning');
});

test('a new start resets the wait of an earlier run', async (t) => {
  const context = setup();
  const { lifecycle } = context;
  const begin = async () => {
    lifecycle.started();
  };
  await lifecycle.start(begin);
  failAndExpectWait(t, context, 100);
  failAndExpectWait(t, context, 200);
  await lifecycle.stop(async () => {});
  await lifecycle.start(begin);
  failAndExpectWait(t, context, 100);
});

test('a stop leaves no timer and the scheduled retry never runs', async (t) => {
  const { clock, lifecycle } = setup();
  await lifecycle.start(async () => {
    lifecycle.started();
  });
  let retried = 0;
  lifecycle.retryLater('refused', () => retried++);
  t.is(clock.pendingTimers(), 1);
  await lifecycle.stop(async () => {});
  t.is(clock.pendingTimers(), 0);
  clock.advance(10_000);
  t.is(retried, 0);
});

test('a second failure during a wait replaces the wait instead of adding one', async (t) => {
  const { clock, lifecycle } = setup();
  await lifecycle.start(async () => {
    lifecycle.started();
  });
  const retried: string[] = [];
  lifecycle.retryLater('first', () => retried.push('first'));
  lifecycle.retryLater('second', () => retried.push('second'));
  t.is(clock.pendingTimers(), 1);
  clock.advance(1_000);
  t.deepEqual(retried, ['second']);
});

test('tags are written Unavailable once per outage', async (t) => {
  const { lifecycle, unavailable } = setup();
  await lifecycle.start(async () => {
    lifecycle.started();
  });
  lifecycle.markUnavailable('lost');
  lifecycle.markUnavailable('still lost');
  t.deepEqual(unavailable, ['lost']);
  lifecycle.markAvailable();
  lifecycle.markUnavailable('lost again');
  t.deepEqual(unavailable, ['lost', 'lost again']);
  await lifecycle.stop(async () => {});
  t.deepEqual(unavailable, ['lost', 'lost again', 'The driver is stopped.']);
});

test('since moves when the state changes, not when only the message does', async (t) => {
  const { clock, lifecycle } = setup();
  const created = new Date(clock.now()).toISOString();
  t.deepEqual(lifecycle.status(0), {
    state: 'Stopped',
    since: created,
    tagCount: 0,
    counters: { polls: 3 },
  });
  clock.advance(1_000);
  lifecycle.setState('Reconnecting', 'refused');
  const since = lifecycle.status(0).since;
  t.not(since, created);
  clock.advance(1_000);
  lifecycle.setState('Reconnecting', 'timed out');
  t.like(lifecycle.status(0), { since, message: 'timed out' });
});

test('nextGeneration makes the callbacks of an earlier attempt stale', async (t) => {
  const { lifecycle } = setup();
  await lifecycle.start(async () => {
    lifecycle.started();
  });
  const first = lifecycle.generation;
  t.true(lifecycle.isCurrent(first));
  const next = lifecycle.nextGeneration();
  t.false(lifecycle.isCurrent(first));
  t.true(lifecycle.isCurrent(next));
});

test('a detached step that throws or rejects leaves the driver in Error, tags Unavailable', async (t) => {
  for (const how of ['rejects', 'throws'] as const) {
    const { lifecycle, logs, unavailable } = setup();
    let run = 0;
    await lifecycle.start(async () => {
      run = lifecycle.started();
    });
    const failure = new Error(`the step ${how}`);
    lifecycle.detached(
      run,
      how === 'rejects'
        ? async () => {
            throw failure;
          }
        : () => {
            throw failure;
          },
    );
    // A rejection is seen after the microtasks of the step.
    await new Promise((resolve) => setImmediate(resolve));
    const status = lifecycle.status(2);
    t.is(status.state, 'Error', how);
    t.is(status.message, `The driver failed: the step ${how}`);
    t.deepEqual(unavailable, [`The driver failed: the step ${how}`]);
    const error = logs.lines.find((line) => line.level === 50);
    t.is(error?.msg, 'Test driver failed; the other drivers keep running');
  }
});

test('a retry whose attempt rejects ends in Error; a failure of an older run is only logged', async (t) => {
  const { clock, lifecycle, logs } = setup();
  await lifecycle.start(async () => {
    lifecycle.started();
  });
  lifecycle.markUnavailable('refused');
  lifecycle.retryLater('refused', async () => {
    throw new Error('attempt broke');
  });
  clock.advance(100);
  await new Promise((resolve) => setImmediate(resolve));
  t.is(lifecycle.status(0).state, 'Error');
  t.is(lifecycle.status(0).message, 'The driver failed: attempt broke');
  t.is(clock.pendingTimers(), 0, 'no retry after the driver failed');

  const old = lifecycle.generation;
  lifecycle.nextGeneration();
  lifecycle.setState('Running');
  lifecycle.detached(old, async () => {
    throw new Error('late');
  });
  await new Promise((resolve) => setImmediate(resolve));
  t.is(lifecycle.status(0).state, 'Running', 'the current run is not touched');
  t.true(logs.lines.some((line) => line.level === 40 && String(line.msg).includes('earlier run')));
});
