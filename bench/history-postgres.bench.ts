/**
 * PostgreSQL history backend benchmarks, against a throw-away server started here
 * (test/helpers/postgres-server.ts; needs the PostgreSQL server binaries):
 *
 * - `postgres append`: samples per second stored by `append()` (one transaction, one
 *   multi-row INSERT fed by unnest() arrays) against the naive way, one prepared INSERT per
 *   sample inside one transaction, into an identical table in another database.
 * - `postgres aggregate 1 day`: a day of one tag at 1 s (86,400 samples) aggregated to
 *   1-minute Avg windows in SQL, against reading the same day raw and averaging in JS.
 *
 * The cases are asynchronous: they are `measured` cases, each of which starts and removes its
 * own server and is measured in between by the harness's `runAsyncCase` (calibrate, warm up,
 * alternate the sides sample by sample, medians), with 400 ms samples and a 1 s warm-up.
 * `npm run bench -- postgres`.
 */
import pg from 'pg';
import { pino } from 'pino';
import { systemClock } from '../src/clock.js';
import type { HistoryBackend, LoggedSample } from '../src/history/history-backend.js';
import { createPostgresBackend } from '../src/history/postgres-backend.js';
import { type PostgresServer, startPostgresServer } from '../test/helpers/postgres-server.js';
import {
  type AsyncBenchmarkCase,
  type BenchmarkBudget,
  type HarnessOptions,
  type MeasuredCase,
  runAsyncCase,
} from './harness.js';

const appendBudget: BenchmarkBudget = {
  minRatio: 3,
  description: 'batching must beat row-by-row inserts clearly',
};

/** Longer samples and warm-up than the harness's defaults: one run is a round trip or more. */
const options: HarnessOptions = { targetSampleMs: 400, samples: 7, warmupMs: 1000 };

const day = 86_400_000;
const batchSize = 1_000;
const tagCount = 100;

/** The append case: backend.append vs one INSERT per sample, each into its own database. */
async function appendCase(subjectUrl: string, baselineUrl: string): Promise<AsyncBenchmarkCase> {
  const logger = pino({ level: 'silent' });
  const subject = createPostgresBackend({ url: subjectUrl, logger, clock: systemClock });
  const naiveSchema = createPostgresBackend({ url: baselineUrl, logger, clock: systemClock });
  await subject.start();
  await naiveSchema.start();
  const tags = Array.from({ length: tagCount }, (_, i) => `Bench/Line${i % 10}/Tag${i}`);
  const base = Date.now();
  // The same tables and tag dictionary on the baseline side.
  await naiveSchema.append(
    tags.map((fullTagId) => ({ fullTagId, epochMs: base, quality: 'Good' })),
  );
  await naiveSchema.stop();
  const client = new pg.Client({ connectionString: baselineUrl });
  await client.connect();
  const ids = new Map(
    (
      await client.query<{ id: number; full_tag_id: string }>(
        'SELECT id, full_tag_id FROM tagd_history_tags',
      )
    ).rows.map((row) => [row.full_tag_id, row.id]),
  );
  let clockMs = base;
  const batch = (): LoggedSample[] =>
    Array.from({ length: batchSize }, (_, i) => ({
      fullTagId: tags[i % tagCount] as string,
      epochMs: ++clockMs,
      quality: 'Good',
      value: Math.sin(clockMs / 1000) * 100,
    }));
  let appended = 0;
  let inserted = 0;
  return {
    name: 'postgres append',
    unit: 'samples',
    unitsPerIteration: batchSize,
    baseline: {
      name: 'one INSERT per sample, one transaction per batch',
      async run(iterations) {
        for (let n = 0; n < iterations; n++) {
          await client.query('BEGIN');
          for (const sample of batch()) {
            await client.query({
              name: 'naive-insert',
              text: `INSERT INTO tagd_history_samples (tag_id, time, quality, reason, num, flag, txt)
                     VALUES ($1, 'epoch'::timestamptz + $2::float8 * interval '1 millisecond',
                             $3, $4, $5, $6, $7)`,
              values: [
                ids.get(sample.fullTagId),
                sample.epochMs,
                sample.quality,
                null,
                sample.value,
                null,
                null,
              ],
            });
            inserted++;
          }
          await client.query('COMMIT');
        }
      },
    },
    subject: {
      name: `backend.append (unnest arrays) of ${batchSize}-sample batches`,
      async run(iterations) {
        for (let n = 0; n < iterations; n++) {
          await subject.append(batch());
          appended += batchSize;
        }
      },
    },
    budget: appendBudget,
    async verify() {
      const stored = await subject.count({ tagIds: tags, startMs: base + 1, stopMs: clockMs });
      if (stored !== appended) throw new Error(`appended ${appended}, stored ${stored}`);
      const naive = await client.query<{ n: string }>(
        'SELECT count(*) AS n FROM tagd_history_samples WHERE time > $1::timestamptz',
        [new Date(base).toISOString()],
      );
      if (Number(naive.rows[0]?.n) !== inserted) throw new Error('the baseline lost rows');
      await client.end();
      await subject.stop();
    },
  };
}

/** The aggregate case: a 1 s day to 1-minute Avg windows in SQL vs raw read + JS. */
async function aggregateCase(url: string): Promise<AsyncBenchmarkCase> {
  const backend: HistoryBackend = createPostgresBackend({
    url,
    logger: pino({ level: 'silent' }),
    clock: systemClock,
  });
  await backend.start();
  const start = Math.floor(Date.now() / day) * day - day;
  const series: LoggedSample[] = Array.from({ length: 86_400 }, (_, i) => ({
    fullTagId: 'Agg/a',
    epochMs: start + i * 1000,
    quality: 'Good',
    value: Math.round(Math.sin(i / 600) * 1000) / 10,
  }));
  for (let i = 0; i < series.length; i += 10_000) await backend.append(series.slice(i, i + 10_000));
  const range = { tagIds: ['Agg/a'], startMs: start, stopMs: start + day - 1 };
  let windows = 0;
  let jsWindows = 0;
  return {
    name: 'postgres aggregate 1 day',
    unit: 'samples',
    unitsPerIteration: series.length,
    baseline: {
      name: 'raw read of the day + Avg per minute in JS',
      async run(iterations) {
        for (let n = 0; n < iterations; n++) {
          const rows = await backend.raw({ ...range, limit: 100_000 });
          const sums = new Map<number, [number, number]>();
          for (const row of rows) {
            const w = Math.floor(row.epochMs / 60_000) * 60_000;
            const entry = sums.get(w) ?? [0, 0];
            entry[0] += row.value as number;
            entry[1]++;
            sums.set(w, entry);
          }
          jsWindows = sums.size;
        }
      },
    },
    subject: {
      name: 'backend.aggregate Avg, 1-minute windows (SQL)',
      async run(iterations) {
        for (let n = 0; n < iterations; n++) {
          windows = (
            await backend.aggregate({ ...range, windowMs: 60_000, fn: 'Avg', limit: 10_000 })
          ).length;
        }
      },
    },
    async verify() {
      if (windows !== 1440 || jsWindows !== 1440) {
        throw new Error(`expected 1440 windows, got ${windows} (SQL) and ${jsWindows} (JS)`);
      }
      await backend.stop();
    },
  };
}

/** A case that runs on a throw-away server of its own. */
function onOwnServer(
  info: Pick<MeasuredCase, 'name' | 'unit' | 'budget'>,
  make: (server: PostgresServer) => Promise<AsyncBenchmarkCase>,
): MeasuredCase {
  return {
    kind: 'measured',
    ...info,
    async measure() {
      const server = await startPostgresServer();
      try {
        process.stdout.write(
          `  (${server.psql('SHOW server_version').trim()}, throw-away cluster, fsync off)\n`,
        );
        return await runAsyncCase(await make(server), options);
      } finally {
        await server.destroy();
      }
    },
  };
}

/** The cases, for bench/run.ts (`measured`: each runs itself against its own server). */
export const cases: MeasuredCase[] = [
  onOwnServer(
    {
      name: 'postgres append',
      unit: 'samples',
      budget: appendBudget,
    },
    async (server) => appendCase(await server.createDatabase(), await server.createDatabase()),
  ),
  onOwnServer({ name: 'postgres aggregate 1 day', unit: 'samples' }, async (server) =>
    aggregateCase(await server.createDatabase()),
  ),
];
