import { setTimeout as delay } from 'node:timers/promises';
import test from 'ava';
import { type DestinationStream, type Logger, pino } from 'pino';
import { InvalidTagPathError, TagNotFoundError } from '../../src/errors.js';
import type { Quality, Sample, TagValue } from '../../src/tags/sample.js';
import { TagStore, type TagStoreOptions, type TagUpdate } from '../../src/tags/tag-store.js';
import { ManualClock } from '../helpers/manual-clock.js';

const t0 = Date.UTC(2026, 0, 1);

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function good(fullTagId: string, value: TagValue, at: number = t0): Sample {
  return { fullTagId, utcTimestamp: iso(at), quality: 'Good', value };
}

function setup(options: TagStoreOptions = {}): { clock: ManualClock; store: TagStore } {
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock, ...options });
  return { clock, store };
}

/** Collects every batch a subscriber receives. */
function record(store: TagStore): TagUpdate[][] {
  const batches: TagUpdate[][] = [];
  store.subscribe((updates) => batches.push([...updates]));
  return batches;
}

/** Collects every onTagsAdded call. */
function recordAdded(store: TagStore): string[][] {
  const calls: string[][] = [];
  store.onTagsAdded((ids) => calls.push([...ids]));
  return calls;
}

/** A pino logger whose JSON lines end up in `lines`. */
function collectingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream: DestinationStream = {
    write: (line: string) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  };
  return { logger: pino({ level: 'debug' }, stream), lines };
}

// define()

test('define() creates Unavailable/NeverRead placeholders carrying the metadata', (t) => {
  const { store, clock } = setup();
  clock.advance(1234);
  const metadata = { unit: '°C', description: 'Boiler temperature', source: 'sim:1' };
  store.define([{ fullTagId: 'Boiler/Temp', metadata }, { fullTagId: 'Boiler/Pressure' }]);
  t.is(store.size, 2);
  t.deepEqual(store.get('Boiler/Temp'), {
    fullTagId: 'Boiler/Temp',
    utcTimestamp: iso(t0 + 1234),
    quality: 'Unavailable',
    reason: 'NeverRead',
    message: 'No value has been read yet.',
    metadata,
  });
  t.deepEqual(store.get('Boiler/Pressure'), {
    fullTagId: 'Boiler/Pressure',
    utcTimestamp: iso(t0 + 1234),
    quality: 'Unavailable',
    reason: 'NeverRead',
    message: 'No value has been read yet.',
  });
  t.false('value' in (store.get('Boiler/Temp') as Sample));
  t.false('metadata' in (store.get('Boiler/Pressure') as Sample));
});

test('define() announces new tags to subscribers and onTagsAdded', (t) => {
  const { store } = setup();
  const batches = record(store);
  const added = recordAdded(store);
  store.define([{ fullTagId: 'A' }, { fullTagId: 'B' }]);
  t.deepEqual(added, [['A', 'B']]);
  t.is(batches.length, 1);
  t.deepEqual(
    batches[0]?.map((u) => [u.sample.fullTagId, u.sample.quality, u.previous, u.changed]),
    [
      ['A', 'Unavailable', undefined, true],
      ['B', 'Unavailable', undefined, true],
    ],
  );
});

test('define() does not overwrite an existing sample and notifies nobody for it', (t) => {
  const { store } = setup();
  const sample = good('A', 42);
  store.write([sample]);
  const batches = record(store);
  const added = recordAdded(store);
  store.define([{ fullTagId: 'A', metadata: { unit: 'bar' } }]);
  t.is(store.get('A'), sample);
  t.deepEqual(store.get('A'), {
    fullTagId: 'A',
    utcTimestamp: iso(t0),
    quality: 'Good',
    value: 42,
  });
  t.is(store.size, 1);
  t.deepEqual(batches, []);
  t.deepEqual(added, []);
});

test('define() with a mix of known and new tags only creates the new ones', (t) => {
  const { store } = setup();
  store.write([good('A', 1)]);
  const added = recordAdded(store);
  store.define([{ fullTagId: 'A' }, { fullTagId: 'B' }]);
  t.deepEqual(added, [['B']]);
  t.is(store.get('A')?.quality, 'Good');
  t.is(store.get('B')?.quality, 'Unavailable');
  t.deepEqual([...store.ids()], ['A', 'B']);
});

test('define() with an invalid path throws and changes nothing', (t) => {
  const { store } = setup();
  store.define([{ fullTagId: 'Existing' }]);
  const batches = record(store);
  const added = recordAdded(store);
  const error = t.throws(
    () =>
      store.define([{ fullTagId: 'Good/One' }, { fullTagId: 'Bad//Two' }, { fullTagId: 'Three' }]),
    { instanceOf: InvalidTagPathError },
  );
  t.is(error?.code, 'invalid-tag-path');
  t.is(error?.path, 'Bad//Two');
  t.is(store.size, 1);
  t.false(store.has('Good/One'));
  t.false(store.has('Three'));
  t.deepEqual([...store.ids()], ['Existing']);
  t.deepEqual(batches, []);
  t.deepEqual(added, []);
});

// write() and reading

test('write() keeps the latest sample per id', (t) => {
  const { store } = setup();
  store.write([good('A', 1), good('B', 'x')]);
  store.write([good('A', 2, t0 + 10)]);
  store.write([good('A', 3, t0 + 20), good('C', true)]);
  t.is(store.size, 3);
  t.deepEqual(store.get('A'), good('A', 3, t0 + 20));
  t.deepEqual(store.get('B'), good('B', 'x'));
  t.deepEqual(store.get('C'), good('C', true));
});

test('get/require/has/ids/size', (t) => {
  const { store } = setup();
  t.is(store.size, 0);
  t.deepEqual([...store.ids()], []);
  t.is(store.get('A'), undefined);
  t.false(store.has('A'));
  const a = good('A/x', 1);
  const b = good('B/y', 2);
  store.write([b, a]);
  t.is(store.size, 2);
  t.true(store.has('A/x'));
  t.true(store.has('B/y'));
  t.false(store.has('A'));
  t.is(store.get('A/x'), a);
  t.is(store.require('B/y'), b);
  // Insertion order, not alphabetical.
  t.deepEqual([...store.ids()], ['B/y', 'A/x']);
});

test('require() of an unknown tag throws TagNotFoundError', (t) => {
  const { store } = setup();
  store.write([good('A', 1)]);
  const error = t.throws(() => store.require('A/B'), { instanceOf: TagNotFoundError });
  t.is(error?.code, 'tag-not-found');
  t.is(error?.status, 404);
  t.is(error?.fullTagId, 'A/B');
  t.is(error?.message, "Tag 'A/B' does not exist.");
});

test('an empty write() notifies nobody', (t) => {
  const { store } = setup();
  const batches = record(store);
  const added = recordAdded(store);
  store.write([]);
  t.deepEqual(batches, []);
  t.deepEqual(added, []);
  t.is(store.size, 0);
});

// subscribe()

test('a subscriber gets one call per batch with every update in order', (t) => {
  const { store } = setup();
  const calls: (readonly TagUpdate[])[] = [];
  store.subscribe((updates) => calls.push(updates));
  store.write([good('A', 1), good('B', 2), good('C', 3)]);
  store.write([good('C', 30), good('A', 10)]);
  t.is(calls.length, 2);
  t.deepEqual(
    calls[0]?.map((u) => u.sample.fullTagId),
    ['A', 'B', 'C'],
  );
  t.deepEqual(
    calls[1]?.map((u) => [u.sample.fullTagId, u.sample.value]),
    [
      ['C', 30],
      ['A', 10],
    ],
  );
});

test('updates carry previous and a changed flag', (t) => {
  const { store } = setup();
  const batches = record(store);
  const a1 = good('A', 1);
  store.write([a1]);
  t.deepEqual(batches[0], [{ sample: a1, previous: undefined, changed: true }]);

  // Only the timestamp differs: not a change.
  const a2 = good('A', 1, t0 + 100);
  store.write([a2]);
  t.deepEqual(batches[1], [{ sample: a2, previous: a1, changed: false }]);

  // The value differs.
  const a3 = good('A', 2, t0 + 200);
  store.write([a3]);
  t.deepEqual(batches[2], [{ sample: a3, previous: a2, changed: true }]);

  // The quality differs (same value kept by a Stale sample).
  const a4: Sample = { ...a3, quality: 'Stale', reason: 'NoUpdate' };
  store.write([a4]);
  t.deepEqual(batches[3], [{ sample: a4, previous: a3, changed: true }]);

  // Quality and value differ: Good -> Bad without a value.
  const a5: Sample = { fullTagId: 'A', utcTimestamp: iso(t0 + 300), quality: 'Bad' };
  store.write([a5]);
  t.deepEqual(batches[4], [{ sample: a5, previous: a4, changed: true }]);

  // Bad again with another timestamp: not a change.
  const a6: Sample = { fullTagId: 'A', utcTimestamp: iso(t0 + 400), quality: 'Bad' };
  store.write([a6]);
  t.deepEqual(batches[5], [{ sample: a6, previous: a5, changed: false }]);
  t.is(batches.length, 6);
});

test('changed compares values strictly: 1 and true, 0 and "0" differ', (t) => {
  const { store } = setup();
  const batches = record(store);
  store.write([good('A', 1), good('B', 0)]);
  store.write([good('A', true), good('B', '0')]);
  t.deepEqual(
    batches[1]?.map((u) => u.changed),
    [true, true],
  );
});

test('a new tag and an existing tag in one batch', (t) => {
  const { store } = setup();
  store.write([good('Old', 1)]);
  const batches = record(store);
  store.write([good('New', 5), good('Old', 1, t0 + 1)]);
  t.is(batches.length, 1);
  t.deepEqual(
    batches[0]?.map((u) => [u.sample.fullTagId, u.previous?.value, u.changed]),
    [
      ['New', undefined, true],
      ['Old', 1, false],
    ],
  );
});

test('the same new id twice in one batch: the second update sees the first as previous', (t) => {
  const { store } = setup();
  const batches = record(store);
  const added = recordAdded(store);
  const first = good('A', 1);
  const second = good('A', 2, t0 + 1);
  store.write([first, second]);
  t.is(store.size, 1);
  t.is(store.get('A'), second);
  t.deepEqual(added, [['A']]);
  t.deepEqual(batches, [
    [
      { sample: first, previous: undefined, changed: true },
      { sample: second, previous: first, changed: true },
    ],
  ]);
});

test('the same existing id twice in one batch', (t) => {
  const { store } = setup();
  const start = good('A', 1);
  store.write([start]);
  const batches = record(store);
  const added = recordAdded(store);
  const first = good('A', 1, t0 + 1);
  const second = good('A', 9, t0 + 2);
  store.write([first, second]);
  t.is(store.get('A'), second);
  t.deepEqual(added, []);
  t.deepEqual(batches, [
    [
      { sample: first, previous: start, changed: false },
      { sample: second, previous: first, changed: true },
    ],
  ]);
});

test('a throwing subscriber stops neither the write nor the other subscribers', (t) => {
  const { logger, lines } = collectingLogger();
  const { store } = setup({ logger });
  const before: number[] = [];
  const after: number[] = [];
  store.subscribe((updates) => before.push(updates.length));
  store.subscribe(() => {
    throw new Error('subscriber exploded');
  });
  store.subscribe((updates) => after.push(updates.length));
  t.notThrows(() => store.write([good('A', 1), good('B', 2)]));
  t.notThrows(() => store.write([good('A', 3)]));
  t.deepEqual(before, [2, 1]);
  t.deepEqual(after, [2, 1]);
  t.is(store.get('A')?.value, 3);
  t.is(store.get('B')?.value, 2);
  t.is(lines.length, 2);
  t.is(lines[0]?.msg, 'tag store subscriber failed');
  t.is(lines[0]?.level, 50);
  t.is((lines[0]?.err as { message?: string } | undefined)?.message, 'subscriber exploded');
});

test('a throwing onTagsAdded listener stops neither the write nor other listeners', (t) => {
  const { store } = setup({ logger: pino({ level: 'silent' }) });
  const added: string[][] = [];
  const batches = record(store);
  store.onTagsAdded(() => {
    throw new Error('listener exploded');
  });
  store.onTagsAdded((ids) => added.push([...ids]));
  t.notThrows(() => store.write([good('A', 1)]));
  t.deepEqual(added, [['A']]);
  t.is(batches.length, 1);
  t.is(store.get('A')?.value, 1);
});

test('unsubscribe stops the calls; other subscribers keep theirs', (t) => {
  const { store } = setup();
  const first: number[] = [];
  const second: number[] = [];
  const unsubscribe = store.subscribe((updates) => first.push(updates.length));
  store.subscribe((updates) => second.push(updates.length));
  store.write([good('A', 1)]);
  unsubscribe();
  store.write([good('A', 2), good('B', 2)]);
  unsubscribe();
  store.write([good('A', 3)]);
  t.deepEqual(first, [1]);
  t.deepEqual(second, [1, 2, 1]);
});

test('onTagsAdded fires once per batch with only the new ids', (t) => {
  const { store } = setup();
  const added = recordAdded(store);
  store.write([good('A', 1), good('B', 1)]);
  store.write([good('A', 2), good('C', 2), good('B', 2), good('D', 2), good('C', 3)]);
  store.write([good('A', 3), good('D', 3)]);
  t.deepEqual(added, [
    ['A', 'B'],
    ['C', 'D'],
  ]);
});

test('onTagsAdded unsubscribe works', (t) => {
  const { store } = setup();
  const added: string[][] = [];
  const unsubscribe = store.onTagsAdded((ids) => added.push([...ids]));
  store.write([good('A', 1)]);
  unsubscribe();
  store.write([good('B', 1)]);
  t.deepEqual(added, [['A']]);
});

test('tags are announced to onTagsAdded before the update subscribers', (t) => {
  const { store } = setup();
  const order: string[] = [];
  store.subscribe(() => order.push('updates'));
  store.onTagsAdded(() => order.push('added'));
  store.write([good('A', 1)]);
  t.deepEqual(order, ['added', 'updates']);
});

test('write() with an invalid new path stores nothing from the batch and notifies nobody', (t) => {
  const { store } = setup();
  const existing = good('Existing', 1);
  store.write([existing]);
  const batches = record(store);
  const added = recordAdded(store);
  const error = t.throws(
    () =>
      store.write([
        good('Existing', 2, t0 + 1),
        good('Valid/New', 3),
        good('In valid', 4),
        good('After', 5),
      ]),
    { instanceOf: InvalidTagPathError },
  );
  t.is(error?.code, 'invalid-tag-path');
  t.is(error?.status, 400);
  t.is(error?.path, 'In valid');
  t.is(store.size, 1);
  t.is(store.get('Existing'), existing);
  t.false(store.has('Valid/New'));
  t.false(store.has('After'));
  t.deepEqual(batches, []);
  t.deepEqual(added, []);

  // The store still works normally after a refused batch.
  store.write([good('Valid/New', 3)]);
  t.deepEqual(added, [['Valid/New']]);
  t.deepEqual(
    batches.map((b) => b.map((u) => [u.sample.fullTagId, u.previous, u.changed])),
    [[['Valid/New', undefined, true]]],
  );
});

test('write() refuses wildcard paths', (t) => {
  const { store } = setup();
  t.throws(() => store.write([good('A/*', 1)]), { instanceOf: InvalidTagPathError });
  t.throws(() => store.write([good('**', 1)]), { instanceOf: InvalidTagPathError });
  t.is(store.size, 0);
});

// match()

test('match() resolves paths and patterns in insertion order', (t) => {
  const { store } = setup();
  store.write([
    good('Line1/Motor/Speed', 1),
    good('Line1/Temp', 2),
    good('Line2/Motor/Speed', 3),
    good('Line1/Motor/Temp', 4),
    good('Temp', 5),
  ]);
  t.deepEqual(store.match('Line1/Temp'), ['Line1/Temp']);
  t.deepEqual(store.match('Line1/Nope'), []);
  t.deepEqual(store.match('*/Motor/Speed'), ['Line1/Motor/Speed', 'Line2/Motor/Speed']);
  t.deepEqual(store.match('Line1/**'), ['Line1/Motor/Speed', 'Line1/Temp', 'Line1/Motor/Temp']);
  t.deepEqual(store.match('**/Temp'), ['Line1/Temp', 'Line1/Motor/Temp', 'Temp']);
  t.deepEqual(store.match('*'), ['Temp']);
  t.deepEqual(store.match('**'), [
    'Line1/Motor/Speed',
    'Line1/Temp',
    'Line2/Motor/Speed',
    'Line1/Motor/Temp',
    'Temp',
  ]);
});

test('match() with an invalid pattern throws InvalidTagPathError', (t) => {
  const { store } = setup();
  store.write([good('A', 1)]);
  const error = t.throws(() => store.match('A/**/'), { instanceOf: InvalidTagPathError });
  t.is(error?.code, 'invalid-tag-path');
  t.throws(() => store.match('A*'), { instanceOf: InvalidTagPathError });
});

// Staleness (ManualClock)

function staleSetup(): { clock: ManualClock; store: TagStore } {
  const context = setup({ staleSweepIntervalMs: 100 });
  context.store.define([
    { fullTagId: 'Boiler/Temp', staleAfterMs: 1000, metadata: { unit: '°C' } },
  ]);
  return context;
}

test('a Good tag turns Stale after staleAfterMs without an update', async (t) => {
  const { clock, store } = staleSetup();
  await store.start();
  // The device timestamp differs from the clock: Stale keeps the device's.
  const last: Sample = {
    fullTagId: 'Boiler/Temp',
    utcTimestamp: iso(t0 - 7),
    quality: 'Good',
    value: 71.5,
    metadata: { unit: '°C' },
  };
  store.write([last]);
  clock.advance(900);
  t.is(store.get('Boiler/Temp'), last);
  clock.advance(99);
  t.is(store.get('Boiler/Temp')?.quality, 'Good');
  clock.advance(101);
  t.deepEqual(store.get('Boiler/Temp'), {
    fullTagId: 'Boiler/Temp',
    utcTimestamp: iso(t0 - 7),
    quality: 'Stale',
    value: 71.5,
    reason: 'NoUpdate',
    message: 'No update for 1000 ms.',
    metadata: { unit: '°C' },
  });
  await store.stop();
});

test('staleness counts from the last write; a fresh write makes the tag Good again', async (t) => {
  const { clock, store } = staleSetup();
  await store.start();
  store.write([good('Boiler/Temp', 70)]);
  clock.advance(600);
  store.write([good('Boiler/Temp', 70, t0 + 600)]);
  clock.advance(900); // t0+1500: 900 ms after the last write.
  t.is(store.get('Boiler/Temp')?.quality, 'Good');
  clock.advance(200); // t0+1700: 1100 ms after.
  t.is(store.get('Boiler/Temp')?.quality, 'Stale');
  t.is(store.get('Boiler/Temp')?.utcTimestamp, iso(t0 + 600));

  const fresh = good('Boiler/Temp', 72, t0 + 1700);
  store.write([fresh]);
  t.is(store.get('Boiler/Temp'), fresh);
  clock.advance(900);
  t.is(store.get('Boiler/Temp'), fresh);
  clock.advance(200);
  t.deepEqual([store.get('Boiler/Temp')?.quality, store.get('Boiler/Temp')?.value], ['Stale', 72]);
  await store.stop();
});

test('a Stale tag rewritten with the same value is Good again and counts as changed', async (t) => {
  const { clock, store } = staleSetup();
  await store.start();
  store.write([good('Boiler/Temp', 70)]);
  clock.advance(1100);
  const batches = record(store);
  const again = good('Boiler/Temp', 70, t0 + 1100);
  store.write([again]);
  t.is(store.get('Boiler/Temp'), again);
  t.is(batches.length, 1);
  t.is(batches[0]?.[0]?.previous?.quality, 'Stale');
  t.true(batches[0]?.[0]?.changed);
  await store.stop();
});

test('the Stale transition reaches subscribers once, with changed=true', async (t) => {
  const { clock, store } = staleSetup();
  await store.start();
  const last = good('Boiler/Temp', 70);
  store.write([last]);
  const batches = record(store);
  clock.advance(1100);
  t.is(batches.length, 1);
  const update = batches[0]?.[0];
  t.is(batches[0]?.length, 1);
  t.is(update?.previous, last);
  t.is(update?.changed, true);
  t.is(update?.sample.quality, 'Stale');
  t.is(update?.sample.reason, 'NoUpdate');
  t.is(update?.sample.value, 70);
  // Many more sweeps: no further notification.
  clock.advance(5000);
  t.is(batches.length, 1);
  t.is(store.get('Boiler/Temp')?.quality, 'Stale');
  await store.stop();
});

test('tags that go stale in the same sweep arrive in one batch', async (t) => {
  const { clock, store } = setup({ staleSweepIntervalMs: 100 });
  store.define([
    { fullTagId: 'A', staleAfterMs: 500 },
    { fullTagId: 'B', staleAfterMs: 500 },
    { fullTagId: 'C', staleAfterMs: 2000 },
  ]);
  await store.start();
  store.write([good('A', 1), good('B', 2), good('C', 3)]);
  const batches = record(store);
  clock.advance(550);
  t.deepEqual(
    batches.map((b) => b.map((u) => [u.sample.fullTagId, u.sample.quality])),
    [
      [
        ['A', 'Stale'],
        ['B', 'Stale'],
      ],
    ],
  );
  t.is(store.get('C')?.quality, 'Good');
  await store.stop();
});

for (const quality of ['Unavailable', 'Bad'] as const satisfies readonly Quality[]) {
  test(`a tag of quality ${quality} never turns Stale`, async (t) => {
    const { clock, store } = staleSetup();
    await store.start();
    const sample: Sample = {
      fullTagId: 'Boiler/Temp',
      utcTimestamp: iso(t0),
      quality,
      reason: 'Disconnected',
    };
    store.write([sample]);
    const batches = record(store);
    clock.advance(10_000);
    t.is(store.get('Boiler/Temp'), sample);
    t.deepEqual(batches, []);
    await store.stop();
  });
}

test('a NeverRead placeholder never turns Stale', async (t) => {
  const { clock, store } = staleSetup();
  await store.start();
  const placeholder = store.get('Boiler/Temp');
  clock.advance(10_000);
  t.is(store.get('Boiler/Temp'), placeholder);
  t.is(store.get('Boiler/Temp')?.quality, 'Unavailable');
  await store.stop();
});

test('a tag without staleAfterMs never turns Stale', async (t) => {
  const { clock, store } = setup({ staleSweepIntervalMs: 100 });
  store.define([{ fullTagId: 'Defined' }]);
  await store.start();
  const defined = good('Defined', 1);
  const undefinedTag = good('Written/Only', 2);
  store.write([defined, undefinedTag]);
  const batches = record(store);
  clock.advance(100_000);
  t.is(store.get('Defined'), defined);
  t.is(store.get('Written/Only'), undefinedTag);
  t.deepEqual(batches, []);
  await store.stop();
});

test('defining a written tag later gives it the staleness setting', async (t) => {
  const { clock, store } = setup({ staleSweepIntervalMs: 100 });
  await store.start();
  store.write([good('A', 1)]);
  store.define([{ fullTagId: 'A', staleAfterMs: 1000 }]);
  t.is(store.get('A')?.quality, 'Good');
  clock.advance(1100);
  t.is(store.get('A')?.quality, 'Stale');
  await store.stop();
});

// The refresh bound a polling driver declares (refreshBoundMs).

test('a Good tag turns Stale after its refreshBoundMs, with no staleAfterMs', async (t) => {
  const { clock, store } = setup({ staleSweepIntervalMs: 100 });
  store.define([{ fullTagId: 'Poll/A', refreshBoundMs: 1500 }]);
  t.is(store.staleLimitMs('Poll/A'), 1500);
  await store.start();
  store.write([good('Poll/A', 5)]);
  clock.advance(1499);
  t.is(store.get('Poll/A')?.quality, 'Good');
  clock.advance(1);
  t.deepEqual(store.get('Poll/A'), {
    fullTagId: 'Poll/A',
    utcTimestamp: iso(t0),
    quality: 'Stale',
    value: 5,
    reason: 'NoUpdate',
    message:
      'No update for 1500 ms, longer than its driver takes to refresh it while the device answers.',
  });
  await store.stop();
});

test('staleAfterMs and refreshBoundMs: the smaller applies', async (t) => {
  const { clock, store } = setup({ staleSweepIntervalMs: 100 });
  store.define([
    { fullTagId: 'Tighter', staleAfterMs: 500, refreshBoundMs: 1500 },
    { fullTagId: 'Looser', staleAfterMs: 5000, refreshBoundMs: 1500 },
    { fullTagId: 'Equal', staleAfterMs: 1500, refreshBoundMs: 1500 },
  ]);
  t.deepEqual(
    ['Tighter', 'Looser', 'Equal', 'Unknown'].map((id) => store.staleLimitMs(id)),
    [500, 1500, 1500, undefined],
  );
  await store.start();
  store.write([good('Tighter', 1), good('Looser', 2), good('Equal', 3)]);
  clock.advance(500);
  t.is(store.get('Tighter')?.message, 'No update for 500 ms.');
  t.is(store.get('Looser')?.quality, 'Good');
  clock.advance(1000);
  t.is(store.get('Looser')?.quality, 'Stale');
  t.regex(store.get('Looser')?.message ?? '', /longer than its driver takes/);
  t.is(store.get('Equal')?.message, 'No update for 1500 ms.', 'the profile’s setting is named');
  await store.stop();
});

test('defining a tag again replaces its refresh bound', async (t) => {
  const { clock, store } = setup({ staleSweepIntervalMs: 100 });
  store.define([{ fullTagId: 'A', refreshBoundMs: 300 }]);
  // E.g. the driver restarted with another configuration: no bound any more.
  store.define([{ fullTagId: 'A' }]);
  t.is(store.staleLimitMs('A'), undefined);
  await store.start();
  store.write([good('A', 1)]);
  clock.advance(10_000);
  t.is(store.get('A')?.quality, 'Good');
  await store.stop();
});

test('nothing turns Stale before start() nor after stop()', async (t) => {
  const { clock, store } = staleSetup();
  store.write([good('Boiler/Temp', 70)]);
  clock.advance(5000);
  t.is(store.get('Boiler/Temp')?.quality, 'Good');
  t.is(clock.pendingTimers(), 0);

  await store.start();
  t.is(clock.pendingTimers(), 1);
  clock.advance(100);
  t.is(store.get('Boiler/Temp')?.quality, 'Stale');

  store.write([good('Boiler/Temp', 71, t0 + 5100)]);
  await store.stop();
  t.is(clock.pendingTimers(), 0);
  clock.advance(5000);
  t.is(store.get('Boiler/Temp')?.quality, 'Good');
  // Samples stay readable after stop().
  t.is(store.get('Boiler/Temp')?.value, 71);
});

test('start() and stop() are idempotent', async (t) => {
  const { clock, store } = staleSetup();
  await store.stop();
  t.is(clock.pendingTimers(), 0);
  await store.start();
  await store.start();
  t.is(clock.pendingTimers(), 1);
  await store.stop();
  t.is(clock.pendingTimers(), 0);
  await store.stop();
  t.is(clock.pendingTimers(), 0);
  // And it can be started again.
  await store.start();
  t.is(clock.pendingTimers(), 1);
  store.write([good('Boiler/Temp', 1, clock.now())]);
  clock.advance(1000);
  t.is(store.get('Boiler/Temp')?.quality, 'Stale');
  await store.stop();
  t.is(clock.pendingTimers(), 0);
});

for (const [options, title] of [
  [{ staleSweepIntervalMs: 250 }, 'the sweep runs every staleSweepIntervalMs'],
  [{}, 'the default sweep interval is 250 ms'],
] as const) {
  test(title, async (t) => {
    const { clock, store } = setup(options);
    store.define([{ fullTagId: 'A', staleAfterMs: 10 }]);
    await store.start();
    store.write([good('A', 1)]);
    clock.advance(249);
    t.is(store.get('A')?.quality, 'Good');
    clock.advance(1);
    t.is(store.get('A')?.quality, 'Stale');
    await store.stop();
  });
}

test('a Good write made during the Stale notification counts as fresh', async (t) => {
  const { clock, store } = staleSetup();
  await store.start();
  store.write([good('Boiler/Temp', 70)]);
  let rewritten = false;
  store.subscribe((updates) => {
    if (rewritten || updates[0]?.sample.quality !== 'Stale') return;
    rewritten = true;
    // E.g. a driver that re-reads a tag as soon as it is reported Stale.
    store.write([good('Boiler/Temp', 71, clock.now())]);
  });
  clock.advance(1000); // The sweep at t0+1000 marks it Stale; the subscriber rewrites it.
  t.true(rewritten);
  t.is(store.get('Boiler/Temp')?.quality, 'Good');
  clock.advance(100); // Only 100 ms after the fresh write.
  t.is(store.get('Boiler/Temp')?.quality, 'Good');
  await store.stop();
});

// Staleness with the real clock: one real-time test per timing rule.

test('real time: a Good tag turns Stale after staleAfterMs', async (t) => {
  const store = new TagStore({ staleSweepIntervalMs: 20 });
  try {
    store.define([{ fullTagId: 'Real/Temp', staleAfterMs: 100 }]);
    await store.start();
    const writtenAt = Date.now();
    store.write([good('Real/Temp', 21.5, writtenAt)]);
    const deadline = writtenAt + 2000;
    while (store.get('Real/Temp')?.quality !== 'Stale' && Date.now() < deadline) await delay(5);
    const elapsed = Date.now() - writtenAt;
    const sample = store.get('Real/Temp');
    t.is(sample?.quality, 'Stale', `still ${sample?.quality} after ${elapsed} ms`);
    t.is(sample?.reason, 'NoUpdate');
    t.is(sample?.value, 21.5);
    t.is(sample?.utcTimestamp, iso(writtenAt));
    t.true(elapsed >= 100, `Stale after only ${elapsed} ms`);
  } finally {
    await store.stop();
  }
});

test('a NaN value written again is not a change (Object.is, not !==)', (t) => {
  const store = new TagStore({ clock: new ManualClock(t0) });
  const flags: boolean[] = [];
  store.subscribe((updates) => flags.push(...updates.map((update) => update.changed)));
  store.write([good('Pump/Flow', Number.NaN)]);
  store.write([good('Pump/Flow', Number.NaN)]);
  store.write([good('Pump/Flow', 1)]);
  t.deepEqual(flags, [true, false, true]);
});

test('remove() deletes tags, tells onTagsRemoved listeners, and no update listener', (t) => {
  const { store } = setup();
  store.write([good('A/x', 1), good('A/y', 2), good('B/z', 3)]);
  const removed: string[][] = [];
  const updates: unknown[] = [];
  store.onTagsRemoved((ids) => removed.push([...ids]));
  store.subscribe((batch) => updates.push(batch));
  t.deepEqual(store.remove(['A/x', 'A/y', 'Nope/q']), ['A/x', 'A/y']);
  t.deepEqual(removed, [['A/x', 'A/y']]);
  t.deepEqual(updates, []);
  t.false(store.has('A/x'));
  t.deepEqual([...store.ids()], ['B/z']);
  // Nothing to remove: no call.
  t.deepEqual(store.remove(['A/x']), []);
  t.is(removed.length, 1);
  // A removed tag may come back, as new.
  store.write([good('A/x', 5)]);
  t.is(store.get('A/x')?.value, 5);
});
