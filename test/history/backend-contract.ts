/**
 * The test suite every history backend runs (src/history/history-backend.ts): what is stored
 * comes back unchanged, ranges and positions select the right samples, and every aggregation
 * function matches a plain-JS computation over the same generated samples.
 *
 * Usage: `backendContract(test, { name: 'sqlite', create: async (t) => createSqliteBackend(…) })`.
 * `create` returns a backend over EMPTY storage, not yet started; the suite calls `start()`
 * and stops it when the test ends.
 */
import type { ExecutionContext, TestFn } from 'ava';
import type {
  AggregateValue,
  AggregationFunction,
  HistoryBackend,
  LoggedSample,
  StoredSample,
} from '../../src/history/history-backend.js';
import type { TagValue } from '../../src/tags/sample.js';

/** Options of {@link backendContract}. */
export interface BackendContractOptions {
  /** Shown in every test title, e.g. `sqlite`. */
  name: string;
  /** A backend over empty storage, not started. */
  create(t: ExecutionContext): Promise<HistoryBackend>;
  /** Run the suite's tests one at a time (for a backend whose tests share a server). */
  serial?: boolean;
}

/** 2026-01-01T00:00:00Z. */
export const t0 = Date.UTC(2026, 0, 1);
const minute = 60_000;

/** Deterministic pseudo-random numbers in [0, 1) (a small LCG), so failures reproduce. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

function good(fullTagId: string, epochMs: number, value: TagValue): LoggedSample {
  return { fullTagId, epochMs, quality: 'Good', value };
}

/** Strips seq so stored samples compare with what was appended. */
function plain(samples: readonly StoredSample[]): LoggedSample[] {
  return samples.map(({ seq: _seq, ...rest }) => rest);
}

function seqOrder(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Computes one window's aggregate as the interface defines it, in plain JS. */
export function expectedAggregate(
  samples: readonly LoggedSample[],
  fn: AggregationFunction,
): { value?: TagValue; count: number } {
  const usable = samples.filter(
    (s) => (s.quality === 'Good' || s.quality === 'Stale') && s.value !== undefined,
  );
  const ordered = [...usable].sort((a, b) => a.epochMs - b.epochMs);
  if (fn === 'Count') {
    return usable.length === 0 ? { count: 0 } : { value: usable.length, count: usable.length };
  }
  if (fn === 'First' || fn === 'Last') {
    const pick = fn === 'First' ? ordered[0] : ordered[ordered.length - 1];
    return pick === undefined
      ? { count: 0 }
      : { value: pick.value as TagValue, count: usable.length };
  }
  const numbers = usable
    .filter((s) => typeof s.value !== 'string')
    .map((s) => (typeof s.value === 'boolean' ? (s.value ? 1 : 0) : (s.value as number)));
  if (numbers.length === 0) return { count: 0 };
  const sum = numbers.reduce((a, b) => a + b, 0);
  const value =
    fn === 'Avg'
      ? sum / numbers.length
      : fn === 'Sum'
        ? sum
        : fn === 'Min'
          ? Math.min(...numbers)
          : Math.max(...numbers);
  return { value, count: numbers.length };
}

/** Aggregates in plain JS: windows aligned to the UTC epoch, tags in the given order. */
export function expectedAggregates(
  samples: readonly LoggedSample[],
  tagIds: readonly string[],
  startMs: number,
  stopMs: number,
  windowMs: number,
  fn: AggregationFunction,
): AggregateValue[] {
  const out: AggregateValue[] = [];
  for (const fullTagId of tagIds) {
    const windows = new Map<number, LoggedSample[]>();
    for (const s of samples) {
      if (s.fullTagId !== fullTagId || s.epochMs < startMs || s.epochMs > stopMs) continue;
      const start = Math.floor(s.epochMs / windowMs) * windowMs;
      const list = windows.get(start) ?? [];
      list.push(s);
      windows.set(start, list);
    }
    for (const start of [...windows.keys()].sort((a, b) => a - b)) {
      const result = expectedAggregate(windows.get(start) ?? [], fn);
      out.push({ fullTagId, windowStartMs: start, ...result });
    }
  }
  return out;
}

/** Compares aggregates, numbers to 1e-9 relative (databases may sum in another order). */
function assertAggregates(
  t: ExecutionContext,
  actual: readonly AggregateValue[],
  expected: readonly AggregateValue[],
  what: string,
): void {
  t.is(actual.length, expected.length, `${what}: number of windows`);
  for (let i = 0; i < Math.min(actual.length, expected.length); i++) {
    const a = actual[i] as AggregateValue;
    const e = expected[i] as AggregateValue;
    const where = `${what} #${i} (${e.fullTagId} @ ${new Date(e.windowStartMs).toISOString()})`;
    t.is(a.fullTagId, e.fullTagId, `${where}: tag`);
    t.is(a.windowStartMs, e.windowStartMs, `${where}: window start`);
    t.is(a.count, e.count, `${where}: count`);
    if (typeof e.value === 'number' && typeof a.value === 'number') {
      const tolerance = 1e-9 * Math.max(1, Math.abs(e.value));
      t.true(Math.abs(a.value - e.value) <= tolerance, `${where}: ${a.value} ≠ ${e.value}`);
    } else {
      t.deepEqual(a.value, e.value, `${where}: value`);
    }
  }
}

/**
 * One hour of two numeric tags and a boolean tag at irregular times (out of append order),
 * with some Bad, Unavailable and Stale samples mixed in.
 */
export function generatedSamples(seed = 7): LoggedSample[] {
  const random = seededRandom(seed);
  const samples: LoggedSample[] = [];
  for (const fullTagId of ['Gen/A', 'Gen/B', 'Gen/Flag']) {
    let at = t0;
    while (at < t0 + 60 * minute) {
      at += 1 + Math.floor(random() * 20_000);
      const roll = random();
      if (roll < 0.06) {
        samples.push({ fullTagId, epochMs: at, quality: 'Bad', reason: 'DecodeError' });
      } else if (roll < 0.1) {
        samples.push({ fullTagId, epochMs: at, quality: 'Unavailable', reason: 'Disconnected' });
      } else {
        const value: TagValue =
          fullTagId === 'Gen/Flag'
            ? random() < 0.5
            : fullTagId === 'Gen/A'
              ? Math.round((random() * 200 - 100) * 1000) / 1000
              : Math.floor(random() * 1000);
        samples.push(
          roll < 0.13
            ? { fullTagId, epochMs: at, quality: 'Stale', value, reason: 'NoUpdate' }
            : { fullTagId, epochMs: at, quality: 'Good', value },
        );
      }
    }
  }
  // Shuffle so the backend, not the append order, decides the time order.
  for (let i = samples.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [samples[i], samples[j]] = [samples[j] as LoggedSample, samples[i] as LoggedSample];
  }
  return samples;
}

const functions: readonly AggregationFunction[] = [
  'Avg',
  'Min',
  'Max',
  'Sum',
  'Count',
  'First',
  'Last',
];

/** Registers the contract tests for one backend. */
export function backendContract(test: TestFn, options: BackendContractOptions): void {
  const define = options.serial === true ? test.serial : test;
  const name = options.name;

  async function open(t: ExecutionContext): Promise<HistoryBackend> {
    const backend = await options.create(t);
    await backend.start();
    t.teardown(() => backend.stop());
    return backend;
  }

  define(`${name}: an empty log has lastSeq 0, no tags and reads nothing`, async (t) => {
    const backend = await open(t);
    t.is(await backend.lastSeq(), '0');
    t.deepEqual(await backend.tagIds('**'), []);
    const range = { tagIds: ['X/y'], startMs: 0, stopMs: t0 * 2 };
    t.deepEqual(await backend.raw({ ...range, limit: 10 }), []);
    t.is(await backend.count(range), 0);
    t.deepEqual(await backend.aggregate({ ...range, windowMs: minute, fn: 'Avg', limit: 10 }), []);
  });

  define(`${name}: values, qualities and reasons come back as appended`, async (t) => {
    const backend = await open(t);
    const samples: LoggedSample[] = [
      good('T/num', t0 + 1, 21.5),
      good('T/num', t0 + 2, -3),
      good('T/num', t0 + 3, 0),
      good('T/num', t0 + 4, 2 ** 40 + 0.5),
      good('T/num', t0 + 5, 1),
      good('T/bool', t0 + 1, true),
      good('T/bool', t0 + 2, false),
      good('T/str', t0 + 1, 'Running'),
      good('T/str', t0 + 2, '1'),
      good('T/str', t0 + 3, 'ä € 漢'),
      { fullTagId: 'T/num', epochMs: t0 + 6, quality: 'Bad', reason: 'DecodeError' },
      { fullTagId: 'T/num', epochMs: t0 + 7, quality: 'Unavailable', reason: 'Disconnected' },
      { fullTagId: 'T/num', epochMs: t0 + 8, quality: 'Stale', value: 1, reason: 'NoUpdate' },
      { fullTagId: 'T/num', epochMs: t0 + 9, quality: 'Unavailable' },
      { fullTagId: 'T/bool', epochMs: t0 + 3, quality: 'Stale', value: true, reason: 'Timeout' },
    ];
    await backend.append(samples);
    const tagIds = ['T/num', 'T/bool', 'T/str'];
    const read = await backend.raw({ tagIds, startMs: t0, stopMs: t0 + 10, limit: 100 });
    const expected = tagIds.flatMap((id) =>
      samples.filter((s) => s.fullTagId === id).sort((a, b) => a.epochMs - b.epochMs),
    );
    t.deepEqual(plain(read), expected);
    // Types survive: number 1, boolean true and string '1' stay apart.
    t.is(typeof read.find((s) => s.fullTagId === 'T/num' && s.epochMs === t0 + 5)?.value, 'number');
    t.is(read.find((s) => s.fullTagId === 'T/bool' && s.epochMs === t0 + 1)?.value, true);
    t.is(read.find((s) => s.fullTagId === 'T/str' && s.epochMs === t0 + 2)?.value, '1');
  });

  define(`${name}: raw orders by the given tag order, then time, then seq`, async (t) => {
    const backend = await open(t);
    await backend.append([good('O/b', t0 + 30, 3), good('O/a', t0 + 20, 2)]);
    await backend.append([good('O/b', t0 + 10, 1), good('O/a', t0 + 20, 22)]);
    await backend.append([good('O/a', t0 + 5, 0)]);
    const read = await backend.raw({
      tagIds: ['O/b', 'O/a'],
      startMs: t0,
      stopMs: t0 + 100,
      limit: 100,
    });
    t.deepEqual(
      read.map((s) => [s.fullTagId, s.epochMs - t0, s.value]),
      [
        ['O/b', 10, 1],
        ['O/b', 30, 3],
        ['O/a', 5, 0],
        ['O/a', 20, 2],
        ['O/a', 20, 22],
      ],
    );
    const a20 = read.filter((s) => s.fullTagId === 'O/a' && s.epochMs === t0 + 20);
    t.true(seqOrder(a20[0]?.seq ?? '0', a20[1]?.seq ?? '0') < 0, 'equal times: older seq first');
  });

  define(`${name}: equal times order by seq as a number, not as text (9 before 10)`, async (t) => {
    const backend = await open(t);
    // Positions 1–8 elsewhere, so the two samples of one time get positions 9 and 10 or more.
    await backend.append(Array.from({ length: 8 }, (_, i) => good('N/x', t0 + i, i)));
    for (const value of ['first', 'second', 'third']) {
      await backend.append([good('N/a', t0 + 50, value)]);
    }
    const read = await backend.raw({ tagIds: ['N/a'], startMs: t0, stopMs: t0 + 100, limit: 10 });
    t.deepEqual(
      read.map((s) => s.value),
      ['first', 'second', 'third'],
    );
    const limited = await backend.raw({ tagIds: ['N/a'], startMs: t0, stopMs: t0 + 100, limit: 1 });
    t.deepEqual(
      limited.map((s) => s.value),
      ['first'],
    );
  });

  define(`${name}: seq increases in append order and lastSeq is the newest`, async (t) => {
    const backend = await open(t);
    await backend.append([good('S/a', t0 + 50, 1), good('S/a', t0 + 10, 2)]);
    const first = await backend.lastSeq();
    t.true(seqOrder(first, '0') > 0);
    await backend.append([good('S/a', t0 + 5, 3)]);
    const second = await backend.lastSeq();
    t.true(seqOrder(second, first) > 0);
    const read = await backend.raw({ tagIds: ['S/a'], startMs: t0, stopMs: t0 + 100, limit: 10 });
    const bySeq = [...read].sort((a, b) => seqOrder(a.seq, b.seq)).map((s) => s.value);
    t.deepEqual(bySeq, [1, 2, 3], 'seq follows append order, also within one batch');
    t.is([...read].sort((a, b) => seqOrder(a.seq, b.seq)).at(-1)?.seq, second);
    t.true(
      read.every((s) => /^[1-9][0-9]*$/.test(s.seq)),
      'seq is a decimal string',
    );
  });

  define(`${name}: range bounds are inclusive at both ends`, async (t) => {
    const backend = await open(t);
    await backend.append([0, 999, 1000, 1500, 2000, 2001].map((d) => good('R/a', t0 + d, d)));
    const range = { tagIds: ['R/a'], startMs: t0 + 1000, stopMs: t0 + 2000 };
    const read = await backend.raw({ ...range, limit: 10 });
    t.deepEqual(
      read.map((s) => s.value),
      [1000, 1500, 2000],
    );
    t.is(await backend.count(range), 3);
    const single = { tagIds: ['R/a'], startMs: t0 + 1500, stopMs: t0 + 1500 };
    t.deepEqual(
      (await backend.raw({ ...single, limit: 10 })).map((s) => s.value),
      [1500],
    );
  });

  define(`${name}: afterSeq selects samples appended after a position`, async (t) => {
    const backend = await open(t);
    await backend.append([good('D/a', t0 + 100, 1), good('D/b', t0 + 100, 10)]);
    const mark = await backend.lastSeq();
    // Appended later but older in time: still "since the previous poll".
    await backend.append([good('D/a', t0 + 50, 2), good('D/b', t0 + 200, 20)]);
    await backend.append([good('D/a', t0 + 300, 3)]);
    const range = { tagIds: ['D/a', 'D/b'], startMs: t0, stopMs: t0 + 1000 };
    const read = await backend.raw({ ...range, afterSeq: mark, limit: 10 });
    t.deepEqual(
      read.map((s) => [s.fullTagId, s.value]),
      [
        ['D/a', 2],
        ['D/a', 3],
        ['D/b', 20],
      ],
    );
    t.true(read.every((s) => seqOrder(s.seq, mark) > 0));
    t.is(await backend.count({ ...range, afterSeq: mark }), 3);
    t.deepEqual(await backend.raw({ ...range, afterSeq: await backend.lastSeq(), limit: 10 }), []);
    t.is((await backend.raw({ ...range, afterSeq: '0', limit: 10 })).length, 5);
    const counts = await backend.aggregate({
      ...range,
      afterSeq: mark,
      windowMs: 1000,
      fn: 'Count',
      limit: 10,
    });
    t.deepEqual(
      counts.map((a) => [a.fullTagId, a.value]),
      [
        ['D/a', 2],
        ['D/b', 1],
      ],
    );
    for (const [fn, expected] of [
      ['First', 2],
      ['Last', 3],
      ['Sum', 5],
    ] as const) {
      const windows = await backend.aggregate({
        ...range,
        afterSeq: mark,
        windowMs: 1000,
        fn,
        limit: 10,
      });
      t.deepEqual(
        windows.map((a) => [a.fullTagId, a.value, a.count]),
        [
          ['D/a', expected, 2],
          ['D/b', 20, 1],
        ],
        `${fn} after a position`,
      );
    }
  });

  define(`${name}: maxSeq reads only samples appended up to a position`, async (t) => {
    const backend = await open(t);
    await backend.append([good('M/a', t0 + 100, 1), good('M/a', t0 + 1500, 2)]);
    await backend.append([good('M/b', t0 + 100, 10)]);
    const first = await backend.lastSeq();
    await backend.append([good('M/a', t0 + 50, 3), good('M/a', t0 + 2500, 4)]);
    await backend.append([good('M/b', t0 + 200, 20)]);
    const second = await backend.lastSeq();
    // Beyond both positions: earlier than everything, and in a window of its own.
    await backend.append([good('M/a', t0 + 60, 5), good('M/a', t0 + 3500, 6)]);
    const range = { tagIds: ['M/a', 'M/b'], startMs: t0, stopMs: t0 + 10_000 };
    const rawValues = async (query: { afterSeq?: string; maxSeq?: string; limit?: number }) =>
      (await backend.raw({ ...range, limit: 10, ...query })).map((s) => s.value);
    t.deepEqual(await rawValues({ maxSeq: first }), [1, 2, 10]);
    t.deepEqual(
      await rawValues({ maxSeq: second, limit: 2 }),
      [3, 1],
      'the limit counts kept rows',
    );
    t.deepEqual(await rawValues({ afterSeq: first, maxSeq: second }), [3, 4, 20]);
    t.deepEqual(await rawValues({ maxSeq: '0' }), []);
    t.deepEqual(await rawValues({ afterSeq: second, maxSeq: second }), []);
    const windows = async (fn: AggregationFunction, query: { afterSeq?: string; maxSeq: string }) =>
      (await backend.aggregate({ ...range, windowMs: 1000, fn, limit: 10, ...query })).map((a) => [
        a.fullTagId,
        a.windowStartMs - t0,
        a.value,
        a.count,
      ]);
    // Whole range: windows holding only later samples are skipped, picks ignore later samples.
    t.deepEqual(await windows('Last', { maxSeq: first }), [
      ['M/a', 0, 1, 1],
      ['M/a', 1000, 2, 1],
      ['M/b', 0, 10, 1],
    ]);
    t.deepEqual(await windows('First', { maxSeq: second }), [
      ['M/a', 0, 3, 2],
      ['M/a', 1000, 2, 1],
      ['M/a', 2000, 4, 1],
      ['M/b', 0, 10, 2],
    ]);
    t.deepEqual(await windows('Max', { maxSeq: second }), [
      ['M/a', 0, 3, 2],
      ['M/a', 1000, 2, 1],
      ['M/a', 2000, 4, 1],
      ['M/b', 0, 20, 2],
    ]);
    // Between two positions.
    t.deepEqual(await windows('Sum', { afterSeq: first, maxSeq: second }), [
      ['M/a', 0, 3, 1],
      ['M/a', 2000, 4, 1],
      ['M/b', 0, 20, 1],
    ]);
    t.deepEqual(await windows('First', { afterSeq: first, maxSeq: second }), [
      ['M/a', 0, 3, 1],
      ['M/a', 2000, 4, 1],
      ['M/b', 0, 20, 1],
    ]);
  });

  define(`${name}: limit returns the first rows in order; count ignores it`, async (t) => {
    const backend = await open(t);
    const samples = Array.from({ length: 25 }, (_, i) => good('L/a', t0 + i * 1000, i));
    await backend.append([...samples, good('L/b', t0, -1)]);
    const range = { tagIds: ['L/b', 'L/a'], startMs: t0, stopMs: t0 + 60_000 };
    const read = await backend.raw({ ...range, limit: 11 });
    t.deepEqual(
      read.map((s) => s.value),
      [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    t.is(await backend.count(range), 26);
    const windows = await backend.aggregate({ ...range, windowMs: 5000, fn: 'Sum', limit: 3 });
    t.deepEqual(
      windows.map((a) => [a.fullTagId, a.windowStartMs - t0, a.value]),
      [
        ['L/b', 0, -1],
        ['L/a', 0, 10],
        ['L/a', 5000, 35],
      ],
    );
  });

  // "Sorted" is by UTF-16 code unit, as JS's default sort (PostgreSQL: COLLATE "C").
  define(`${name}: tagIds finds logged tags by path, * and **, sorted`, async (t) => {
    const backend = await open(t);
    const ids = ['Line1/Press/Temp', 'Line1/Press/Speed', 'Line1/Oven/Temp', 'Line2/Temp', 'X'];
    await backend.append(ids.map((id, i) => good(id, t0 + i, i)));
    t.deepEqual(await backend.tagIds('Line1/Press/Temp'), ['Line1/Press/Temp']);
    t.deepEqual(await backend.tagIds('Line1/Press/Nope'), []);
    t.deepEqual(await backend.tagIds('Line1/*/Temp'), ['Line1/Oven/Temp', 'Line1/Press/Temp']);
    t.deepEqual(await backend.tagIds('Line1/*'), []);
    t.deepEqual(await backend.tagIds('Line1/**'), [
      'Line1/Oven/Temp',
      'Line1/Press/Speed',
      'Line1/Press/Temp',
    ]);
    t.deepEqual(await backend.tagIds('**/Temp'), [
      'Line1/Oven/Temp',
      'Line1/Press/Temp',
      'Line2/Temp',
    ]);
    t.deepEqual(await backend.tagIds('**'), [...ids].sort());
    t.deepEqual(await backend.tagIds('*'), ['X']);
  });

  define(`${name}: tagIds treats path characters literally (. _ - :)`, async (t) => {
    const backend = await open(t);
    await backend.append([
      good('a.b/c_d', t0, 1),
      good('aXb/cXd', t0, 2),
      good('a.b/c-d:e', t0, 3),
      good('a.b/cXd', t0, 4),
      good('aXb/c_d', t0, 5),
    ]);
    t.deepEqual(await backend.tagIds('a.b/c_d'), ['a.b/c_d']);
    t.deepEqual(await backend.tagIds('a.b/*'), ['a.b/c-d:e', 'a.b/cXd', 'a.b/c_d']);
    t.deepEqual(await backend.tagIds('*/c_d'), ['a.b/c_d', 'aXb/c_d']);
  });

  for (const fn of functions) {
    define(`${name}: ${fn} over 1-minute windows matches a plain-JS computation`, async (t) => {
      const backend = await open(t);
      const samples = generatedSamples();
      await backend.append(samples.slice(0, 200));
      await backend.append(samples.slice(200));
      const tagIds = ['Gen/B', 'Gen/A', 'Gen/Flag'];
      // Starts mid-window: the first window starts before the range, but only samples in the
      // range go into it.
      const startMs = t0 + 7 * minute + 23_456;
      const stopMs = t0 + 52 * minute + 1;
      const actual = await backend.aggregate({
        tagIds,
        startMs,
        stopMs,
        windowMs: minute,
        fn,
        limit: 10_000,
      });
      const expected = expectedAggregates(samples, tagIds, startMs, stopMs, minute, fn);
      t.true(expected.length > 100, 'the generated data covers many windows');
      t.is(actual[0]?.windowStartMs, t0 + 7 * minute, 'first window starts before the range');
      assertAggregates(t, actual, expected, fn);
    });
  }

  define(`${name}: windows are aligned to the UTC epoch, not to the range start`, async (t) => {
    const backend = await open(t);
    const hour = 60 * minute;
    // 5-minute windows starting at 00:05, 00:10, … whatever the range start.
    await backend.append([
      good('W/a', t0 + 4 * minute, 1),
      good('W/a', t0 + 6 * minute, 2),
      good('W/a', t0 + 9 * minute + 59_999, 4),
      good('W/a', t0 + 10 * minute, 8),
      good('W/a', t0 + 2 * hour, 16),
    ]);
    const windows = await backend.aggregate({
      tagIds: ['W/a'],
      startMs: t0 + 3 * minute + 17,
      stopMs: t0 + 3 * hour,
      windowMs: 5 * minute,
      fn: 'Sum',
      limit: 100,
    });
    t.deepEqual(
      windows.map((a) => [(a.windowStartMs - t0) / minute, a.value, a.count]),
      [
        [0, 1, 1],
        [5, 6, 2],
        [10, 8, 1],
        [120, 16, 1],
      ],
    );
    // A 7-second window: alignment is to the epoch, so window starts are multiples of 7 s.
    const odd = await backend.aggregate({
      tagIds: ['W/a'],
      startMs: t0,
      stopMs: t0 + hour,
      windowMs: 7000,
      fn: 'First',
      limit: 100,
    });
    t.true(odd.every((a) => a.windowStartMs % 7000 === 0));
    const offsets = [4 * minute, 6 * minute, 10 * minute - 1, 10 * minute];
    const starts = new Set(offsets.map((d) => Math.floor((t0 + d) / 7000) * 7000));
    t.deepEqual(
      odd.map((a) => a.windowStartMs),
      [...starts],
    );
  });

  define(`${name}: Bad and Unavailable are skipped by aggregates; Count counts good`, async (t) => {
    const backend = await open(t);
    await backend.append([
      good('Q/a', t0 + 1000, 10),
      { fullTagId: 'Q/a', epochMs: t0 + 500, quality: 'Bad', reason: 'DecodeError' },
      { fullTagId: 'Q/a', epochMs: t0 + 2000, quality: 'Unavailable', reason: 'Disconnected' },
      { fullTagId: 'Q/a', epochMs: t0 + 3000, quality: 'Stale', value: 20, reason: 'NoUpdate' },
      // A window of only skipped samples is still listed, with count 0 and no value.
      { fullTagId: 'Q/a', epochMs: t0 + 61_000, quality: 'Bad', reason: 'Timeout' },
    ]);
    const query = { tagIds: ['Q/a'], startMs: t0, stopMs: t0 + minute * 2, windowMs: minute };
    const results: Record<string, AggregateValue[]> = {};
    for (const fn of functions) results[fn] = await backend.aggregate({ ...query, fn, limit: 10 });
    const first = (fn: AggregationFunction) => results[fn]?.[0];
    t.is(first('Count')?.value, 2);
    t.is(first('Avg')?.value, 15);
    t.is(first('Min')?.value, 10);
    t.is(first('Max')?.value, 20);
    t.is(first('Sum')?.value, 30);
    t.is(first('First')?.value, 10, 'First skips the earlier Bad sample');
    t.is(first('Last')?.value, 20, 'Last skips the later Unavailable sample, keeps Stale');
    for (const fn of functions) {
      t.is(first(fn)?.count, 2, `${fn} count`);
      t.deepEqual(
        results[fn]?.[1],
        { fullTagId: 'Q/a', windowStartMs: t0 + minute, count: 0 },
        `${fn}: all-skipped window`,
      );
    }
  });

  define(`${name}: booleans aggregate as 0/1; strings only by Count, First, Last`, async (t) => {
    const backend = await open(t);
    await backend.append([
      good('B/flag', t0 + 1, true),
      good('B/flag', t0 + 2, false),
      good('B/flag', t0 + 3, true),
      good('B/text', t0 + 1, 'b'),
      good('B/text', t0 + 2, 'a'),
      good('B/text', t0 + 3, 'c'),
    ]);
    const query = { startMs: t0, stopMs: t0 + 10, windowMs: minute, limit: 10 };
    const flag = async (fn: AggregationFunction) =>
      (await backend.aggregate({ ...query, tagIds: ['B/flag'], fn }))[0];
    const text = async (fn: AggregationFunction) =>
      (await backend.aggregate({ ...query, tagIds: ['B/text'], fn }))[0];
    const avg = (await flag('Avg'))?.value;
    t.true(typeof avg === 'number' && Math.abs(avg - 2 / 3) < 1e-12);
    t.is((await flag('Sum'))?.value, 2);
    t.is((await flag('Min'))?.value, 0);
    t.is((await flag('Max'))?.value, 1);
    t.is((await flag('Count'))?.value, 3);
    t.is((await flag('First'))?.value, true);
    t.is((await flag('Last'))?.value, true);
    t.deepEqual(await text('Count'), {
      fullTagId: 'B/text',
      windowStartMs: t0,
      value: 3,
      count: 3,
    });
    t.is((await text('First'))?.value, 'b');
    t.is((await text('Last'))?.value, 'c');
    t.deepEqual(await text('Avg'), { fullTagId: 'B/text', windowStartMs: t0, count: 0 });
    t.deepEqual(await text('Max'), { fullTagId: 'B/text', windowStartMs: t0, count: 0 });
  });

  define(`${name}: First and Last go by time, not by append order`, async (t) => {
    const backend = await open(t);
    await backend.append([good('F/a', t0 + 30, 'late')]);
    await backend.append([good('F/a', t0 + 10, 'early'), good('F/a', t0 + 20, 'middle')]);
    const query = { tagIds: ['F/a'], startMs: t0, stopMs: t0 + 100, windowMs: 1000, limit: 10 };
    t.is((await backend.aggregate({ ...query, fn: 'First' }))[0]?.value, 'early');
    t.is((await backend.aggregate({ ...query, fn: 'Last' }))[0]?.value, 'late');
  });

  define(`${name}: deleteBefore removes older samples only (retention)`, async (t) => {
    const backend = await open(t);
    const day = 24 * 60 * minute;
    await backend.append([
      good('Ret/a', t0 - 40 * day, 1),
      good('Ret/a', t0 - 31 * day, 2),
      good('Ret/a', t0 - 30 * day, 3),
      good('Ret/a', t0 - day, 4),
      good('Ret/b', t0 - 35 * day, 5),
      good('Ret/b', t0, 6),
      good('Ret/c', t0 - 50 * day, 7),
    ]);
    const before = await backend.lastSeq();
    const deleted = await backend.deleteBefore(t0 - 30 * day);
    t.true(deleted === undefined || deleted === 4, `deleted ${deleted}`);
    t.deepEqual(await backend.tagIds('Ret/*'), ['Ret/a', 'Ret/b'], 'a tag with no sample left');
    const read = await backend.raw({
      tagIds: ['Ret/a', 'Ret/b'],
      startMs: t0 - 100 * day,
      stopMs: t0 + day,
      limit: 100,
    });
    t.deepEqual(
      read.map((s) => s.value),
      [3, 4, 6],
    );
    // Positions never go back, so Delta keeps working after retention.
    await backend.append([good('Ret/a', t0 + 1, 7)]);
    t.true(seqOrder(await backend.lastSeq(), before) > 0);
    const none = await backend.deleteBefore(t0 - 100 * day);
    t.true(none === undefined || none === 0);
  });

  define(`${name}: stop is idempotent`, async (t) => {
    const backend = await open(t);
    await backend.append([good('Stop/a', t0, 1)]);
    await backend.stop();
    await backend.stop();
    t.pass();
  });
}
