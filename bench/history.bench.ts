/**
 * History in SQLite (issue 7 "Speed"), through the backend the logger and the API use.
 *
 * 1. `history: sqlite append` — samples stored per second, in batches of 1,000 per
 *    transaction (100 tags × 10 samples; budget ≥ 250,000 samples/s, issue 15). Baseline: the
 *    naive way, one INSERT statement per row in autocommit mode (a transaction per row).
 *    `history: sqlite append, 20,000 per transaction` is the same work in the batches the logger
 *    hands over at such rates (one flush a second, at most `maxBatch` = 20,000 per
 *    transaction). The cost per sample is mostly SQLite's page work, not the calls: each
 *    transaction rewrites every index leaf it touched (one per tag) into the WAL (about 200
 *    pages per 1,000 samples), so the batch size sets the rate. Checkpoints (copy back and
 *    fsync) run about once a second and every 16,384 WAL pages (src/history/sqlite-checkpoints.ts).
 * 2. `history: sqlite 1-day Avg → 1-min` — one day of a 1 s series (86,400 rows, beside a second
 *    tag of the same size) aggregated to 1,440 one-minute windows in SQL (budget < 50 ms per
 *    query, i.e. ≥ 20 queries/s). Baseline: the same rows read raw and averaged in JS.
 *
 * The naive table of case 1 is the obvious schema (tag path as text, AUTOINCREMENT); the
 * backend's uses integer tag ids and plain rowids, which is part of what is measured.
 *
 * better-sqlite3 is synchronous, so the backend's promises are settled by the time the call
 * returns and the timed code does all the work. Files live in a temporary folder removed at exit.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import type { AggregateValue, LoggedSample } from '../src/history/history-backend.js';
import { createSqliteBackend } from '../src/history/sqlite-backend.js';
import type { BenchmarkCase } from './harness.js';

const folder = mkdtempSync(join(tmpdir(), 'tagd-bench-history-'));
process.on('exit', () => rmSync(folder, { recursive: true, force: true }));
const logger = pino({ level: 'silent' });

const batchSize = 1_000;
const t0 = Date.UTC(2026, 0, 1);
const day = 86_400_000;

// ---- 1. append ----

const appendBackend = createSqliteBackend({ file: join(folder, 'append.db'), logger });
await appendBackend.start();
let appendClock = t0;
/** One logger batch: 100 tags × 10 samples, alternating numbers and booleans. */
function nextBatch(): LoggedSample[] {
  const batch: LoggedSample[] = new Array(batchSize);
  for (let i = 0; i < batchSize; i++) {
    appendClock += 1;
    batch[i] = {
      fullTagId: `Plant/Line${i % 10}/Tag${i % 100}`,
      epochMs: appendClock,
      quality: 'Good',
      value: i % 7 === 0 ? i % 2 === 0 : appendClock % 1000,
    };
  }
  return batch;
}
const batches = Array.from({ length: 20 }, nextBatch);
const bigBatchSize = 20_000;
const bigAppendBackend = createSqliteBackend({ file: join(folder, 'append-big.db'), logger });
await bigAppendBackend.start();
/** The same samples (and tags) as {@link batches}, 20 of them per transaction. */
const bigBatch: LoggedSample[] = batches.flat();
let bigAppended = 0;
let appended = 0;
let appendFailed: unknown;

const naive = new Database(join(folder, 'naive.db'));
naive.pragma('journal_mode = WAL');
naive.pragma('synchronous = normal');
naive.exec(
  'CREATE TABLE samples (seq INTEGER PRIMARY KEY AUTOINCREMENT, tag TEXT NOT NULL, ' +
    't INTEGER NOT NULL, q INTEGER NOT NULL, k INTEGER NOT NULL, v, reason TEXT); ' +
    'CREATE INDEX samples_tag_t ON samples (tag, t);',
);
const naiveInsert = naive.prepare(
  'INSERT INTO samples (tag, t, q, k, v, reason) VALUES (?, ?, 0, 1, ?, NULL)',
);
let naiveRows = 0;

// ---- 2. one day aggregated ----

const dayBackend = createSqliteBackend({ file: join(folder, 'day.db'), logger });
await dayBackend.start();
const dayStart = t0;
for (const tag of ['Plant/Oven/Temperature', 'Plant/Oven/Pressure']) {
  for (let hour = 0; hour < 24; hour++) {
    const rows: LoggedSample[] = [];
    for (let s = 0; s < 3600; s++) {
      const epochMs = dayStart + hour * 3_600_000 + s * 1000;
      rows.push({ fullTagId: tag, epochMs, quality: 'Good', value: 60 + Math.sin(epochMs / 6e5) });
    }
    await dayBackend.append(rows);
  }
}
const dayQuery = {
  tagIds: ['Plant/Oven/Temperature'],
  startMs: dayStart,
  stopMs: dayStart + day - 1,
  windowMs: 60_000,
  fn: 'Avg' as const,
  limit: 100_001,
};
// The timed calls settle after the case; this one, awaited, shows what each computes.
const expected: AggregateValue[] = await dayBackend.aggregate(dayQuery);
let aggregateFailed: unknown;
const reader = new Database(join(folder, 'day.db'), { readonly: true });
const rawRead = reader.prepare(
  'SELECT t, v FROM samples WHERE tag = (SELECT id FROM tags WHERE path = ?) ' +
    'AND t BETWEEN ? AND ? ORDER BY t LIMIT ?',
);
let lastJsWindows = 0;

export const cases: BenchmarkCase[] = [
  {
    name: 'history: sqlite append',
    unit: 'samples',
    unitsPerIteration: batchSize,
    baseline: {
      name: 'INSERT per row, autocommit',
      run(iterations) {
        for (let i = 0; i < iterations; i++) {
          const batch = batches[i % batches.length] as LoggedSample[];
          for (const s of batch) naiveInsert.run(s.fullTagId, s.epochMs, Number(s.value));
          naiveRows += batch.length;
        }
      },
    },
    subject: {
      name: 'backend.append, 1,000 per transaction',
      run(iterations) {
        for (let i = 0; i < iterations; i++) {
          const batch = batches[i % batches.length] as LoggedSample[];
          appendBackend.append(batch).catch((error) => {
            appendFailed = error;
          });
          appended += batch.length;
        }
      },
    },
    budget: { minRatePerSecond: 250_000, description: 'issue 15: ≥ 250,000 samples/s' },
    verify() {
      if (appendFailed !== undefined) throw appendFailed;
      // The appends ran synchronously: their rows are committed and readable now.
      const check = new Database(join(folder, 'append.db'), { readonly: true });
      const stored = (check.prepare('SELECT COUNT(*) AS n FROM samples').get() as { n: number }).n;
      check.close();
      if (stored !== appended || naiveRows === 0) {
        throw new Error(`appended ${appended}, stored ${stored}, naive ${naiveRows}`);
      }
    },
  },
  {
    name: 'history: sqlite append, 20,000 per transaction',
    unit: 'samples',
    unitsPerIteration: bigBatchSize,
    baseline: {
      name: 'INSERT per row, autocommit',
      run(iterations) {
        for (let i = 0; i < iterations; i++) {
          for (const s of bigBatch) naiveInsert.run(s.fullTagId, s.epochMs, Number(s.value));
          naiveRows += bigBatch.length;
        }
      },
    },
    subject: {
      name: 'backend.append, 20,000 per transaction',
      run(iterations) {
        for (let i = 0; i < iterations; i++) {
          bigAppendBackend.append(bigBatch).catch((error) => {
            appendFailed = error;
          });
          bigAppended += bigBatch.length;
        }
      },
    },
    budget: { minRatePerSecond: 250_000, description: 'issue 15: ≥ 250,000 samples/s' },
    verify() {
      if (appendFailed !== undefined) throw appendFailed;
      const check = new Database(join(folder, 'append-big.db'), { readonly: true });
      const stored = (check.prepare('SELECT COUNT(*) AS n FROM samples').get() as { n: number }).n;
      check.close();
      if (stored !== bigAppended) throw new Error(`appended ${bigAppended}, stored ${stored}`);
    },
  },
  {
    name: 'history: sqlite 1-day Avg → 1-min',
    unit: 'queries',
    baseline: {
      name: 'read 86,400 rows raw, average in JS',
      run(iterations) {
        for (let i = 0; i < iterations; i++) {
          const rows = rawRead.all(
            dayQuery.tagIds[0],
            dayQuery.startMs,
            dayQuery.stopMs,
            dayQuery.limit,
          ) as { t: number; v: number }[];
          const sums = new Map<number, [number, number]>();
          for (const row of rows) {
            const start = Math.floor(row.t / 60_000) * 60_000;
            const entry = sums.get(start);
            if (entry) {
              entry[0] += row.v;
              entry[1]++;
            } else sums.set(start, [row.v, 1]);
          }
          lastJsWindows = sums.size;
        }
      },
    },
    subject: {
      name: 'backend.aggregate (one indexed read per window)',
      run(iterations) {
        for (let i = 0; i < iterations; i++) {
          dayBackend.aggregate(dayQuery).catch((error) => {
            aggregateFailed = error;
          });
        }
      },
    },
    budget: { minRatePerSecond: 20, description: 'issue 7: < 50 ms per 1-day query' },
    verify() {
      if (aggregateFailed !== undefined) throw aggregateFailed;
      if (expected.length !== 1440 || lastJsWindows !== 1440) {
        throw new Error(`expected 1,440 windows, got ${expected.length} / ${lastJsWindows}`);
      }
    },
  },
];
