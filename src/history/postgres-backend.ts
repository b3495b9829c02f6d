/**
 * The central history backend: PostgreSQL (the `pg` package), for one history shared by many
 * gateways. Tables and partitioning: postgres-schema.ts and postgres-partitions.ts; SQL of the
 * reads: postgres-queries.ts.
 *
 * Appends are one transaction per batch: a row lock on `tagd_history_state` (so appenders
 * commit in seq order), the tag dictionary, then one multi-row INSERT fed by unnest() of one
 * array per column (a round trip per 10,000 samples instead of one per sample). Partitions a
 * batch needs are created before it when missing.
 *
 * Two things PostgreSQL cannot store are handled before the insert: U+0000 in a text value
 * (`text` cannot hold NUL; SQLSTATE 22021) is removed from it, and a batch holding a sample
 * whose time is outside years 1–9999 or whose partition would reach year 10000 (in practice a
 * sample dated 9999-12-31) is refused as a whole with a {@link PostgresHistoryError} of code
 * 22008 naming it, so the history logger drops that sample and stores the rest.
 *
 * When the server is unreachable every call rejects with a {@link PostgresHistoryError} whose
 * `unreachable` is true; the pool drops dead connections and reconnects on the next call, so
 * the same backend works again once the server is back. The connection URL's password never
 * appears in logs or error messages.
 *
 * This file is imported lazily (only when a profile uses `backend: "postgres"`), so `pg` loads
 * only then.
 */
import pg from 'pg';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../clock.js';
import { compileTagPattern, isPattern } from '../tags/tag-pattern.js';
import type {
  AggregateQuery,
  AggregateValue,
  HistoryBackend,
  HistoryRange,
  LoggedSample,
  RawQuery,
  StoredSample,
} from './history-backend.js';
import {
  covered,
  createPartitions,
  dayMs,
  dropPartitionsBefore,
  listPartitions,
  type PartitionInfo,
  partitionable,
  partitionStart,
} from './postgres-partitions.js';
import {
  aggregateSql,
  decodeAggregate,
  decodeSample,
  type PgAggregateRow,
  type PgSampleRow,
  pgTime,
  rawSql,
  type SeqBounds,
  storable,
} from './postgres-queries.js';
import { type PostgresHistoryMode, setUpSchema, tables } from './postgres-schema.js';
import { maskPassword, maskPostgresUrl } from './postgres-url.js';

/** Options of {@link createPostgresBackend}. */
export interface PostgresBackendOptions {
  /**
   * Connection URL, `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=…` (libpq URL syntax
   * as the `pg` package reads it; percent-encode special characters of the password).
   */
  url: string;
  logger: Logger;
  /** Schedules partition upkeep. */
  clock: Clock;
  /** Days per partition (or TimescaleDB chunk), a whole number ≥ 1. Default: 1. */
  partitionDays?: number;
  /** Partitions created ahead of the current one, on start and every hour. Default: 2. */
  partitionsAhead?: number;
  /** Most connections the backend opens. Default: 4. */
  poolSize?: number;
  /** How long to wait for a connection before the call fails, ms. Default: 10,000. */
  connectTimeoutMs?: number;
  /**
   * How long one statement may take before the call fails and its connection is dropped, ms
   * (a server that vanished without closing the connection). Default: 120,000.
   */
  queryTimeoutMs?: number;
}

/**
 * A failed call of the PostgreSQL backend. The message says what failed, names the server
 * without its password, and quotes the driver's reason (password masked). The driver's error
 * is deliberately not kept as `cause`: some carry the raw connection string (e.g. a URL parse
 * error's `input`), and loggers print causes.
 */
export class PostgresHistoryError extends Error {
  /** True when the server could not be reached or the connection broke (worth retrying). */
  readonly unreachable: boolean;
  /** SQLSTATE of a server error (e.g. `28P01`) or Node's code (e.g. `ECONNREFUSED`). */
  readonly code: string | undefined;

  constructor(message: string, unreachable: boolean, code?: string) {
    super(message);
    this.name = 'PostgresHistoryError';
    this.unreachable = unreachable;
    this.code = code;
  }
}

/** How often partitions ahead are checked and created, ms. */
const upkeepIntervalMs = 3_600_000;
/** Samples per INSERT statement (bounded parameter size; all in one transaction). */
const insertChunk = 10_000;

/**
 * Creates the PostgreSQL backend; nothing connects before {@link HistoryBackend.start}.
 * Defaults: one partition per day, two partitions ahead, four connections.
 */
export function createPostgresBackend(options: PostgresBackendOptions): HistoryBackend {
  return new PostgresBackend(options);
}

const { Pool } = pg;

/** Node and PostgreSQL error codes of a lost or refused connection. */
const connectionCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down)
]);

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (connectionCodes.has(code) || code.startsWith('08'))) {
    return true;
  }
  const message = error instanceof Error ? error.message : String(error);
  return /Connection terminated|connection timeout|timeout expired|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|not queryable/i.test(
    message,
  );
}

class PostgresBackend implements HistoryBackend {
  private pool: pg.Pool | undefined;
  private mode: PostgresHistoryMode = 'partitioned';
  private partitions: PartitionInfo[] = [];
  private readonly tagCache = new Map<string, number>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private upkeepTimer: TimerHandle | undefined;
  private upkeepRunning = false;
  /** Set from stop() until the pool is closed: new calls are refused. */
  private closing = false;
  private stopping: Promise<void> | undefined;
  private readonly partitionMs: number;
  private readonly partitionsAhead: number;
  private readonly maskedUrl: string;
  private readonly logger: Logger;

  constructor(private readonly options: PostgresBackendOptions) {
    const days = options.partitionDays ?? 1;
    if (!Number.isInteger(days) || days < 1) {
      throw new RangeError(`partitionDays must be a whole number ≥ 1, not ${days}`);
    }
    const ahead = options.partitionsAhead ?? 2;
    if (!Number.isInteger(ahead) || ahead < 0) {
      throw new RangeError(`partitionsAhead must be a whole number ≥ 0, not ${ahead}`);
    }
    this.partitionMs = days * dayMs;
    this.partitionsAhead = ahead;
    this.maskedUrl = maskPostgresUrl(options.url);
    this.logger = options.logger;
  }

  async start(): Promise<void> {
    if (this.pool !== undefined) return;
    const pool = new Pool({
      connectionString: this.options.url,
      max: this.options.poolSize ?? 4,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 10_000,
      query_timeout: this.options.queryTimeoutMs ?? 120_000,
      idleTimeoutMillis: 30_000,
      application_name: 'tagd',
      keepAlive: true,
      keepAliveInitialDelayMillis: 30_000,
    });
    // A connection that breaks (server restart, network) emits 'error'; without listeners
    // that would crash the process. The pool drops the connection; the next call reconnects.
    pool.on('error', (error) => this.connectionLost(error));
    pool.on('connect', (client) => client.on('error', (error) => this.connectionLost(error)));
    this.pool = pool;
    try {
      const client = await this.connect('start');
      try {
        this.mode = await setUpSchema(client, this.partitionMs, this.logger);
        if (this.mode === 'partitioned') await this.createAhead(client);
      } finally {
        client.release();
      }
    } catch (error) {
      this.pool = undefined;
      await pool.end().catch(() => undefined);
      throw this.wrap(error, 'start');
    }
    this.upkeepTimer = this.options.clock.setInterval(() => this.upkeep(), upkeepIntervalMs);
    this.logger.info(
      {
        url: this.maskedUrl,
        mode: this.mode,
        partitionDays: this.partitionMs / dayMs,
        partitionsAhead: this.partitionsAhead,
      },
      'postgres history ready',
    );
  }

  stop(): Promise<void> {
    this.stopping ??= this.close().finally(() => {
      this.stopping = undefined;
    });
    return this.stopping;
  }

  private async close(): Promise<void> {
    const pool = this.pool;
    if (pool === undefined) return;
    this.closing = true;
    this.options.clock.clearTimer(this.upkeepTimer);
    this.upkeepTimer = undefined;
    try {
      // Pending appends finish first (their outcome is their callers' business).
      await Promise.allSettled([...this.inFlight]);
      this.pool = undefined;
      await pool.end();
    } finally {
      this.closing = false;
    }
    this.logger.info({ url: this.maskedUrl }, 'postgres history closed');
  }

  append(samples: readonly LoggedSample[]): Promise<void> {
    return this.track('append', async () => {
      const refused = samples.find((sample) => !this.storable(sample.epochMs));
      if (refused !== undefined) {
        throw new PostgresHistoryError(
          `postgres history append failed on ${this.maskedUrl}: the time ` +
            `${describeTime(refused.epochMs)} of ${refused.fullTagId} cannot be stored ` +
            '(partitions cover years 1 to 9999)',
          false,
          '22008', // datetime_field_overflow
        );
      }
      if (samples.length === 0) return;
      for (let attempt = 1; ; attempt++) {
        const client = await this.connect('append');
        const progress = { commitSent: false };
        let failure: unknown;
        try {
          if (this.mode === 'partitioned') await this.partitionsFor(client, samples);
          await this.insert(client, samples, progress);
          return;
        } catch (error) {
          failure = error;
          if (attempt > 1) throw error;
          // 23514: no partition for a row (dropped meanwhile by another gateway's retention).
          if ((error as { code?: string }).code === '23514') this.partitions = [];
          // A connection found dead before COMMIT (the server restarted while it sat idle in
          // the pool): the server rolled the transaction back, so one more try is safe. Lost
          // during COMMIT, the outcome is unknown and the caller decides.
          else if (!isConnectionError(error) || progress.commitSent) throw error;
        } finally {
          client.release(failure instanceof Error ? failure : undefined);
        }
      }
    });
  }

  /** True when a sample time fits the table (and, partitioned, a partition within years 1–9999). */
  private storable(epochMs: number): boolean {
    return (
      storable(epochMs) && (this.mode !== 'partitioned' || partitionable(epochMs, this.partitionMs))
    );
  }

  raw(query: RawQuery): Promise<StoredSample[]> {
    return this.track('raw', () =>
      this.read(async (client) => {
        const ids = await this.resolveTags(client, query.tagIds);
        const out: StoredSample[] = [];
        for (const fullTagId of query.tagIds) {
          const left = query.limit - out.length;
          if (left <= 0) break;
          const id = ids.get(fullTagId);
          if (id === undefined) continue;
          const result = await client.query<PgSampleRow>(
            rawSql(seqBounds(query)),
            rangeParameters(id, query, left),
          );
          for (const row of result.rows) out.push(decodeSample(fullTagId, row));
        }
        return out;
      }),
    );
  }

  aggregate(query: AggregateQuery): Promise<AggregateValue[]> {
    if (!(query.windowMs >= 1)) {
      return Promise.reject(new RangeError(`windowMs must be ≥ 1, not ${query.windowMs}`));
    }
    return this.track('aggregate', () =>
      this.read(async (client) => {
        const ids = await this.resolveTags(client, query.tagIds);
        const out: AggregateValue[] = [];
        for (const fullTagId of query.tagIds) {
          const left = query.limit - out.length;
          if (left <= 0) break;
          const id = ids.get(fullTagId);
          if (id === undefined) continue;
          const result = await client.query<PgAggregateRow>(
            aggregateSql(query.fn, seqBounds(query)),
            rangeParameters(id, query, left, `${query.windowMs} milliseconds`),
          );
          for (const row of result.rows) out.push(decodeAggregate(fullTagId, query.fn, row));
        }
        return out;
      }),
    );
  }

  count(range: HistoryRange & { afterSeq?: string }): Promise<number> {
    return this.track('count', () =>
      this.read(async (client) => {
        const ids = await this.resolveTags(client, range.tagIds);
        if (ids.size === 0) return 0;
        const after = range.afterSeq !== undefined;
        const result = await client.query<{ tag_id: number; n: number }>(
          `SELECT tag_id, count(*)::float8 AS n FROM ${tables.samples}
           WHERE tag_id = ANY($1::int[]) AND time >= $2::timestamptz AND time <= $3::timestamptz
           ${after ? 'AND seq > $4::bigint' : ''} GROUP BY tag_id`,
          [
            [...ids.values()],
            pgTime(range.startMs),
            pgTime(range.stopMs),
            ...(after ? [range.afterSeq] : []),
          ],
        );
        const perTag = new Map(result.rows.map((row) => [row.tag_id, row.n]));
        // A tag listed twice is read twice by raw(), so it counts twice here too.
        let total = 0;
        for (const fullTagId of range.tagIds) total += perTag.get(ids.get(fullTagId) ?? -1) ?? 0;
        return total;
      }),
    );
  }

  tagIds(pattern: string): Promise<string[]> {
    let matches: (fullTagId: string) => boolean;
    try {
      matches = compileTagPattern(pattern);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.track('tagIds', () =>
      this.read(async (client) => {
        // Narrow by the literal segments before the first wildcard, then match in JS.
        const segments = pattern.split('/');
        const firstWild = segments.findIndex((s) => s === '*' || s === '**');
        const prefix = isPattern(pattern) ? segments.slice(0, firstWild).join('/') : pattern;
        const names = await client.query<{ id: number; full_tag_id: string }>(
          prefix === ''
            ? `SELECT id, full_tag_id FROM ${tables.tags}`
            : `SELECT id, full_tag_id FROM ${tables.tags}
               WHERE full_tag_id = $1 OR starts_with(full_tag_id, $1 || '/')`,
          prefix === '' ? [] : [prefix],
        );
        const candidates = names.rows.filter((row) => matches(row.full_tag_id));
        if (candidates.length === 0) return [];
        // Only tags that still have samples (retention may have removed all of a tag's).
        const logged = await client.query<{ full_tag_id: string }>(
          `SELECT t.full_tag_id FROM ${tables.tags} t WHERE t.id = ANY($1::int[])
           AND EXISTS (SELECT 1 FROM ${tables.samples} s WHERE s.tag_id = t.id)`,
          [candidates.map((row) => row.id)],
        );
        return logged.rows.map((row) => row.full_tag_id).sort();
      }),
    );
  }

  lastSeq(): Promise<string> {
    return this.track('lastSeq', () =>
      this.read(async (client) => {
        const result = await client.query<{ last_seq: string }>(
          `SELECT last_seq::text AS last_seq FROM ${tables.state} WHERE id = 1`,
        );
        return result.rows[0]?.last_seq ?? '0';
      }),
    );
  }

  deleteBefore(beforeMs: number): Promise<number | undefined> {
    return this.track('deleteBefore', async () => {
      const client = await this.connect('deleteBefore');
      let failure: unknown;
      try {
        let dropped: string[];
        if (this.mode === 'timescaledb') {
          const result = await client.query<{ chunk: string }>(
            `SELECT drop_chunks('${tables.samples}', older_than => $1::timestamptz) AS chunk`,
            [pgTime(beforeMs)],
          );
          dropped = result.rows.map((row) => row.chunk);
        } else {
          dropped = await dropPartitionsBefore(client, beforeMs);
          this.partitions = await listPartitions(client);
        }
        // The partition (or chunk) the cut-off falls in: row by row.
        const deleted = await client.query(
          `DELETE FROM ${tables.samples} WHERE time < $1::timestamptz`,
          [pgTime(beforeMs)],
        );
        const level = dropped.length > 0 || deleted.rowCount ? 'info' : 'debug';
        this.logger[level](
          { before: pgTime(beforeMs), dropped, deletedRows: deleted.rowCount },
          'postgres history retention',
        );
        // Rows of dropped partitions are not counted (that would mean scanning them).
        return dropped.length === 0 ? (deleted.rowCount ?? 0) : undefined;
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        client.release(failure instanceof Error ? failure : undefined);
      }
    });
  }

  /** Runs `work` as a tracked call: stop() waits for it; errors come out wrapped and masked. */
  private track<T>(action: string, work: () => Promise<T>): Promise<T> {
    if (this.pool === undefined || this.closing) {
      return Promise.reject(new Error(`postgres history is not started (${action})`));
    }
    const promise = work().catch((error: unknown) => {
      throw this.wrap(error, action);
    });
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(settled);
    void settled.then(() => this.inFlight.delete(settled));
    return promise;
  }

  /**
   * Runs a read on one pooled connection. A connection found dead (the server restarted while
   * it was idle) is dropped and the read tried once more on a fresh one: reads are idempotent.
   */
  private async read<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect('read');
      let failure: unknown;
      try {
        return await work(client);
      } catch (error) {
        failure = error;
        if (attempt === 1 && isConnectionError(error)) continue;
        throw error;
      } finally {
        client.release(failure instanceof Error ? failure : undefined);
      }
    }
  }

  private async connect(action: string): Promise<pg.PoolClient> {
    const pool = this.pool;
    if (pool === undefined) throw new Error(`postgres history is not started (${action})`);
    return pool.connect();
  }

  /** One append transaction (see the file comment). */
  private async insert(
    client: pg.PoolClient,
    rows: readonly LoggedSample[],
    progress: { commitSent: boolean },
  ): Promise<void> {
    let committed = new Map<string, number>();
    await client.query('BEGIN');
    try {
      // Serializes appenders until commit, so seq order is commit order (Delta polls).
      await client.query(`SELECT last_seq FROM ${tables.state} WHERE id = 1 FOR UPDATE`);
      const { ids, learnt } = await this.tagIdsFor(client, rows);
      committed = learnt;
      for (let from = 0; from < rows.length; from += insertChunk) {
        const chunk = rows.slice(from, from + insertChunk);
        const tagIds: number[] = [];
        const times: number[] = [];
        const qualities: string[] = [];
        const reasons: (string | null)[] = [];
        const nums: (number | null)[] = [];
        const flags: (boolean | null)[] = [];
        const texts: (string | null)[] = [];
        for (const sample of chunk) {
          tagIds.push(ids.get(sample.fullTagId) as number);
          times.push(sample.epochMs);
          qualities.push(sample.quality);
          reasons.push(sample.reason ?? null);
          const value = sample.value;
          nums.push(typeof value === 'number' ? value : null);
          flags.push(typeof value === 'boolean' ? value : null);
          texts.push(typeof value === 'string' ? withoutNul(value) : null);
        }
        // ORDER BY ord: seq is drawn in array order, i.e. append order.
        await client.query(
          `INSERT INTO ${tables.samples} (tag_id, time, quality, reason, num, flag, txt)
           SELECT u.tag_id, 'epoch'::timestamptz + u.ms * interval '1 millisecond',
                  u.quality, u.reason, u.num, u.flag, u.txt
           FROM unnest($1::int[], $2::float8[], $3::text[], $4::text[], $5::float8[],
                       $6::bool[], $7::text[])
                WITH ORDINALITY AS u(tag_id, ms, quality, reason, num, flag, txt, ord)
           ORDER BY u.ord`,
          [tagIds, times, qualities, reasons, nums, flags, texts],
        );
      }
      await client.query(
        `UPDATE ${tables.state} SET last_seq = currval('${tables.sequence}') WHERE id = 1`,
      );
      progress.commitSent = true;
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    // Ids learnt inside the transaction are kept only once it committed.
    for (const [name, id] of committed) this.tagCache.set(name, id);
  }

  /**
   * Dictionary ids of the batch's tags, adding unknown tags (inside the append transaction);
   * `learnt` are the ids that were not cached.
   */
  private async tagIdsFor(
    client: pg.PoolClient,
    rows: readonly LoggedSample[],
  ): Promise<{ ids: Map<string, number>; learnt: Map<string, number> }> {
    const learnt = new Map<string, number>();
    const ids = new Map<string, number>();
    const unknown = new Set<string>();
    for (const { fullTagId } of rows) {
      const id = this.tagCache.get(fullTagId);
      if (id === undefined) unknown.add(fullTagId);
      else ids.set(fullTagId, id);
    }
    if (unknown.size > 0) {
      const names = [...unknown];
      await client.query(
        `INSERT INTO ${tables.tags} (full_tag_id) SELECT unnest($1::text[])
         ON CONFLICT (full_tag_id) DO NOTHING`,
        [names],
      );
      const found = await client.query<{ id: number; full_tag_id: string }>(
        `SELECT id, full_tag_id FROM ${tables.tags} WHERE full_tag_id = ANY($1::text[])`,
        [names],
      );
      for (const row of found.rows) {
        ids.set(row.full_tag_id, row.id);
        learnt.set(row.full_tag_id, row.id);
      }
    }
    return { ids, learnt };
  }

  /** Dictionary ids of tags to read; tags never logged are left out. */
  private async resolveTags(
    client: pg.PoolClient,
    fullTagIds: readonly string[],
  ): Promise<Map<string, number>> {
    const ids = new Map<string, number>();
    const unknown: string[] = [];
    for (const fullTagId of new Set(fullTagIds)) {
      const id = this.tagCache.get(fullTagId);
      if (id === undefined) unknown.push(fullTagId);
      else ids.set(fullTagId, id);
    }
    if (unknown.length > 0) {
      const found = await client.query<{ id: number; full_tag_id: string }>(
        `SELECT id, full_tag_id FROM ${tables.tags} WHERE full_tag_id = ANY($1::text[])`,
        [unknown],
      );
      for (const row of found.rows) {
        ids.set(row.full_tag_id, row.id);
        this.tagCache.set(row.full_tag_id, row.id);
      }
    }
    return ids;
  }

  /** Makes sure a partition holds every sample of the batch (creating missing ones). */
  private async partitionsFor(client: pg.PoolClient, rows: readonly LoggedSample[]) {
    const spans = new Map<number, { min: number; max: number }>();
    for (const { epochMs } of rows) {
      const start = partitionStart(epochMs, this.partitionMs);
      const span = spans.get(start);
      if (span === undefined) spans.set(start, { min: epochMs, max: epochMs });
      else {
        span.min = Math.min(span.min, epochMs);
        span.max = Math.max(span.max, epochMs);
      }
    }
    const missing = () =>
      [...spans].filter(([, span]) => !covered(this.partitions, span.min, span.max));
    if (missing().length === 0) return;
    this.partitions = await listPartitions(client);
    const starts = missing().map(([start]) => start);
    if (starts.length === 0) return;
    await this.create(client, starts, 'on demand');
  }

  /** Creates the current partition and `partitionsAhead` after it, when missing. */
  private async createAhead(client: pg.PoolClient): Promise<void> {
    this.partitions = await listPartitions(client);
    const current = partitionStart(this.options.clock.now(), this.partitionMs);
    const starts: number[] = [];
    for (let i = 0; i <= this.partitionsAhead; i++) {
      const start = current + i * this.partitionMs;
      if (!covered(this.partitions, start, start + this.partitionMs - 1)) starts.push(start);
    }
    await this.create(client, starts, 'ahead');
  }

  private async create(client: pg.PoolClient, starts: number[], why: string): Promise<void> {
    if (starts.length === 0) return;
    const created = await createPartitions(client, starts, this.partitionMs);
    this.partitions = await listPartitions(client);
    if (created.length > 0) this.logger.info({ created, why }, 'postgres history partitions');
  }

  /** The hourly upkeep: partitions ahead. Failures are logged; the next run tries again. */
  private upkeep(): void {
    if (this.mode !== 'partitioned' || this.upkeepRunning || this.pool === undefined) return;
    if (this.closing) return;
    this.upkeepRunning = true;
    this.track('partition upkeep', async () => {
      const client = await this.connect('partition upkeep');
      let failure: unknown;
      try {
        await this.createAhead(client);
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        client.release(failure instanceof Error ? failure : undefined);
      }
    })
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'postgres history partition upkeep failed');
      })
      .finally(() => {
        this.upkeepRunning = false;
      });
  }

  private connectionLost(error: Error): void {
    this.logger.debug(
      { reason: maskPassword(error.message, this.options.url) },
      'postgres history connection lost',
    );
  }

  /** The error as thrown to callers: what failed, where (password masked), why. */
  private wrap(error: unknown, action: string): Error {
    if (error instanceof PostgresHistoryError || error instanceof RangeError) return error;
    const reason = maskPassword(
      error instanceof Error ? error.message : String(error),
      this.options.url,
    );
    const unreachable = isConnectionError(error);
    const message = unreachable
      ? `postgres history ${action}: cannot reach ${this.maskedUrl}: ${reason}`
      : `postgres history ${action} failed on ${this.maskedUrl}: ${reason}`;
    const code = (error as { code?: unknown } | undefined)?.code;
    return new PostgresHistoryError(
      message,
      unreachable,
      typeof code === 'string' ? code : undefined,
    );
  }
}

/** Which seq bounds a read has (its SQL and parameters follow them). */
function seqBounds(range: { afterSeq?: string; maxSeq?: string }): SeqBounds {
  return { after: range.afterSeq !== undefined, upTo: range.maxSeq !== undefined };
}

/** The text without U+0000, which PostgreSQL's `text` cannot hold. */
function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
}

/** A sample time for a message: ISO 8601 when it is a date, else the number. */
function describeTime(epochMs: number): string {
  const date = new Date(epochMs);
  return Number.isNaN(date.getTime()) ? String(epochMs) : date.toISOString();
}

/**
 * Parameters of the per-tag range reads: $1 tag id, $2 start, $3 stop, $4 limit, $5 window
 * (aggregates), then afterSeq and maxSeq when given.
 */
function rangeParameters(
  tagId: number,
  range: HistoryRange & { afterSeq?: string; maxSeq?: string },
  limit: number,
  window?: string,
): unknown[] {
  const parameters: unknown[] = [tagId, pgTime(range.startMs), pgTime(range.stopMs), limit];
  if (window !== undefined) parameters.push(window);
  if (range.afterSeq !== undefined) parameters.push(range.afterSeq);
  if (range.maxSeq !== undefined) parameters.push(range.maxSeq);
  return parameters;
}
