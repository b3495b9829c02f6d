/**
 * The derived-tag driver over a real TagStore on a manual clock: same-batch evaluation in
 * dependency order, coalescing, quality following the inputs (Stale by the store's sweep, Bad,
 * removed, never existing), deadband, interval triggers, time-only re-evaluation, totals kept
 * across restarts in the state directory; and one real-time test.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import type { DerivedDriver } from '../../../drivers/derived/derived-driver.js';
import { isDerivedTagSource } from '../../../drivers/derived/derived-tag-report.js';
import { createDerivedDriver } from '../../../drivers/derived/index.js';
import { derivedDriverSchema } from '../../../drivers/derived/schema.js';
import type { DriverDeps } from '../../../drivers/driver.js';
import { createSimulatorDriver } from '../../../drivers/simulator/index.js';
import { simulatorDriverSchema } from '../../../drivers/simulator/schema.js';
import { systemClock } from '../../../src/clock.js';
import type { Sample, TagValue } from '../../../src/tags/sample.js';
import { TagStore, type TagUpdate } from '../../../src/tags/tag-store.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { untilTimeoutMs } from '../../helpers/until.js';
import { driverContract } from '../contract.js';

const silent = pino({ level: 'silent' });
const t0 = Date.UTC(2026, 0, 1);

function setup(
  tags: Record<string, unknown>[],
  options: { stateDir?: string; name?: string; clock?: ManualClock; store?: TagStore } = {},
) {
  const clock = options.clock ?? new ManualClock(t0);
  const store = options.store ?? new TagStore({ clock });
  const deps: DriverDeps = {
    store,
    clock,
    logger: silent,
    stateDir: options.stateDir ?? '/nonexistent',
  };
  const config = derivedDriverSchema.parse({ type: 'derived', name: options.name ?? 'D', tags });
  const driver = createDerivedDriver(config, deps) as DerivedDriver;
  const input = (id: string, value: TagValue, at = clock.now()): Sample => ({
    fullTagId: id,
    utcTimestamp: new Date(at).toISOString(),
    quality: 'Good',
    value,
  });
  return { clock, store, driver, input };
}

function report(driver: DerivedDriver, fullTagId: string) {
  const found = driver.derivedTags().find((tag) => tag.fullTagId === fullTagId);
  if (!found) throw new Error(`no ${fullTagId}`);
  return found;
}

driverContract(test, {
  type: 'derived',
  hasPeer: false,
  async setup() {
    const { clock, store, driver, input } = setup([
      { name: 'Scaled', expression: 'scale({In/raw}, 0, 27648, 0, 100)', unit: '%' },
      { name: 'Bit3', expression: 'bit({In/word}, 3)' },
      { name: 'Avg', expression: 'avg({In/raw}, "1m")' },
    ]);
    let next = 1;
    return {
      driver,
      store,
      clock,
      tagIds: ['D/Scaled', 'D/Bit3', 'D/Avg'],
      async produce() {
        store.write([input('In/raw', 13824 + next), input('In/word', 8 + next)]);
        next++;
        clock.advance(1000);
      },
    };
  },
});

test('an input change is on its derived tag when the store write returns: same batch, in dependency order', async (t) => {
  const { store, driver, input } = setup([
    { name: 'Twice', expression: '{./PlusOne} * 2' },
    { name: 'PlusOne', expression: '{In/x} + 1' },
  ]);
  await driver.start();
  const batches: Sample[][] = [];
  store.subscribe((updates) => {
    batches.push(
      updates.map((update) => update.sample).filter((s) => s.fullTagId.startsWith('D/')),
    );
  });
  store.write([input('In/x', 4)]);
  t.is(store.get('D/PlusOne')?.value, 5);
  t.is(store.get('D/Twice')?.value, 10);
  const derivedBatches = batches.filter((batch) => batch.length > 0);
  t.is(derivedBatches.length, 1, 'one write for the whole pass');
  t.deepEqual(
    derivedBatches[0]?.map((sample) => [sample.fullTagId, sample.value]),
    [
      ['D/PlusOne', 5],
      ['D/Twice', 10],
    ],
  );
  await driver.stop();
});

test('a subscriber sees the derived value when it is told of the input batch', async (t) => {
  const { store, driver, input } = setup([{ name: 'Neg', expression: '-{In/x}' }]);
  await driver.start();
  const seen: (TagValue | undefined)[] = [];
  // Subscribed after the driver: notified of the input batch once the driver wrote its own.
  store.subscribe((updates) => {
    if (updates.some((update) => update.sample.fullTagId === 'In/x')) {
      seen.push(store.get('D/Neg')?.value);
    }
  });
  store.write([input('In/x', 3)]);
  store.write([input('In/x', 7)]);
  t.deepEqual(seen, [-3, -7]);
  await driver.stop();
});

test('several inputs changing in one batch evaluate the tag once', async (t) => {
  const { store, driver, input } = setup([{ name: 'Sum', expression: '{In/a} + {In/b} + {In/c}' }]);
  await driver.start();
  const before = report(driver, 'D/Sum').evaluations;
  store.write([input('In/a', 1), input('In/b', 2), input('In/c', 3), input('In/a', 10)]);
  t.is(report(driver, 'D/Sum').evaluations - before, 1);
  t.is(store.get('D/Sum')?.value, 15);
  // An unchanged input causes no evaluation.
  store.write([input('In/b', 2)]);
  t.is(report(driver, 'D/Sum').evaluations - before, 1);
  await driver.stop();
});

test('derived tags of another driver follow in the same store write', async (t) => {
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  const first = setup([{ name: 'A', expression: '{In/x} * 10' }], { clock, store, name: 'First' });
  const second = setup([{ name: 'B', expression: '{First/A} + 1' }], {
    clock,
    store,
    name: 'Second',
  });
  // Started in the "wrong" order: the reader first.
  await second.driver.start();
  await first.driver.start();
  store.write([first.input('In/x', 2)]);
  t.is(store.get('Second/B')?.value, 21);
  t.is(store.get('Second/B')?.quality, 'Good');
  await first.driver.stop();
  t.is(store.get('Second/B')?.quality, 'Unavailable');
  await second.driver.stop();
});

test('quality follows the inputs: Stale by the store sweep, Bad, removed, never existing', async (t) => {
  const { clock, store, driver, input } = setup([
    { name: 'Out', expression: '{In/x} * 2' },
    { name: 'Ghost', expression: '{Nowhere/y} + 1' },
  ]);
  store.define([{ fullTagId: 'In/x', refreshBoundMs: 1000 }]);
  await driver.start();
  t.like(store.get('D/Out'), { quality: 'Unavailable', reason: 'NeverRead' });
  t.like(store.get('D/Ghost'), {
    quality: 'Bad',
    reason: 'NotFound',
    message: 'Input Nowhere/y does not exist.',
  });
  store.write([input('In/x', 21)]);
  t.like(store.get('D/Out'), { quality: 'Good', value: 42 });
  clock.advance(1000);
  store.sweepStale();
  t.like(store.get('D/Out'), { quality: 'Stale', value: 42, reason: 'NoUpdate' });
  store.write([{ ...input('In/x', 0), quality: 'Bad', reason: 'Timeout', message: 'No answer.' }]);
  const bad = store.get('D/Out');
  t.like(bad, { quality: 'Bad', reason: 'Timeout', message: 'Input In/x is Bad: No answer.' });
  t.false(bad !== undefined && 'value' in bad);
  store.write([input('In/x', 1)]);
  t.like(store.get('D/Out'), { quality: 'Good', value: 2 });
  store.remove(['In/x']);
  t.like(store.get('D/Out'), { quality: 'Bad', reason: 'NotFound' });
  // The ghost input appears: its reader becomes Good in the same write.
  store.write([input('Nowhere/y', 1)]);
  t.like(store.get('D/Ghost'), { quality: 'Good', value: 2 });
  await driver.stop();
});

test('a fault in the expression is Bad with reason Expression and counted', async (t) => {
  const { store, driver, input } = setup([{ name: 'Ratio', expression: '{In/a} / {In/b}' }]);
  await driver.start();
  store.write([input('In/a', 1), input('In/b', 0)]);
  t.like(store.get('D/Ratio'), {
    quality: 'Bad',
    reason: 'Expression',
    message: 'Division by zero: 1 / 0.',
  });
  const tag = report(driver, 'D/Ratio');
  t.is(tag.faults, 1);
  t.like(tag.lastEvaluation, { quality: 'Bad', reason: 'Expression' });
  t.deepEqual(tag.inputs, ['In/a', 'In/b']);
  t.like(driver.status().counters, { faults: 1 });
  await driver.stop();
});

test('a result of another type than the declared dataType is Bad', async (t) => {
  const { store, driver, input } = setup([{ name: 'N', expression: '{In/x}', dataType: 'number' }]);
  await driver.start();
  store.write([input('In/x', 'text')]);
  t.like(store.get('D/N'), {
    quality: 'Bad',
    reason: 'Expression',
    message: "The expression gave a string, and the tag's dataType is number.",
  });
  store.write([input('In/x', 3)]);
  t.like(store.get('D/N'), { quality: 'Good', value: 3 });
  await driver.stop();
});

test('deadband: a smaller change at the same quality is not written, a quality change is', async (t) => {
  const { store, driver, input } = setup([{ name: 'T', expression: '{In/x}', deadband: 0.5 }]);
  await driver.start();
  const written: TagValue[] = [];
  store.subscribe((updates) => {
    for (const update of updates)
      if (update.sample.fullTagId === 'D/T')
        written.push(update.sample.value ?? update.sample.quality);
  });
  for (const value of [10, 10.2, 10.4, 10.5, 10.6, 9.9]) store.write([input('In/x', value)]);
  t.deepEqual(written, [10, 10.5, 9.9]);
  store.write([{ ...input('In/x', 0), quality: 'Stale', value: 9.95, reason: 'NoUpdate' }]);
  t.deepEqual(written, [10, 10.5, 9.9, 9.95]);
  t.is(report(driver, 'D/T').writes, 5);
  await driver.stop();
});

test('an unchanged result is not written again', async (t) => {
  const { store, driver, input } = setup([{ name: 'Bit', expression: 'bit({In/w}, 3)' }]);
  await driver.start();
  const updates: TagUpdate[] = [];
  store.subscribe((batch) => updates.push(...batch.filter((u) => u.sample.fullTagId === 'D/Bit')));
  store.write([input('In/w', 8)]);
  store.write([input('In/w', 9)]); // bit 3 still set
  store.write([input('In/w', 1)]);
  t.deepEqual(
    updates.map((update) => update.sample.value),
    [true, false],
  );
  await driver.stop();
});

test('interval trigger: values at each interval, a quality change at once, unchanged values rewritten', async (t) => {
  const { clock, store, driver, input } = setup([
    { name: 'Slow', expression: '{In/x} * 2', trigger: { intervalMs: 5000 } },
  ]);
  store.write([input('In/x', 1)]);
  await driver.start();
  t.is(store.get('D/Slow')?.value, 2);
  store.write([input('In/x', 5)]);
  t.is(store.get('D/Slow')?.value, 2, 'a value change waits for the interval');
  clock.advance(5000);
  t.is(store.get('D/Slow')?.value, 10);
  const stamp = store.get('D/Slow')?.utcTimestamp;
  clock.advance(5000);
  t.not(store.get('D/Slow')?.utcTimestamp, stamp, 'rewritten at each interval');
  store.write([{ ...input('In/x', 0), quality: 'Unavailable', reason: 'Disconnected' }]);
  t.like(store.get('D/Slow'), { quality: 'Unavailable', reason: 'Disconnected' });
  // Its refresh bound: three intervals, the store's own staleness guard.
  t.is(store.staleLimitMs('D/Slow'), 15_000);
  await driver.stop();
});

test('time-dependent change tags are re-evaluated every second without a sample', async (t) => {
  const { clock, store, driver, input } = setup([
    { name: 'Avg', expression: 'avg({In/x}, "10s")' },
    { name: 'Count', expression: 'count({In/x}, "1h")' },
  ]);
  store.write([input('In/x', 0)]);
  await driver.start();
  clock.advance(5000);
  store.write([input('In/x', 10)]);
  t.is(store.get('D/Avg')?.value, 0); // 0 for 5 s, then 10 from now
  clock.advance(5000);
  t.is(store.get('D/Avg')?.value, 5); // ticks moved it: 0 for 5 s, 10 for 5 s
  clock.advance(5000);
  t.is(store.get('D/Avg')?.value, 10);
  // Two samples: the start and the change; the ticks took none.
  t.is(store.get('D/Count')?.value, 2);
  await driver.stop();
  t.is(clock.pendingTimers(), 0);
});

test('integrate totals survive a restart through the state directory', async (t) => {
  const stateDir = await tempDir(t);
  const tags = [{ name: 'Total', expression: 'integrate({In/flow}, "h")', unit: 'm³' }];
  const first = setup(tags, { stateDir });
  first.store.write([first.input('In/flow', 3600)]);
  await first.driver.start();
  first.clock.advance(10_000); // the tick adds 10 s of 3600 m³/h; the save timer runs
  t.is(first.store.get('D/Total')?.value, 10);
  await first.driver.stop();
  const saved = JSON.parse(await readFile(join(stateDir, 'derived', 'D.json'), 'utf8'));
  t.deepEqual(saved, { version: 1, totals: { Total: { 'integrate#0': 10 } } });

  const second = setup(tags, { stateDir });
  second.store.write([second.input('In/flow', 7200)]);
  await second.driver.start();
  t.is(second.store.get('D/Total')?.value, 10);
  second.clock.advance(1000);
  t.is(second.store.get('D/Total')?.value, 12);
  await second.driver.stop();
});

test('integrate totals are saved every 10 seconds while running', async (t) => {
  const stateDir = await tempDir(t);
  const { clock, store, driver, input } = setup(
    [{ name: 'Total', expression: 'integrate({In/flow}, "s")' }],
    { stateDir },
  );
  store.write([input('In/flow', 1)]);
  await driver.start();
  clock.advance(10_000);
  const file = join(stateDir, 'derived', 'D.json');
  let saved: { totals?: { Total?: Record<string, number> } } = {};
  // The save runs asynchronously: wait for it, not for a duration (the bound is a safety net).
  const deadline = performance.now() + untilTimeoutMs;
  while (saved.totals?.Total?.['integrate#0'] !== 10 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    saved = JSON.parse(await readFile(file, 'utf8').catch(() => '{}'));
  }
  t.deepEqual(saved.totals, { Total: { 'integrate#0': 10 } });
  await driver.stop();
});

test('an unreadable totals file starts the totals from zero and the tags still run', async (t) => {
  const stateDir = await tempDir(t);
  await mkdir(join(stateDir, 'derived'));
  await writeFile(join(stateDir, 'derived', 'D.json'), '{ not json');
  const { store, driver, input } = setup(
    [{ name: 'Total', expression: 'integrate({In/f}, "s")' }],
    {
      stateDir,
    },
  );
  store.write([input('In/f', 1)]);
  await driver.start();
  t.like(store.get('D/Total'), { quality: 'Good', value: 0 });
  await driver.stop();
});

test('a driver built with a loop refuses naming it (the profile refuses it first)', (t) => {
  const error = t.throws(() =>
    setup([
      { name: 'A', expression: '{./B} + 1' },
      { name: 'B', expression: '{./A} + 1' },
    ]),
  );
  t.is(error?.message, 'Derived tags form a loop: D/A → D/B → D/A.');
});

test('the driver reports its tags for the API and is recognized as a derived-tag source', async (t) => {
  const { store, driver, input } = setup([
    {
      name: 'Pct',
      expression: 'scale({In/raw}, 0, 27648, 0, 100)',
      unit: '%',
      description: 'Tank level',
      deadband: 0.1,
    },
  ]);
  t.true(isDerivedTagSource(driver));
  await driver.start();
  store.write([input('In/raw', 27648)]);
  const tag = report(driver, 'D/Pct');
  t.like(tag, {
    fullTagId: 'D/Pct',
    driver: 'D',
    expression: 'scale({In/raw}, 0, 27648, 0, 100)',
    inputs: ['In/raw'],
    dataType: 'number',
    trigger: 'change',
    unit: '%',
    description: 'Tank level',
    deadband: 0.1,
    lastEvaluation: { quality: 'Good', value: 100 },
  });
  t.like(store.get('D/Pct')?.metadata, {
    unit: '%',
    description: 'Tank level',
    source: 'derived: scale({In/raw}, 0, 27648, 0, 100)',
  });
  await driver.stop();
});

test('real time: derived tags over a running simulator update as it scans', async (t) => {
  const store = new TagStore();
  const deps: DriverDeps = { store, clock: systemClock, logger: silent, stateDir: '/nonexistent' };
  const simulator = createSimulatorDriver(
    simulatorDriverSchema.parse({
      type: 'simulator',
      name: 'Sim',
      scanIntervalMs: 50,
      tags: [{ name: 'Count', kind: 'counter' }],
    }),
    deps,
  );
  const derived = createDerivedDriver(
    derivedDriverSchema.parse({
      type: 'derived',
      name: 'D',
      tags: [
        { name: 'Double', expression: '{Sim/Count} * 2' },
        { name: 'Seconds', expression: 'round(now() / 1000)' },
      ],
    }),
    deps,
  );
  await derived.start();
  await simulator.start();
  try {
    // Wait for events: the counter's reader follows every scan; the time tag moves by itself.
    await new Promise<void>((resolve) => {
      let doubles = 0;
      let seconds = 0;
      const unsubscribe = store.subscribe((updates) => {
        for (const update of updates) {
          if (update.sample.fullTagId === 'D/Double') {
            const count = store.get('Sim/Count')?.value as number;
            if (update.sample.value === count * 2) doubles++;
          }
          if (update.sample.fullTagId === 'D/Seconds') seconds++;
        }
        if (doubles >= 5 && seconds >= 2) {
          unsubscribe();
          resolve();
        }
      });
    });
    t.pass();
  } finally {
    await simulator.stop();
    await derived.stop();
  }
  t.is(store.get('D/Double')?.quality, 'Unavailable');
});
