/**
 * The contract of a history backend: where logged samples are
 * kept and how they are read back. Two implementations: `sqlite-backend.ts` (embedded,
 * better-sqlite3, WAL) and `postgres-backend.ts` (pg, time-partitioned table). Both run the
 * same test suite (test/history/backend-contract.ts).
 *
 * Deciding *what* to log, batching to one transaction per second, buffering while the backend
 * is slow or down and the retention schedule live above this interface (the history logger);
 * a backend only stores, reads and deletes.
 */
import type { Quality, QualityReason, TagValue } from '../tags/sample.js';

/** One logged sample as stored and read back. */
export interface LoggedSample {
  fullTagId: string;
  /** When the value was read, milliseconds since the UTC epoch. */
  epochMs: number;
  quality: Quality;
  /** Absent for Unavailable and Bad (and for a Stale sample of a tag never read). */
  value?: TagValue;
  reason?: QualityReason;
}

/** A logged sample read back with its place in the log, for Delta polls. */
export interface StoredSample extends LoggedSample {
  /**
   * Position in the log: strictly increasing in the order samples were appended by this
   * gateway, so "logged since the previous poll" is `seq > lastSeq`. A decimal string,
   * because PostgreSQL's bigint exceeds 2^53.
   */
  seq: string;
}

/** Functions of Aggregated series. */
export type AggregationFunction = 'Avg' | 'Min' | 'Max' | 'Sum' | 'Count' | 'First' | 'Last';

/** Which samples a query reads. */
export interface HistoryRange {
  /** Exact tag ids (patterns are resolved before, with {@link HistoryBackend.tagIds}). */
  tagIds: readonly string[];
  /** Inclusive start, epoch milliseconds. */
  startMs: number;
  /** Inclusive stop, epoch milliseconds. */
  stopMs: number;
}

/** A Raw read. */
export interface RawQuery extends HistoryRange {
  /** Only samples appended after this log position (Delta); absent = all in range. */
  afterSeq?: string;
  /**
   * Only samples appended up to this log position (inclusive), filtered before `limit` counts
   * rows: a read as of a position taken earlier, unaffected by appends landing meanwhile.
   * Absent = no upper bound.
   */
  maxSeq?: string;
  /**
   * Most rows to return. Callers pass their response limit + 1 to tell "exactly at the limit"
   * from "over it".
   */
  limit: number;
}

/** An Aggregated read: one value per tag and window that holds at least one sample. */
export interface AggregateQuery extends HistoryRange {
  /** Window length in milliseconds; windows are aligned to the UTC epoch (start % windowMs = 0). */
  windowMs: number;
  fn: AggregationFunction;
  /** Only samples appended after this log position (Delta); absent = all in range. */
  afterSeq?: string;
  /** Only samples appended up to this log position, as {@link RawQuery.maxSeq}. */
  maxSeq?: string;
  /** Most rows to return, as {@link RawQuery.limit}. */
  limit: number;
}

/**
 * One aggregated value. Bad and Unavailable samples are skipped: Count counts Good (and Stale)
 * numeric or boolean values; a window whose samples were all skipped has `value` absent and
 * `count` 0. Booleans count as 0/1 for Avg, Min, Max and Sum; strings are only counted and
 * taken by First and Last.
 */
export interface AggregateValue {
  fullTagId: string;
  /** Window start, epoch milliseconds. */
  windowStartMs: number;
  value?: TagValue;
  /** Samples that went into the value. */
  count: number;
}

/** A place logged samples are kept. */
export interface HistoryBackend {
  /** Opens the database and creates or migrates its tables; no samples are read here. */
  start(): Promise<void>;
  /** Closes the database; pending appends finish first. Idempotent. */
  stop(): Promise<void>;
  /**
   * Stores samples in one transaction: all or none. Samples of one tag may arrive out of order.
   * @throws when the database refuses or is unreachable (the caller keeps the batch to retry).
   */
  append(samples: readonly LoggedSample[]): Promise<void>;
  /** Samples in the range, ordered by tag (as given in `tagIds`), then time, then seq. */
  raw(query: RawQuery): Promise<StoredSample[]>;
  /** Aggregated windows, ordered by tag (as given in `tagIds`), then window start. */
  aggregate(query: AggregateQuery): Promise<AggregateValue[]>;
  /** How many samples a Raw read would return, without reading them (for limit problems). */
  count(range: HistoryRange & { afterSeq?: string }): Promise<number>;
  /**
   * Tag ids that have logged samples, matching a path or pattern (`*` one segment, `**` any
   * depth), sorted. A tag logged once and since removed from the profile is still found.
   */
  tagIds(pattern: string): Promise<string[]>;
  /** The log position of the newest appended sample, or `'0'` for an empty log. */
  lastSeq(): Promise<string>;
  /**
   * Deletes samples older than `beforeMs` (retention). Partitioned backends drop whole
   * partitions that lie entirely before it and delete the rest row by row. A backend that
   * deletes in slices (SQLite) awaits `options.betweenSlices` between them and ends early, without
   * an error, once `options.signal` is aborted; one that deletes in one statement may ignore both.
   * @returns how many samples were deleted (so far, when ended early), when the backend can
   * tell; else undefined.
   */
  deleteBefore(beforeMs: number, options?: DeleteOptions): Promise<number | undefined>;
}

/** How a retention run shares the backend with appends (see {@link HistoryBackend.deleteBefore}). */
export interface DeleteOptions {
  /**
   * Aborted: the run ends at its next slice boundary (what was deleted stays deleted). Absent:
   * the run goes on until done or until the backend stops.
   */
  signal?: AbortSignal;
  /**
   * Awaited between two slices, after each slice's transaction has committed: the caller's
   * appends run there, so a long run never holds them back. Absent: the backend only yields to
   * the event loop between slices.
   */
  betweenSlices?: () => Promise<void>;
}
