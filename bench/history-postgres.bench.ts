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
 * The cases are asynchronous and bench/harness.ts times synchronous code only, so they are
 * `measured` cases: this file measures them the same way (calibrate, warm up, alternate the
 * sides sample by sample, medians) and returns results in the harness's format. Each case
 * starts and removes its own server. `npm run bench -- postgres`.
 */
import pg from 'pg';
import { pino } from 'pino';
import { systemClock } from '../src/clock.js';
import type { HistoryBackend, LoggedSample } from '../src/history/history-backend.js';
import { createPostgresBackend } from '../src/history/postgres-backend.js';
import { type PostgresServer, startPostgresServer } from '../test/helpers/postgres-server.js';
import type { BenchmarkBudget, CaseResult, MeasuredCase, SideResult } from './harness.js';

const appendBudget: BenchmarkBudget = {
  minRatio: 3,
  description: 'batching must beat row-by-row inserts clearly',
};

/** One side of an asynchronous case. */
interface AsyncSide {
  name: string;
  run(iterations: number): Promise<void>;
}

interface AsyncCase {
  name: string;
  unit: string;
  unitsPerIteration: number;
  baseline: AsyncSide;
  subject: AsyncSide;
  budget?: BenchmarkBudget;
  verify?(): Promise<void>;
}

const targetSeconds = 0.4;
const samplesPerSide = 7;
const warmupSeconds = 1;

async function timeRun(side: AsyncSide, iterations: number): Promise<number> {
  const start = process.hrtime.bigint();
  await side.run(iterations);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const scale = (iterations: number, seconds: number) =>
  Math.max(1, Math.round((iterations * targetSeconds) / seconds));

/** Calibrates and warms a side up as bench/harness.ts does; returns iterations per sample. */
async function prepare(side: AsyncSide): Promise<number> {
  let iterations = 1;
  for (;;) {
    const seconds = await timeRun(side, iterations);
    if (seconds >= targetSeconds / 10) {
      iterations = scale(iterations, seconds);
      break;
    }
    iterations *= 2;
  }
  let spent = 0;
  while (spent < warmupSeconds) {
    const seconds = await timeRun(side, iterations);
    spent += seconds;
    iterations = scale(iterations, seconds);
  }
  return iterations;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function sideResult(name: string, iterationsPerSample: number, rates: number[]): SideResult {
  const medianRate = median(rates);
  const minRate = Math.min(...rates);
  const maxRate = Math.max(...rates);
  return {
    name,
    iterationsPerSample,
    rates,
    medianRate,
    minRate,
    maxRate,
    spread: (maxRate - minRate) / medianRate,
  };
}

/** Measures a case like bench/harness.ts runCase: interleaved samples, swapped order. */
async function runAsyncCase(benchmark: AsyncCase): Promise<CaseResult> {
  const sides = [benchmark.baseline, benchmark.subject] as const;
  const iterations = [await prepare(sides[0]), await prepare(sides[1])];
  const rates: [number[], number[]] = [[], []];
  for (let round = 0; round < samplesPerSide; round++) {
    for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) {
      const count = iterations[index] as number;
      const seconds = await timeRun(sides[index] as AsyncSide, count);
      rates[index]?.push((count * benchmark.unitsPerIteration) / seconds);
    }
  }
  await benchmark.verify?.();
  const baseline = sideResult(sides[0].name, iterations[0] as number, rates[0]);
  const subject = sideResult(sides[1].name, iterations[1] as number, rates[1]);
  const ratio = subject.medianRate / baseline.medianRate;
  const budget = benchmark.budget;
  const met =
    budget === undefined
      ? undefined
      : (budget.minRatio === undefined || ratio >= budget.minRatio) &&
        (budget.minRatePerSecond === undefined || subject.medianRate >= budget.minRatePerSecond);
  return {
    benchmark,
    baseline,
    subject,
    ratio,
    verdict: met === undefined ? undefined : met ? 'met' : 'NOT met',
  };
}

const day = 86_400_000;
const batchSize = 1_000;
const tagCount = 100;

/** The append case: backend.append vs one INSERT per sample, each into its own database. */
async function appendCase(subjectUrl: string, baselineUrl: string): Promise<AsyncCase> {
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
async function aggregateCase(url: string): Promise<AsyncCase> {
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
  make: (server: PostgresServer) => Promise<AsyncCase>,
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
        return await runAsyncCase(await make(server));
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
