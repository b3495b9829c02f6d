/**
 * Retention shares the backend with appends (issue 15): a long run deletes in slices, the
 * appends that come due run between slices, and a stop never waits for the run. Event-driven:
 * the clock is a ManualClock moved from inside the run, and the order of backend calls is
 * recorded, so nothing here depends on how fast the machine is.
 */
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import type {
  DeleteOptions,
  HistoryBackend,
  LoggedSample,
} from '../../src/history/history-backend.js';
import { HistoryLogger } from '../../src/history/history-logger.js';
import { createSqliteBackend } from '../../src/history/sqlite-backend.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { tempDir } from '../helpers/temp-dir.js';

const logger = pino({ level: 'silent' });
const t0 = Date.UTC(2026, 0, 1);
const day = 86_400_000;

/**
 * The real SQLite backend, recording the order of appends, slice boundaries and the end of
 * each retention run in `events`; `onPause` runs at each boundary before the logger's own
 * `betweenSlices`, and `hangDelete` makes retention calls wait for `release`.
 */
class RecordingBackend implements HistoryBackend {
  readonly events: string[] = [];
  onPause: ((pause: number) => void) | undefined;
  hangDelete = false;
  release: (() => void) | undefined;
  constructor(readonly inner: HistoryBackend) {}
  start = () => this.inner.start();
  stop = () => this.inner.stop();
  async append(samples: readonly LoggedSample[]) {
    this.events.push(`append ${samples.map((s) => s.fullTagId).join(',')}`);
    await this.inner.append(samples);
  }
  async deleteBefore(beforeMs: number, options: DeleteOptions = {}) {
    if (this.hangDelete) await new Promise<void>((resolve) => (this.release = resolve));
    let pauses = 0;
    const deleted = await this.inner.deleteBefore(beforeMs, {
      ...options,
      betweenSlices: async () => {
        this.events.push('pause');
        this.onPause?.(++pauses);
        await options.betweenSlices?.();
      },
    });
    this.events.push(`retention ended: ${deleted}`);
    return deleted;
  }
  raw = (...args: Parameters<HistoryBackend['raw']>) => this.inner.raw(...args);
  aggregate = (...args: Parameters<HistoryBackend['aggregate']>) => this.inner.aggregate(...args);
  count = (...args: Parameters<HistoryBackend['count']>) => this.inner.count(...args);
  tagIds = (pattern: string) => this.inner.tagIds(pattern);
  lastSeq = () => this.inner.lastSeq();
}

/** A backend holding `old` samples of one tag, 40 days old, deleted 100 per slice. */
async function oldHistory(t: ExecutionContext, old: number) {
  const sqlite = createSqliteBackend({
    file: join(await tempDir(t), 'h.db'),
    logger,
    deleteChunkRows: 100,
  });
  await sqlite.start();
  t.teardown(() => sqlite.stop());
  await sqlite.append(
    Array.from({ length: old }, (_, i) => ({
      fullTagId: 'Old/a',
      epochMs: t0 - 40 * day + i,
      quality: 'Good' as const,
      value: i,
    })),
  );
  return new RecordingBackend(sqlite);
}

function historyLogger(backend: HistoryBackend, clock: ManualClock, store: TagStore) {
  return new HistoryLogger({
    backend,
    store,
    entries: [{ source: 'Live/**', mode: 'onChange' }],
    retentionDays: 30,
    bufferLimit: 1_000,
    clock,
    logger,
  });
}

/** Resolves when `events` holds an entry starting with `prefix`. */
async function until(events: string[], prefix: string): Promise<void> {
  while (!events.some((event) => event.startsWith(prefix))) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test('a flush due during a retention slice is appended right after that slice, before the next', async (t) => {
  const backend = await oldHistory(t, 1_000);
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  const history = historyLogger(backend, clock, store);
  // At the second pause, a sample arrives and its flush comes due while the slice is under way
  // as far as the logger knows (this runs before its betweenSlices).
  backend.onPause = (pause) => {
    if (pause !== 2) return;
    store.write([
      {
        fullTagId: 'Live/a',
        quality: 'Good',
        value: 1,
        utcTimestamp: new Date(clock.now()).toISOString(),
      },
    ]);
    clock.advance(1_000);
  };
  await history.start(); // starts the retention run of the start
  await until(backend.events, 'retention ended');
  t.deepEqual(
    backend.events,
    [
      'pause',
      'pause',
      'append Live/a',
      ...Array.from({ length: 8 }, () => 'pause'),
      'retention ended: 1000',
    ],
    'the append ran between the second and third slices, and the run went on after it',
  );
  const stored = await backend.raw({ tagIds: ['Live/a'], startMs: 0, stopMs: t0 * 2, limit: 10 });
  t.is(stored.length, 1);
  t.is(await backend.count({ tagIds: ['Old/a'], startMs: 0, stopMs: t0 * 2 }), 0);
  await history.stop();
  t.is(clock.pendingTimers(), 0);
});

test('a stop during a sliced retention run ends it at the next boundary and appends what is buffered', async (t) => {
  const backend = await oldHistory(t, 1_000);
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  const history = historyLogger(backend, clock, store);
  let stopping: Promise<void> | undefined;
  backend.onPause = (pause) => {
    if (pause !== 3) return;
    store.write([
      {
        fullTagId: 'Live/b',
        quality: 'Good',
        value: 2,
        utcTimestamp: new Date(clock.now()).toISOString(),
      },
    ]);
    stopping = history.stop();
  };
  await history.start();
  await until(backend.events, 'retention ended');
  await stopping;
  t.deepEqual(backend.events, ['pause', 'pause', 'pause', 'append Live/b', 'retention ended: 300']);
  t.is(await backend.count({ tagIds: ['Old/a'], startMs: 0, stopMs: t0 * 2 }), 700);
  t.is(clock.pendingTimers(), 0);
});

test('stop does not wait for a retention call under way in the backend: the final append goes beside it', async (t) => {
  const backend = await oldHistory(t, 10);
  backend.hangDelete = true; // as a PostgreSQL DELETE that takes its time
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  const history = historyLogger(backend, clock, store);
  await history.start();
  store.write([
    {
      fullTagId: 'Live/c',
      quality: 'Good',
      value: 3,
      utcTimestamp: new Date(clock.now()).toISOString(),
    },
  ]);
  // No clock advance: stop must not need its timeout (stopTimeoutMs) to return.
  await history.stop();
  t.deepEqual(backend.events, ['append Live/c']);
  t.deepEqual(history.stats().buffered, 0);
  backend.release?.();
  await until(backend.events, 'retention ended');
  t.is(backend.events.at(-1), 'retention ended: 0', 'aborted before its first slice');
});

test('a retention run still under way at the next interval is left to finish, not doubled', async (t) => {
  const backend = await oldHistory(t, 10);
  backend.hangDelete = true;
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  const history = new HistoryLogger({
    backend,
    store,
    entries: [],
    retentionDays: 30,
    bufferLimit: 1_000,
    retentionIntervalMs: 1_000,
    clock,
    logger,
  });
  await history.start();
  clock.advance(3_000);
  backend.release?.();
  await until(backend.events, 'retention ended');
  await history.flush();
  t.deepEqual(backend.events, ['retention ended: 10']);
  await history.stop();
});
