import test from 'ava';
import { pino } from 'pino';
import type { DriverDeps } from '../../../drivers/driver.js';
import { createSimulatorDriver } from '../../../drivers/simulator/index.js';
import {
  type SimulatorDriverConfig,
  simulatorDriverSchema,
} from '../../../drivers/simulator/schema.js';
import { systemClock } from '../../../src/clock.js';
import type { TagValue } from '../../../src/tags/sample.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { driverContract } from '../contract.js';

const silent = pino({ level: 'silent' });

function config(input: Record<string, unknown>): SimulatorDriverConfig {
  return simulatorDriverSchema.parse({ type: 'simulator', name: 'Sim', ...input });
}

function setup(input: Record<string, unknown>) {
  const clock = new ManualClock();
  const store = new TagStore({ clock });
  const deps: DriverDeps = { store, clock, logger: silent, stateDir: '/nonexistent' };
  const driver = createSimulatorDriver(config(input), deps);
  return { clock, store, driver };
}

/** Values a tag takes over `scans` scans of `scanMs`, starting with the one written at start. */
async function series(tag: Record<string, unknown>, scans: number, scanMs = 1000, seed?: number) {
  const { clock, store, driver } = setup({
    scanIntervalMs: scanMs,
    ...(seed === undefined ? {} : { seed }),
    tags: [{ name: 'T', ...tag }],
  });
  const values: TagValue[] = [];
  store.subscribe((updates) => {
    for (const update of updates)
      if (update.sample.quality === 'Good') values.push(update.sample.value as TagValue);
  });
  await driver.start();
  for (let i = 1; i < scans; i++) clock.advance(scanMs);
  await driver.stop();
  return values;
}

driverContract(test, {
  type: 'simulator',
  hasPeer: false,
  async setup() {
    const tags = [
      { name: 'Line/Sine', kind: 'sine' },
      { name: 'Line/Ramp', kind: 'ramp' },
      { name: 'Line/Walk', kind: 'randomWalk' },
      { name: 'Line/Square', kind: 'square' },
      { name: 'Line/Count', kind: 'counter' },
      { name: 'Line/Flag', kind: 'boolean' },
      { name: 'Line/State', kind: 'string' },
    ];
    const { clock, store, driver } = setup({ scanIntervalMs: 500, tags });
    return {
      driver,
      store,
      clock,
      tagIds: tags.map((tag) => `Sim/${tag.name}`),
      produce: async () => clock.advance(500),
    };
  },
});

test('sine follows offset + amplitude · sin(2πt/period)', async (t) => {
  const values = await series({ kind: 'sine', amplitude: 10, offset: 50, periodSeconds: 4 }, 5);
  // t = 0, 1, 2, 3, 4 s of a 4 s period: 0°, 90°, 180°, 270°, 360°.
  const expected = [50, 60, 50, 40, 50];
  t.is(values.length, 5);
  values.forEach((value, i) => {
    t.true(Math.abs((value as number) - (expected[i] as number)) < 1e-9, `${i}: ${value}`);
  });
});

test('ramp rises from min to max over the period, then restarts', async (t) => {
  const values = await series({ kind: 'ramp', min: 10, max: 20, periodSeconds: 4 }, 6);
  t.deepEqual(values, [10, 12.5, 15, 17.5, 10, 12.5]);
});

test('square is high for the first half of the period, low for the second', async (t) => {
  const values = await series({ kind: 'square', low: -1, high: 3, periodSeconds: 4 }, 6);
  t.deepEqual(values, [3, 3, -1, -1, 3, 3]);
});

test('boolean is false for the first half of the period, true for the second', async (t) => {
  const values = await series({ kind: 'boolean', periodSeconds: 2 }, 5);
  t.deepEqual(values, [false, true, false, true, false]);
});

test('counter adds step each scan and restarts at start past max', async (t) => {
  const values = await series({ kind: 'counter', start: 5, step: 2, max: 10 }, 6);
  t.deepEqual(values, [5, 7, 9, 5, 7, 9]);
});

test('string steps through its values, one per period', async (t) => {
  const values = await series({ kind: 'string', values: ['A', 'B', 'C'], periodSeconds: 2 }, 8);
  t.deepEqual(values, ['A', 'A', 'B', 'B', 'C', 'C', 'A', 'A']);
});

test('random walk stays within min and max, moves at most step, and repeats for a seed', async (t) => {
  const tag = { kind: 'randomWalk', start: 0, step: 0.5, min: -1, max: 1 };
  const first = (await series(tag, 200, 1000, 42)) as number[];
  const again = (await series(tag, 200, 1000, 42)) as number[];
  const other = (await series(tag, 200, 1000, 7)) as number[];
  t.is(first[0], 0);
  t.deepEqual(first, again, 'same seed, same walk');
  t.notDeepEqual(first, other, 'another seed, another walk');
  for (let i = 1; i < first.length; i++) {
    const value = first[i] as number;
    t.true(value >= -1 && value <= 1, `value ${value} in range`);
    t.true(Math.abs(value - (first[i - 1] as number)) <= 0.5 + 1e-12, `step at ${i}`);
  }
  t.true(new Set(first).size > 50, 'it actually moves');
});

test('each scan is one batch with every tag, carrying unit and description', async (t) => {
  const { clock, store, driver } = setup({
    tags: [
      { name: 'A', kind: 'sine', unit: '°C', description: 'Oven' },
      { name: 'B', kind: 'counter' },
    ],
  });
  const batches: string[][] = [];
  store.subscribe((updates) => batches.push(updates.map((update) => update.sample.fullTagId)));
  await driver.start();
  clock.advance(1000);
  await driver.stop();
  t.deepEqual(batches.slice(1, 3), [
    ['Sim/A', 'Sim/B'],
    ['Sim/A', 'Sim/B'],
  ]);
  t.deepEqual(store.require('Sim/A').metadata, { unit: '°C', description: 'Oven' });
  t.is(store.require('Sim/B').metadata, undefined);
  t.is(store.require('Sim/A').reason, 'Disconnected');
});

test('tags turn Stale after staleAfterMs without a scan, and Good at the next scan', async (t) => {
  const { clock, store, driver } = setup({
    scanIntervalMs: 5000,
    staleAfterMs: 1000,
    tags: [{ name: 'A', kind: 'counter' }],
  });
  await store.start();
  await driver.start();
  clock.advance(900);
  t.is(store.require('Sim/A').quality, 'Good');
  clock.advance(400);
  const stale = store.require('Sim/A');
  t.is(stale.quality, 'Stale');
  t.is(stale.reason, 'NoUpdate');
  t.is(stale.value, 0);
  clock.advance(3700);
  t.deepEqual([store.require('Sim/A').quality, store.require('Sim/A').value], ['Good', 1]);
  await driver.stop();
  await store.stop();
});

test('the simulator declares three scans, at least a second, as each tag’s refresh bound', async (t) => {
  for (const [scanIntervalMs, staleAfterMs, limit] of [
    [500, undefined, 1500],
    [500, 1000, 1000],
    [500, 60_000, 1500],
    // The fastest scan: three scans would be 30 ms, so the floor of a second applies.
    [10, undefined, 1000],
    [10, 200, 200],
    [200, undefined, 1000],
    [400, undefined, 1200],
  ] as const) {
    const { store, driver } = setup({
      scanIntervalMs,
      ...(staleAfterMs !== undefined ? { staleAfterMs } : {}),
      tags: [{ name: 'A', kind: 'counter' }],
    });
    await driver.start();
    t.is(
      store.staleLimitMs('Sim/A'),
      limit,
      `scanIntervalMs ${scanIntervalMs}, staleAfterMs ${staleAfterMs}`,
    );
    await driver.stop();
  }
});

test('a 10 ms scan held up for less than a second leaves its tags Good', async (t) => {
  // The driver's scans run on a clock of their own that stands still, while the store's sweep
  // goes on: what a stalled event loop looks like to the store.
  const storeClock = new ManualClock();
  const store = new TagStore({ clock: storeClock });
  const driver = createSimulatorDriver(
    config({ scanIntervalMs: 10, tags: [{ name: 'A', kind: 'counter' }] }),
    { store, clock: new ManualClock(), logger: silent, stateDir: '/nonexistent' },
  );
  const qualities: string[] = [];
  store.subscribe((updates) => {
    for (const update of updates) qualities.push(update.sample.quality);
  });
  await store.start();
  await driver.start();
  storeClock.advance(999);
  t.is(store.require('Sim/A').quality, 'Good', 'no Stale within the second');
  t.false(qualities.includes('Stale'));
  storeClock.advance(1);
  t.like(store.require('Sim/A'), { quality: 'Stale', reason: 'NoUpdate', value: 0 });
  await driver.stop();
  await store.stop();
});

test('scans follow scanIntervalMs in real time', async (t) => {
  const store = new TagStore();
  const driver = createSimulatorDriver(
    config({ scanIntervalMs: 40, tags: [{ name: 'A', kind: 'counter' }] }),
    { store, clock: systemClock, logger: silent, stateDir: '/nonexistent' },
  );
  let scans = 0;
  store.subscribe((updates) => {
    if (updates[0]?.sample.quality === 'Good') scans++;
  });
  const started = performance.now();
  await driver.start();
  await new Promise((resolve) => setTimeout(resolve, 420));
  await driver.stop();
  const elapsed = performance.now() - started;
  // One scan at start, then one per interval; timers never fire early, but may fire late.
  const most = 1 + Math.floor(elapsed / 40);
  t.true(scans <= most, `${scans} scans in ${Math.round(elapsed)} ms, at most ${most}`);
  t.true(scans >= 5, `${scans} scans in ${Math.round(elapsed)} ms`);
});
