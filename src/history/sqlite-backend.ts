/**
 * The embedded history backend: one SQLite file (better-sqlite3, WAL) in the state directory.
 *
 * Table `samples`: `seq` (the rowid; positions never go back: retention records the highest
 * position it deleted in `meta`, and the next append continues above it), the tag, integer epoch milliseconds, quality,
 * value kind and value, reason. An index on (tag, t) serves ranges; the rowid serves Delta
 * reads (`seq > afterSeq`). The tag is an integer id from a small `tags` table (id, path): an
 * integer index key makes appends about a quarter faster than the path itself. Aggregates are
 * computed in SQL, one indexed read per epoch-aligned window.
 */
import { closeSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { type Clock, systemClock } from '../clock.js';
import type { Quality, QualityReason, TagValue } from '../tags/sample.js';
import { compileTagPattern } from '../tags/tag-pattern.js';
import type {
  AggregateQuery,
  AggregateValue,
  DeleteOptions,
  HistoryBackend,
  HistoryRange,
  LoggedSample,
  RawQuery,
  StoredSample,
} from './history-backend.js';
import { SqliteCheckpoints } from './sqlite-checkpoints.js';

/** SQLite's `PRAGMA synchronous` levels a profile may choose (see docs/history.md for loss windows). */
export type SqliteSynchronous = 'off' | 'normal' | 'full';

/** Options of {@link createSqliteBackend}. */
export interface SqliteBackendOptions {
  /** Path of the database file; created when missing. */
  file: string;
  /** Durability: `off` (fastest), `normal` (default; WAL survives a process crash), `full`. */
  synchronous?: SqliteSynchronous;
  logger: Logger;
  /**
   * Most rows one retention statement deletes; retention yields to the event loop between
   * statements, so drivers and the API run while a big backlog is deleted. Default 10,000.
   */
  deleteChunkRows?: number;
  /**
   * Most time from a commit to the WAL checkpoint that covers it, ms: with `synchronous=normal`,
   * about the commits a power cut may roll back. Default 1,000 (see sqlite-checkpoints.ts).
   */
  checkpointIntervalMs?: number;
  /** Time and timers of the checkpoint interval. Default: the system clock. */
  clock?: Clock;
}

const qualityCodes: Record<Quality, number> = { Good: 0, Stale: 1, Unavailable: 2, Bad: 3 };
const qualityNames: readonly Quality[] = ['Good', 'Stale', 'Unavailable', 'Bad'];

/** Value kinds in column `k`: none, number, boolean (stored 0/1), string. */
const kindNone = 0;
const kindNumber = 1;
const kindBoolean = 2;
const kindString = 3;

interface SampleRow {
  seq: number;
  t: number;
  q: number;
  k: number;
  v: number | string | null;
  reason: string | null;
}

interface AggregateRow {
  w: number;
  /** Samples that went into the value. */
  n: number;
  /** The aggregate, or the value (with `k`) of the first/last sample. */
  a: number | string | null;
  k: number | null;
}

// A sample counts for aggregates when it is Good or Stale (q < 2) and carries a value.
const usable = 'q < 2 AND k > 0';
const numeric = `q < 2 AND k IN (${kindNumber}, ${kindBoolean})`;

/** `n` = the samples a function of numbers uses, `a` = its value. */
function numericColumns(fn: 'AVG' | 'MIN' | 'MAX' | 'SUM'): string {
  return (
    `COUNT(CASE WHEN ${numeric} THEN 1 END) AS n, ` +
    `${fn}(CASE WHEN ${numeric} THEN v END) AS a, NULL AS k`
  );
}

/** The samples Count, First and Last use: every usable one. */
const usableN = `COUNT(CASE WHEN ${usable} THEN 1 END) AS n`;
const usableCount = `${usableN}, NULL AS a, NULL AS k`;

/** The SELECT list of one window's aggregate per function: `n` = samples used, `a` = value. */
const aggregateColumns: Record<AggregateQuery['fn'], string> = {
  Avg: numericColumns('AVG'),
  Min: numericColumns('MIN'),
  Max: numericColumns('MAX'),
  Sum: numericColumns('SUM'),
  Count: usableCount,
  // First and Last take their value from a second, ordered read of the window.
  First: usableCount,
  Last: usableCount,
};

/** The SELECT list of a GROUP BY aggregate (Delta reads), per function. */
const groupedColumns: Record<AggregateQuery['fn'], string> = {
  ...aggregateColumns,
  // SQLite's bare-column rule: with exactly one min()/max() in the SELECT, the bare columns
  // (v, k) come from the row that holds it, so First/Last need no second pass.
  First: `${usableN}, MIN(CASE WHEN ${usable} THEN t END) AS ft, v AS a, k`,
  Last: `${usableN}, MAX(CASE WHEN ${usable} THEN t END) AS ft, v AS a, k`,
};

/** The largest rowid: the upper seq bound of a read without `maxSeq`. */
const lastRowid = 2n ** 63n - 1n;

/**
 * A read's inclusive upper seq bound. Always bound (by the largest rowid when absent), so one
 * statement serves both; rowids are in every index entry, so the check costs no extra lookup.
 */
function seqBound(maxSeq: string | undefined): bigint {
  return maxSeq === undefined ? lastRowid : BigInt(maxSeq);
}

/** Creates the SQLite backend; nothing is opened before {@link HistoryBackend.start}. */
export function createSqliteBackend(options: SqliteBackendOptions): HistoryBackend {
  return new SqliteBackend(options);
}

type Statement = Database.Statement<unknown[], unknown>;
/** {@link SqliteBackend.appendInTransaction} wrapped in a transaction. */
type AppendRows = (samples: readonly LoggedSample[], added: string[]) => void;

/**
 * Creates the database file with mode 0600 when it does not exist yet: SQLite gives the -wal and
 * -shm files the main file's mode, and history is plant data other local users have no business
 * reading. Failures are left to SQLite, whose message names the problem (a missing folder).
 */
function createOwnerOnly(file: string): void {
  try {
    closeSync(openSync(file, 'a', 0o600));
  } catch {
    // Reported by the open that follows.
  }
}

class SqliteBackend implements HistoryBackend {
  private db: Database.Database | undefined;
  private insert: Statement | undefined;
  private insertTag: Statement | undefined;
  private insertAt: Statement | undefined;
  private appendRows: AppendRows | undefined;
  private checkpoints: SqliteCheckpoints | undefined;
  /** Tag path → id in `tags`, as committed. */
  private readonly tagIdsByPath = new Map<string, number>();
  /** The highest position retention ever deleted (0: none); appends continue above it. */
  private highWater = 0;
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly options: SqliteBackendOptions) {}

  async start(): Promise<void> {
    if (this.db !== undefined) return;
    let db: Database.Database;
    try {
      createOwnerOnly(this.options.file);
      db = new Database(this.options.file);
    } catch (error) {
      throw new Error(
        `Cannot open the history database ${this.options.file}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    try {
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${this.options.synchronous ?? 'normal'}`);
      db.exec(`
        CREATE TABLE IF NOT EXISTS samples (
          seq INTEGER PRIMARY KEY,
          tag INTEGER NOT NULL,
          t INTEGER NOT NULL,
          q INTEGER NOT NULL,
          k INTEGER NOT NULL,
          v,
          reason TEXT
        );
        CREATE INDEX IF NOT EXISTS samples_tag_t ON samples (tag, t);
        CREATE TABLE IF NOT EXISTS tags (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
      `);
    } catch (error) {
      db.close();
      throw error;
    }
    this.db = db;
    this.insert = db.prepare(
      'INSERT INTO samples (tag, t, q, k, v, reason) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.insertTag = db.prepare('INSERT INTO tags (path) VALUES (?)');
    this.appendRows = db.transaction((samples: readonly LoggedSample[], added: string[]) =>
      this.appendInTransaction(samples, added),
    );
    this.insertAt = db.prepare(
      'INSERT INTO samples (seq, tag, t, q, k, v, reason) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.checkpoints = new SqliteCheckpoints(db, {
      intervalMs: this.options.checkpointIntervalMs,
      clock: this.options.clock ?? systemClock,
      logger: this.options.logger,
    });
    this.loadTags();
    this.highWater =
      (
        db.prepare("SELECT value FROM meta WHERE key = 'highWater'").get() as
          | { value: number }
          | undefined
      )?.value ?? 0;
    this.options.logger.info(
      { file: this.options.file, synchronous: this.options.synchronous ?? 'normal' },
      'sqlite history opened',
    );
  }

  async stop(): Promise<void> {
    const db = this.db;
    if (db === undefined) return;
    this.db = undefined;
    this.insert = undefined;
    this.insertTag = undefined;
    this.insertAt = undefined;
    this.appendRows = undefined;
    this.checkpoints?.stop();
    this.checkpoints = undefined;
    this.tagIdsByPath.clear();
    this.statements.clear();
    // No checkpoint of our own: closing the last connection (tagd opens only this one)
    // checkpoints the whole WAL, fsyncs and deletes the -wal file.
    db.close();
  }

  async append(samples: readonly LoggedSample[]): Promise<void> {
    this.open();
    const added: string[] = [];
    try {
      (this.appendRows as AppendRows)(samples, added);
    } catch (error) {
      // Rolled back: so were the tag ids it created.
      for (const path of added) this.tagIdsByPath.delete(path);
      throw error;
    }
    (this.checkpoints as SqliteCheckpoints).afterCommit();
  }

  /**
   * The body of {@link append}, run as one transaction (wrapped once at start, not per call).
   * One prepared single-row INSERT per sample: measured against a 50-row multi-row INSERT and
   * a `json_each` INSERT … SELECT of the whole batch, it costs the least CPU per row (the
   * multi-row form about 75 % more): the time goes to SQLite's B-tree and WAL work, not to the
   * calls.
   */
  private appendInTransaction(samples: readonly LoggedSample[], added: string[]): void {
    const insert = this.insert as Statement;
    const ids = this.tagIdsByPath;
    // Plain rowids (no AUTOINCREMENT, which costs a bookkeeping write per row) could go
    // back after retention deleted the newest rows: continue above the recorded mark.
    let first = 0;
    const floor = this.highWater;
    if (floor > 0 && floor > this.maxSeq()) {
      const s = samples[0];
      if (s !== undefined) {
        const tag = this.tagIdOf(s.fullTagId, added);
        (this.insertAt as Statement).run(
          floor + 1,
          tag,
          s.epochMs,
          qualityCodes[s.quality],
          kindOf(s.value),
          storedValue(s.value),
          s.reason ?? null,
        );
        first = 1;
      }
    }
    for (let i = first; i < samples.length; i++) {
      const s = samples[i] as LoggedSample;
      const value = s.value;
      let tag = ids.get(s.fullTagId);
      if (tag === undefined) tag = this.tagIdOf(s.fullTagId, added);
      insert.run(
        tag,
        s.epochMs,
        qualityCodes[s.quality],
        kindOf(value),
        storedValue(value),
        s.reason ?? null,
      );
    }
  }

  async raw(query: RawQuery): Promise<StoredSample[]> {
    const statement = this.prepare(
      query.afterSeq === undefined ? 'raw' : 'rawAfter',
      query.afterSeq === undefined
        ? 'SELECT seq, t, q, k, v, reason FROM samples WHERE tag = ? AND t BETWEEN ? AND ? ' +
            'AND seq <= ? ORDER BY t, seq LIMIT ?'
        : // Delta: few new rows, so walk the rowid from the position rather than the range.
          'SELECT seq, t, q, k, v, reason FROM samples NOT INDEXED WHERE seq > ? AND seq <= ? ' +
            'AND tag = ? AND t BETWEEN ? AND ? ORDER BY t, seq LIMIT ?',
    );
    const upTo = seqBound(query.maxSeq);
    const out: StoredSample[] = [];
    for (const path of query.tagIds) {
      const left = query.limit - out.length;
      if (left <= 0) break;
      const tag = this.tagIdsByPath.get(path);
      if (tag === undefined) continue;
      const rows = (
        query.afterSeq === undefined
          ? statement.all(tag, query.startMs, query.stopMs, upTo, left)
          : statement.all(BigInt(query.afterSeq), upTo, tag, query.startMs, query.stopMs, left)
      ) as SampleRow[];
      for (const row of rows) out.push(decodeRow(path, row));
    }
    return out;
  }

  async aggregate(query: AggregateQuery): Promise<AggregateValue[]> {
    const out: AggregateValue[] = [];
    for (const path of query.tagIds) {
      const left = query.limit - out.length;
      if (left <= 0) break;
      const tag = this.tagIdsByPath.get(path);
      if (tag === undefined) continue;
      const rows =
        query.afterSeq === undefined
          ? this.aggregateByWindow(tag, query, left)
          : this.aggregateGrouped(tag, query, BigInt(query.afterSeq), left);
      for (const row of rows) {
        const item: AggregateValue = { fullTagId: path, windowStartMs: row.w, count: row.n };
        if (row.n > 0) {
          if (query.fn === 'Count') item.value = row.n;
          else if (query.fn === 'First' || query.fn === 'Last') {
            item.value = decodeValue(row.k ?? kindNone, row.a);
          } else if (row.a !== null) item.value = Number(row.a);
        }
        out.push(item);
      }
    }
    return out;
  }

  /**
   * One indexed range read per window, skipping empty stretches with a seek to the next
   * sample. Faster than GROUP BY over a dense range (no temporary sort of every row: one day of
   * a 1 s series to 1-minute windows is 1,440 short reads), bounded by `limit` windows on a
   * huge one, and cheap on a sparse one (two reads per window that holds samples).
   */
  private aggregateByWindow(tag: number, query: AggregateQuery, limit: number): AggregateRow[] {
    const fn = query.fn;
    const stats = this.prepare(
      `window:${fn}`,
      `SELECT COUNT(*) AS total, ${aggregateColumns[fn]} FROM samples ` +
        'WHERE tag = ? AND t BETWEEN ? AND ? AND seq <= ?',
    );
    const pick =
      fn === 'First' || fn === 'Last'
        ? this.prepare(
            `pick:${fn}`,
            `SELECT k, v FROM samples WHERE tag = ? AND t BETWEEN ? AND ? AND seq <= ? ` +
              `AND ${usable} ` +
              (fn === 'First' ? 'ORDER BY t, seq LIMIT 1' : 'ORDER BY t DESC, seq DESC LIMIT 1'),
          )
        : undefined;
    const next = this.prepare(
      'nextTime',
      'SELECT MIN(t) AS t FROM samples WHERE tag = ? AND t BETWEEN ? AND ? AND seq <= ?',
    );
    const { windowMs, startMs, stopMs } = query;
    const upTo = seqBound(query.maxSeq);
    const rows: AggregateRow[] = [];
    let w = Math.floor(startMs / windowMs) * windowMs;
    while (w <= stopMs && rows.length < limit) {
      const from = Math.max(w, startMs);
      const to = Math.min(w + windowMs - 1, stopMs);
      const row = stats.get(tag, from, to, upTo) as AggregateRow & { total: number };
      if (row.total === 0) {
        const found = (next.get(tag, from, stopMs, upTo) as { t: number | null }).t;
        if (found === null) break;
        w = Math.floor(found / windowMs) * windowMs;
        continue;
      }
      if (pick !== undefined && row.n > 0) {
        const picked = pick.get(tag, from, to, upTo) as { k: number; v: number | string | null };
        row.k = picked.k;
        row.a = picked.v;
      }
      rows.push({ w, n: row.n, a: row.a, k: row.k });
      w += windowMs;
    }
    return rows;
  }

  /** Delta reads: GROUP BY over the few rows appended after a position (walked by rowid). */
  private aggregateGrouped(
    tag: number,
    query: AggregateQuery,
    after: bigint,
    limit: number,
  ): AggregateRow[] {
    // Floor division that stays right for times before 1970 too.
    const window = '(t - ((t % $w) + $w) % $w)';
    const statement = this.prepare(
      `grouped:${query.fn}`,
      `SELECT ${window} AS w, ${groupedColumns[query.fn]} FROM samples NOT INDEXED ` +
        'WHERE seq > $after AND seq <= $upTo AND tag = $tag AND t BETWEEN $start AND $stop ' +
        'GROUP BY w ORDER BY w LIMIT $limit',
    );
    return statement.all({
      w: query.windowMs,
      tag,
      start: query.startMs,
      stop: query.stopMs,
      after,
      upTo: seqBound(query.maxSeq),
      limit,
    }) as AggregateRow[];
  }

  async count(range: HistoryRange & { afterSeq?: string }): Promise<number> {
    const statement = this.prepare(
      range.afterSeq === undefined ? 'count' : 'countAfter',
      range.afterSeq === undefined
        ? 'SELECT COUNT(*) AS n FROM samples WHERE tag = ? AND t BETWEEN ? AND ?'
        : 'SELECT COUNT(*) AS n FROM samples NOT INDEXED ' +
            'WHERE seq > ? AND tag = ? AND t BETWEEN ? AND ?',
    );
    let total = 0;
    for (const path of range.tagIds) {
      const tag = this.tagIdsByPath.get(path);
      if (tag === undefined) continue;
      const row = (
        range.afterSeq === undefined
          ? statement.get(tag, range.startMs, range.stopMs)
          : statement.get(BigInt(range.afterSeq), tag, range.startMs, range.stopMs)
      ) as { n: number };
      total += row.n;
    }
    return total;
  }

  async tagIds(pattern: string): Promise<string[]> {
    const matches = compileTagPattern(pattern);
    return this.allTags().filter(matches);
  }

  async lastSeq(): Promise<string> {
    return String(Math.max(this.maxSeq(), this.highWater));
  }

  /**
   * Deletes in slices of `deleteChunkRows`, each its own transaction (better-sqlite3 is
   * synchronous: one statement deleting millions of rows would freeze the process for seconds).
   * Between slices it awaits `options.betweenSlices` (the logger's appends run there), or else
   * yields to the event loop. An aborted `options.signal` or a stop between slices ends it;
   * what was deleted so far is returned.
   */
  async deleteBefore(beforeMs: number, options: DeleteOptions = {}): Promise<number | undefined> {
    const db = this.open();
    const { signal, betweenSlices } = options;
    const chunk = Math.max(1, this.options.deleteChunkRows ?? 10_000);
    // Per tag, so each delete walks the (tag, t) index instead of the whole table.
    const statement = this.prepare(
      'deleteBefore',
      'DELETE FROM samples WHERE seq IN (SELECT seq FROM samples WHERE tag = ? AND t < ? LIMIT ?)',
    );
    const saveHighWater = this.prepare(
      'saveHighWater',
      "INSERT INTO meta (key, value) VALUES ('highWater', ?) " +
        'ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );
    const deleteChunk = db.transaction((tag: number): number => {
      const newest = this.maxSeq();
      const changes = statement.run(tag, beforeMs, chunk).changes;
      // The newest position went: record it, so appends continue above it (see append).
      if (changes > 0 && newest > this.highWater && this.maxSeq() < newest) {
        saveHighWater.run(newest);
        this.highWater = newest;
      }
      return changes;
    });
    const ended = () => signal?.aborted === true || this.db !== db;
    if (ended()) return 0;
    let deleted = 0;
    // Rows deleted since the last pause: many small tags share one, a big tag takes several.
    let sinceYield = 0;
    for (const tag of [...this.tagIdsByPath.values()]) {
      for (;;) {
        const changes = deleteChunk(tag);
        deleted += changes;
        sinceYield += changes;
        if (sinceYield >= chunk) {
          sinceYield = 0;
          if (betweenSlices !== undefined) await betweenSlices();
          else await new Promise((resolve) => setImmediate(resolve));
          if (ended()) return deleted;
        }
        if (changes < chunk) break;
      }
    }
    if (deleted > 0) {
      // A tag whose every sample is gone is no longer "logged" (tagIds must not list it).
      this.prepare(
        'forgetTags',
        'DELETE FROM tags WHERE NOT EXISTS (SELECT 1 FROM samples WHERE samples.tag = tags.id)',
      ).run();
      this.loadTags();
    }
    return deleted;
  }

  /** Every tag with logged samples, sorted (by UTF-16 code unit, as JS sorts). */
  private allTags(): string[] {
    return [...this.tagIdsByPath.keys()].sort();
  }

  /** The newest position still stored, 0 when none. */
  private maxSeq(): number {
    const row = this.prepare('maxSeq', 'SELECT MAX(seq) AS seq FROM samples').get() as {
      seq: number | null;
    };
    return row.seq ?? 0;
  }

  /** The id of a tag path, creating it (the caller's transaction undoes it on failure). */
  private tagIdOf(path: string, added: string[]): number {
    let id = this.tagIdsByPath.get(path);
    if (id === undefined) {
      id = Number((this.insertTag as Statement).run(path).lastInsertRowid);
      this.tagIdsByPath.set(path, id);
      added.push(path);
    }
    return id;
  }

  private loadTags(): void {
    this.tagIdsByPath.clear();
    const rows = this.prepare('loadTags', 'SELECT id, path FROM tags').all() as {
      id: number;
      path: string;
    }[];
    for (const row of rows) this.tagIdsByPath.set(row.path, row.id);
  }

  private open(): Database.Database {
    if (this.db === undefined) throw new Error('sqlite history is not started');
    return this.db;
  }

  private prepare(key: string, sql: string): Statement {
    let statement = this.statements.get(key);
    if (statement === undefined) {
      statement = this.open().prepare(sql);
      this.statements.set(key, statement);
    }
    return statement;
  }
}

/** The value kind stored in column `k` (see {@link storedValue}). */
function kindOf(value: TagValue | undefined): number {
  if (value === undefined) return kindNone;
  if (typeof value === 'number') return kindNumber;
  if (typeof value === 'boolean') return kindBoolean;
  return kindString;
}

/** The value stored in column `v`: booleans as 0/1, none as NULL. No tuple per row. */
function storedValue(value: TagValue | undefined): number | string | null {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

function decodeValue(kind: number, v: number | string | null): TagValue | undefined {
  if (kind === kindNumber) return Number(v);
  if (kind === kindBoolean) return Number(v) !== 0;
  if (kind === kindString) return String(v);
  return undefined;
}

function decodeRow(fullTagId: string, row: SampleRow): StoredSample {
  const sample: StoredSample = {
    fullTagId,
    epochMs: row.t,
    quality: qualityNames[row.q] ?? 'Bad',
    seq: String(row.seq),
  };
  const value = decodeValue(row.k, row.v);
  if (value !== undefined) sample.value = value;
  if (row.reason !== null) sample.reason = row.reason as QualityReason;
  return sample;
}
