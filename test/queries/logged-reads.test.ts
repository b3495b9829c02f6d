/**
 * Logged reads and their Delta (src/queries/logged-reads.ts) against a real SQLite backend,
 * with small budgets so paging shows: every sample in the (sliding) range is answered exactly
 * once, whatever the paging, the sliding of relative ends, appends racing the read, or
 * samples stamped ahead of the poll (a device clock ahead, a `now-5m` stop).
 */
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import type {
  AggregateQuery,
  HistoryBackend,
  LoggedSample,
} from '../../src/history/history-backend.js';
import { createSqliteBackend } from '../../src/history/sqlite-backend.js';
import {
  type LoggedAnswer,
  type LoggedCursor,
  loggedRange,
  readLogged,
  readLoggedDelta,
} from '../../src/queries/logged-reads.js';
import type { TagQueryBinding } from '../../src/queries/tag-query-binding.js';
import type { TagValue } from '../../src/tags/sample.js';
import { tempDir } from '../helpers/temp-dir.js';

const logger = pino({ level: 'silent' });
/** 2026-01-01T12:00:00Z: "now" at the first read of each test. */
const t0 = Date.UTC(2026, 0, 1, 12);
const second = 1_000;
const minute = 60_000;

async function open(t: ExecutionContext): Promise<HistoryBackend> {
  const backend = createSqliteBackend({ file: join(await tempDir(t), 'history.db'), logger });
  await backend.start();
  t.teardown(() => backend.stop());
  return backend;
}

function good(fullTagId: string, epochMs: number, value: TagValue): LoggedSample {
  return { fullTagId, epochMs, quality: 'Good', value };
}

function raw(start: string, stop: string): TagQueryBinding {
  return { source: 'T/**', store: 'Logged', timeRangeStart: start, timeRangeStop: stop };
}

/** A client of one binding: the first read, then Delta polls, as the route makes them. */
function client(backend: HistoryBackend, binding: TagQueryBinding, tagIds: readonly string[]) {
  // The route passes a HistoryService; a backend answers the same reads.
  const history = backend;
  let cursor: LoggedCursor | undefined;
  return {
    async first(nowMs: number, budget = 100): Promise<LoggedAnswer> {
      const answer = await readLogged(
        history,
        binding,
        tagIds,
        nowMs,
        await backend.lastSeq(),
        budget,
      );
      cursor = answer.cursor;
      return answer;
    },
    async delta(nowMs: number, budget = 100): Promise<LoggedAnswer> {
      if (cursor === undefined) throw new Error('first() first');
      const answer = await readLoggedDelta(
        history,
        binding,
        tagIds,
        nowMs,
        cursor,
        await backend.lastSeq(),
        budget,
      );
      cursor = answer.cursor;
      return answer;
    },
  };
}

const values = (answer: LoggedAnswer) => answer.samples.map((s) => s.value);

test('Raw Delta paged over polls of a relative range answers every sample once, in order', async (t) => {
  const backend = await open(t);
  const reader = client(backend, raw('now-20s', 'now'), ['T/a', 'T/b']);
  t.deepEqual(values(await reader.first(t0, 5)), []);
  // Ten samples per tag, all in the range at t0; the range slides 8 s per poll, so a page of a
  // later poll no longer holds the same rows as the first: an offset would skip some.
  await backend.append(
    ['T/a', 'T/b'].flatMap((tag) =>
      Array.from({ length: 10 }, (_, i) => good(tag, t0 - 19 * second + i * second, `${tag}${i}`)),
    ),
  );
  const answered: TagValue[] = [];
  const cut: boolean[] = [];
  for (let poll = 0; poll < 4; poll++) {
    const answer = await reader.delta(t0 + poll * 8 * second, 5);
    answered.push(...(values(answer) as TagValue[]));
    cut.push(answer.over);
  }
  t.deepEqual(
    answered,
    ['T/a', 'T/b'].flatMap((tag) => Array.from({ length: 10 }, (_, i) => `${tag}${i}`)),
  );
  t.deepEqual(cut, [true, true, true, false]);
  t.deepEqual(values(await reader.delta(t0 + 40 * second, 5)), [], 'nothing twice');
});

test('Raw Delta: a sample stamped after the poll’s now (device clock ahead) arrives once the range covers it', async (t) => {
  const backend = await open(t);
  const reader = client(backend, raw('now-1h', 'now'), ['T/a']);
  await backend.append([good('T/a', t0 + 2 * second, 'ahead'), good('T/a', t0 - second, 'past')]);
  t.deepEqual(values(await reader.first(t0)), ['past']);
  t.deepEqual(values(await reader.delta(t0 + second)), [], 'not in the range yet');
  await backend.append([good('T/a', t0 + 3 * second, 'ahead, logged later')]);
  t.deepEqual(values(await reader.delta(t0 + 5 * second)), ['ahead', 'ahead, logged later']);
  t.deepEqual(values(await reader.delta(t0 + 6 * second)), [], 'nothing twice');
});

test('Raw Delta: samples after a now-5m stop arrive when the stop slides over them', async (t) => {
  const backend = await open(t);
  const reader = client(backend, raw('now-1h', 'now-5m'), ['T/a']);
  await backend.append([good('T/a', t0 - 10 * minute, 'old'), good('T/a', t0 - minute, 'recent')]);
  t.deepEqual(values(await reader.first(t0)), ['old']);
  // Logged after the first read, also beyond the stop.
  await backend.append([good('T/a', t0 - 30 * second, 'recent, logged later')]);
  t.deepEqual(values(await reader.delta(t0 + minute)), []);
  t.deepEqual(values(await reader.delta(t0 + 4 * minute)), ['recent'], 'stop = t0 - 1 min');
  t.deepEqual(values(await reader.delta(t0 + 5 * minute)), ['recent, logged later']);
  t.deepEqual(values(await reader.delta(t0 + 10 * minute)), [], 'nothing twice');
});

test('first Raw read: samples appended between the mark and the read do not cut the answer short', async (t) => {
  const backend = await open(t);
  const binding = raw('now-1m', 'now');
  const history = backend;
  await backend.append([10, 11, 12, 13, 14].map((v, i) => good('T/a', t0 - 10 * second + i, v)));
  const mark = await backend.lastSeq();
  // Appended after the mark was taken, before the rows are read: earlier in time, so they come
  // first in (tag, time) order and would fill the read's limit.
  await backend.append([1, 2, 3].map((v, i) => good('T/a', t0 - 30 * second + i, v)));
  const answer = await readLogged(history, binding, ['T/a'], t0, mark, 5);
  t.deepEqual(values(answer), [10, 11, 12, 13, 14]);
  t.false(answer.over);
  const delta = await readLoggedDelta(
    history,
    binding,
    ['T/a'],
    t0 + second,
    answer.cursor,
    await backend.lastSeq(),
    5,
  );
  t.deepEqual(values(delta), [1, 2, 3]);
});

/** A backend whose aggregate() reads are counted: windows returned, per call. */
function countingAggregates(backend: HistoryBackend): {
  backend: HistoryBackend;
  windowsRead: () => number;
} {
  let windows = 0;
  const counted = Object.create(backend) as HistoryBackend;
  counted.aggregate = async (query: AggregateQuery) => {
    const result = await backend.aggregate(query);
    windows += result.length;
    return result;
  };
  return {
    backend: counted,
    windowsRead: () => {
      const read = windows;
      windows = 0;
      return read;
    },
  };
}

function aggregated(start: string, stop: string): TagQueryBinding {
  return {
    ...raw(start, stop),
    seriesMode: 'Aggregated',
    aggregationWindow: '1m',
    aggregationFunction: 'Sum',
  };
}

test('Aggregated Delta: more changed windows than the budget are paged, each once, reading only those', async (t) => {
  const opened = await open(t);
  const { backend, windowsRead } = countingAggregates(opened);
  const start = t0 - 60 * minute;
  const reader = client(backend, aggregated(new Date(start).toISOString(), 'now'), ['T/a']);
  await opened.append(Array.from({ length: 60 }, (_, i) => good('T/a', start + i * minute, 1)));
  t.is((await reader.first(t0)).samples.length, 60);
  windowsRead();
  // Late samples for the first 12 windows of 60.
  await opened.append(
    Array.from({ length: 12 }, (_, i) => good('T/a', start + i * minute + 1, 10)),
  );
  const pages: { windows: number[]; over: boolean; read: number }[] = [];
  for (let poll = 0; poll < 4; poll++) {
    const answer = await reader.delta(t0 + poll * second, 5);
    pages.push({
      windows: answer.samples.map((s) => (Date.parse(s.utcTimestamp) - start) / minute),
      over: answer.over,
      read: windowsRead(),
    });
    t.true(answer.samples.every((s) => s.value === 11));
  }
  t.deepEqual(
    pages.map((p) => [p.windows, p.over]),
    [
      [[0, 1, 2, 3, 4], true],
      [[5, 6, 7, 8, 9], true],
      [[10, 11], false],
      [[], false],
    ],
  );
  // The changed windows (and which changed), not every window from the first one to the stop.
  for (const page of pages) t.true(page.read <= 2 * (5 + 1), `read ${page.read} windows`);
});

test('Aggregated Delta: a window that gains an already logged sample as the stop slides is recomputed', async (t) => {
  const backend = await open(t);
  const reader = client(backend, aggregated('now-10m', 'now'), ['T/a']);
  await backend.append([good('T/a', t0 - 30 * second, 1), good('T/a', t0 + 30 * second, 2)]);
  const first = await reader.first(t0);
  t.deepEqual(values(first), [1]);
  const later = await reader.delta(t0 + minute);
  t.deepEqual(
    later.samples.map((s) => [s.utcTimestamp, s.value]),
    [[new Date(t0).toISOString(), 2]],
  );
  t.deepEqual(values(await reader.delta(t0 + 2 * minute)), []);
});

/** Deterministic pseudo-random numbers in [0, 1) (a small LCG), so failures reproduce. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

for (const [start, stop] of [
  ['now-20s', 'now'],
  ['now-30s', 'now-5s'],
  [new Date(t0 - 40 * second).toISOString(), 'now'],
  ['now-1h', new Date(t0 + 30 * second).toISOString()],
] as const) {
  test(`Raw Delta over ${start}..${stop}: random appends, slides and budgets answer each visible sample once`, async (t) => {
    const backend = await open(t);
    const binding = raw(start, stop);
    const tags = ['T/a', 'T/b', 'T/c'];
    const random = seededRandom(start.length * 31 + stop.length);
    const pick = (n: number) => Math.floor(random() * n);
    let now = t0;
    let next = 0;
    const append = async () => {
      // Whole seconds, so samples share times; some ahead of now, some late.
      const samples = Array.from({ length: pick(7) }, () =>
        good(tags[pick(tags.length)] as string, now + (pick(41) - 30) * second, next++),
      );
      await backend.append(samples);
    };
    /** Poll times and marks of the polls that started a new slice. */
    const fresh: { now: number; mark: bigint }[] = [];
    const delivered: number[] = [];
    let cursor: LoggedCursor;
    await append();
    {
      const mark = await backend.lastSeq();
      const first = await readLogged(backend, binding, tags, now, mark, 1_000);
      t.false(first.over);
      fresh.push({ now, mark: BigInt(mark) });
      delivered.push(...(values(first) as number[]));
      cursor = first.cursor;
    }
    let over = false;
    const poll = async (budget: number) => {
      const mark = await backend.lastSeq();
      if (!over) fresh.push({ now, mark: BigInt(mark) });
      const answer = await readLoggedDelta(backend, binding, tags, now, cursor, mark, budget);
      t.true(answer.samples.length <= budget);
      delivered.push(...(values(answer) as number[]));
      cursor = answer.cursor;
      over = answer.over;
    };
    for (let step = 0; step < 60; step++) {
      await append();
      now += pick(9) * second;
      await poll(pick(7));
    }
    // No more appends: finish the paged slice, then one fresh slice, to the end.
    for (let rounds = 0; rounds < 2; rounds++) {
      do await poll(1_000);
      while (over);
    }
    t.is(new Set(delivered).size, delivered.length, 'nothing twice');
    const all = await backend.raw({ tagIds: tags, startMs: 0, stopMs: 2 * t0, limit: 10_000 });
    const visible = new Set<number>();
    for (const { now: at, mark } of fresh) {
      const range = loggedRange(binding, at);
      for (const row of all) {
        const inRange = row.epochMs >= range.startMs && row.epochMs <= range.stopMs;
        if (inRange && BigInt(row.seq) <= mark) visible.add(row.value as number);
      }
    }
    t.deepEqual(
      [...delivered].sort((a, b) => a - b),
      [...visible].sort((a, b) => a - b),
      'exactly the samples visible at some poll',
    );
    t.true(visible.size > 20, `${visible.size} samples visible`);
  });
}
