import { existsSync } from 'node:fs';
import { copyFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import type { LoggedSample } from '../../src/history/history-backend.js';
import { createSqliteBackend } from '../../src/history/sqlite-backend.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { tempDir } from '../helpers/temp-dir.js';
import { backendContract } from './backend-contract.js';

const logger = pino({ level: 'silent' });

backendContract(test, {
  name: 'sqlite',
  create: async (t) => createSqliteBackend({ file: join(await tempDir(t), 'history.db'), logger }),
});

const t0 = Date.UTC(2026, 0, 1);

test('sqlite: samples, positions and tags survive a close and reopen of the file', async (t) => {
  const file = join(await tempDir(t), 'history.db');
  const first = createSqliteBackend({ file, logger });
  await first.start();
  await first.append([
    { fullTagId: 'P/a', epochMs: t0, quality: 'Good', value: 1 },
    { fullTagId: 'P/b', epochMs: t0, quality: 'Good', value: 'x' },
  ]);
  const seq = await first.lastSeq();
  await first.stop();
  const second = createSqliteBackend({ file, logger, synchronous: 'full' });
  await second.start();
  t.teardown(() => second.stop());
  t.is(await second.lastSeq(), seq);
  t.deepEqual(await second.tagIds('P/*'), ['P/a', 'P/b']);
  await second.append([{ fullTagId: 'P/a', epochMs: t0 + 1, quality: 'Good', value: 2 }]);
  const read = await second.raw({ tagIds: ['P/a'], startMs: t0, stopMs: t0 + 1, limit: 10 });
  t.deepEqual(
    read.map((s) => s.value),
    [1, 2],
  );
});

test('sqlite: positions are never reused, even after retention deleted every sample and a reopen', async (t) => {
  const file = join(await tempDir(t), 'h.db');
  const first = createSqliteBackend({ file, logger });
  await first.start();
  await first.append([
    { fullTagId: 'R/a', epochMs: t0 + 9, quality: 'Good', value: 0 },
    { fullTagId: 'R/a', epochMs: t0, quality: 'Good', value: 1 },
  ]);
  const before = await first.lastSeq();
  t.is(await first.deleteBefore(t0 + 1), 1, 'the newest position held the oldest sample');
  t.is(await first.deleteBefore(t0 + 10), 1);
  t.deepEqual(await first.tagIds('**'), []);
  t.is(await first.lastSeq(), before);
  await first.stop();
  const backend = createSqliteBackend({ file, logger });
  await backend.start();
  t.teardown(() => backend.stop());
  t.is(await backend.lastSeq(), before);
  await backend.append([
    { fullTagId: 'R/a', epochMs: t0 + 5, quality: 'Good', value: 2 },
    { fullTagId: 'R/a', epochMs: t0 + 6, quality: 'Good', value: 3 },
  ]);
  const read = await backend.raw({ tagIds: ['R/a'], startMs: 0, stopMs: t0 * 2, limit: 10 });
  t.deepEqual(
    read.map((s) => BigInt(s.seq) - BigInt(before)),
    [1n, 2n],
  );
});

test('sqlite: a refused append stores nothing, not even the tag it introduced', async (t) => {
  const backend = createSqliteBackend({ file: join(await tempDir(t), 'h.db'), logger });
  await backend.start();
  t.teardown(() => backend.stop());
  const bad = { fullTagId: 'X/bad', epochMs: t0, quality: 'Good', value: {} } as never;
  await t.throwsAsync(() =>
    backend.append([{ fullTagId: 'X/new', epochMs: t0, quality: 'Good', value: 1 }, bad]),
  );
  t.deepEqual(await backend.tagIds('**'), []);
  t.is(await backend.lastSeq(), '0');
  await backend.append([{ fullTagId: 'X/new', epochMs: t0, quality: 'Good', value: 1 }]);
  t.deepEqual(await backend.tagIds('**'), ['X/new']);
});

test('sqlite: the file is in WAL mode (readers never wait for the writer)', async (t) => {
  const file = join(await tempDir(t), 'h.db');
  const backend = createSqliteBackend({ file, logger, synchronous: 'off' });
  await backend.start();
  await backend.stop();
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file, { readonly: true });
  t.is(db.pragma('journal_mode', { simple: true }), 'wal');
  db.close();
});

test('sqlite: the database and its WAL files are readable by the owner only', async (t) => {
  const previous = process.umask(0o022); // a developer's shell, not the unit's UMask=0077
  t.teardown(() => process.umask(previous));
  const folder = await tempDir(t);
  const backend = createSqliteBackend({ file: join(folder, 'h.db'), logger });
  await backend.start();
  t.teardown(() => backend.stop());
  await backend.append([{ fullTagId: 'P/a', epochMs: t0, quality: 'Good', value: 1 }]);
  for (const name of ['h.db', 'h.db-wal', 'h.db-shm']) {
    t.is((await stat(join(folder, name))).mode & 0o777, 0o600, name);
  }
});

/** `count` samples of each tag, one a millisecond from t0, appended in batches. */
async function fill(
  backend: ReturnType<typeof createSqliteBackend>,
  tags: string[],
  count: number,
): Promise<void> {
  for (let from = 0; from < count; from += 10_000) {
    const batch = [];
    for (const fullTagId of tags) {
      for (let i = from; i < Math.min(count, from + 10_000); i++) {
        batch.push({ fullTagId, epochMs: t0 + i, quality: 'Good' as const, value: i });
      }
    }
    await backend.append(batch);
  }
}

test('sqlite: retention deletes in chunks and lets the event loop run between them', async (t) => {
  const backend = createSqliteBackend({
    file: join(await tempDir(t), 'h.db'),
    logger,
    deleteChunkRows: 1_000,
  });
  await backend.start();
  t.teardown(() => backend.stop());
  await fill(backend, ['C/a', 'C/b'], 20_000);
  // Counts the turns of the event loop while retention runs.
  let turns = 0;
  let running = true;
  const spin = () => {
    turns++;
    if (running) setImmediate(spin);
  };
  setImmediate(spin);
  const deleted = await backend.deleteBefore(t0 + 15_000);
  running = false;
  t.is(deleted, 30_000);
  // 30 chunks: the loop turned between them (one statement would allow none at all).
  t.true(turns >= 20, `${turns} event-loop turns during retention`);
  t.is(await backend.count({ tagIds: ['C/a', 'C/b'], startMs: 0, stopMs: t0 * 2 }), 10_000);
  t.deepEqual(await backend.tagIds('C/*'), ['C/a', 'C/b']);
});

test('sqlite: chunked retention keeps positions from going back, whichever chunk held the newest', async (t) => {
  const file = join(await tempDir(t), 'h.db');
  const backend = createSqliteBackend({ file, logger, deleteChunkRows: 2 });
  await backend.start();
  t.teardown(() => backend.stop());
  // Appended newest-time first: the last position holds the oldest sample.
  await backend.append(
    Array.from({ length: 9 }, (_, i) => ({
      fullTagId: 'H/a',
      epochMs: t0 + 100 - i * 10,
      quality: 'Good' as const,
      value: i,
    })),
  );
  const before = await backend.lastSeq();
  t.is(await backend.deleteBefore(t0 + 100), 8);
  t.is(await backend.lastSeq(), before);
  t.is(await backend.deleteBefore(t0 + 1_000), 1);
  t.deepEqual(await backend.tagIds('**'), []);
  await backend.append([{ fullTagId: 'H/a', epochMs: t0, quality: 'Good', value: 9 }]);
  const read = await backend.raw({ tagIds: ['H/a'], startMs: 0, stopMs: t0 * 2, limit: 10 });
  t.deepEqual(
    read.map((s) => BigInt(s.seq) - BigInt(before)),
    [1n],
  );
});

test('sqlite: a stop during chunked retention ends it without an error', async (t) => {
  const backend = createSqliteBackend({
    file: join(await tempDir(t), 'h.db'),
    logger,
    deleteChunkRows: 100,
  });
  await backend.start();
  await fill(backend, ['S/a'], 5_000);
  const retention = backend.deleteBefore(t0 + 5_000);
  await new Promise((resolve) => setImmediate(resolve));
  await backend.stop();
  const deleted = await retention;
  t.true(deleted !== undefined && deleted > 0 && deleted < 5_000, `${deleted} deleted`);
});

/**
 * The samples in the database file itself, without its WAL: what checkpoints copied back. A copy
 * of the main file alone is opened (it finds no WAL of its own), so the WAL beside the original
 * is neither read nor checkpointed by the look.
 */
async function checkpointedSamples(t: ExecutionContext, file: string): Promise<number> {
  const copy = join(await tempDir(t), 'main-file-only.db');
  await copyFile(file, copy);
  const db = new Database(copy);
  try {
    const hasTable = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'samples'")
      .get();
    if (hasTable === undefined) return 0;
    return (db.prepare('SELECT COUNT(*) AS n FROM samples').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function sample(i: number): LoggedSample {
  return { fullTagId: 'W/a', epochMs: t0 + i, quality: 'Good', value: i };
}

test('sqlite: appends checkpoint the WAL into the database file once the interval passed, by the injected clock', async (t) => {
  const file = join(await tempDir(t), 'h.db');
  const clock = new ManualClock(t0);
  const backend = createSqliteBackend({ file, logger, clock });
  await backend.start();
  t.teardown(() => backend.stop());
  await backend.append([sample(0)]);
  t.is(await checkpointedSamples(t, file), 1, 'the first append after opening checkpoints');
  clock.now = () => t0 + 999; // time passes without the trailing checkpoint's timer running
  await backend.append([sample(1)]);
  t.is(await backend.count({ tagIds: ['W/a'], startMs: 0, stopMs: t0 * 2 }), 2);
  t.is(await checkpointedSamples(t, file), 1, 'committed, but only in the WAL');
  clock.now = () => t0 + 1_000;
  await backend.append([sample(2)]);
  t.is(await checkpointedSamples(t, file), 3, '1,000 ms (the default) after the last one');
  clock.now = () => t0 - 60_000; // set back: the interval would otherwise not pass for a minute
  await backend.append([sample(3)]);
  t.is(await checkpointedSamples(t, file), 4);
});

test('sqlite: a commit no append follows is checkpointed by a timer one interval after the last checkpoint', async (t) => {
  const file = join(await tempDir(t), 'h.db');
  const clock = new ManualClock(t0);
  const backend = createSqliteBackend({ file, logger, clock, checkpointIntervalMs: 5_000 });
  await backend.start();
  await backend.append([sample(0)]);
  clock.advance(3_000);
  await backend.append([sample(1)]);
  await backend.append([sample(2)]);
  t.is(clock.pendingTimers(), 1, 'one timer for both commits');
  clock.advance(1_999);
  t.is(await checkpointedSamples(t, file), 1);
  clock.advance(1);
  t.is(await checkpointedSamples(t, file), 3);
  t.is(clock.pendingTimers(), 0);
  await backend.append([sample(3)]); // 2,000 ms after that checkpoint: a timer again
  t.is(clock.pendingTimers(), 1);
  await backend.stop();
  t.is(clock.pendingTimers(), 0, 'stop cancels it (closing checkpoints)');
  t.is(await checkpointedSamples(t, file), 4);
});

test("sqlite: SQLite's 1,000-page checkpoint trigger is raised, so the interval decides", async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'h.db');
  const backend = createSqliteBackend({ file, logger, clock: new ManualClock(t0) });
  await backend.start();
  t.teardown(() => backend.stop());
  await backend.append([sample(0)]);
  // 100 tags, 10 samples each per transaction: every transaction rewrites a leaf per tag.
  for (let batch = 1; batch <= 20; batch++) {
    await backend.append(
      Array.from({ length: 1_000 }, (_, i) => ({
        fullTagId: `W/t${i % 100}`,
        epochMs: t0 + batch * 1_000 + i,
        quality: 'Good' as const,
        value: i,
      })),
    );
  }
  const wal = (await stat(`${file}-wal`)).size;
  t.true(wal > 1_000 * 4_096, `WAL of ${wal} bytes: past the default trigger`);
  t.is(await checkpointedSamples(t, file), 1, 'no checkpoint since the first append');
});

test('sqlite: stop leaves every committed sample in the database file and removes the WAL', async (t) => {
  const file = join(await tempDir(t), 'h.db');
  const backend = createSqliteBackend({ file, logger, clock: new ManualClock(t0) });
  await backend.start();
  await backend.append([sample(0)]);
  await backend.append([sample(1)]);
  t.is(await checkpointedSamples(t, file), 1);
  await backend.stop();
  t.is(await checkpointedSamples(t, file), 2);
  t.false(existsSync(`${file}-wal`));
});
