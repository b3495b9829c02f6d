/**
 * SQL of the PostgreSQL history reads and the conversion of their rows.
 *
 * Reads go one tag at a time (like the SQLite backend): each is an ordered index range scan on
 * (tag_id, time, seq) that stops at the limit, where one query over all tags would have to sort
 * every row of the range before limiting.
 *
 * Aggregates follow history-backend.ts exactly: windows aligned to the UTC epoch
 * (`date_bin(window, time, epoch)` = floor(epoch_ms / window) * window); Bad and Unavailable
 * samples and samples without a value are skipped but still make their window appear (count
 * 0, no value); booleans are 0/1 for Avg, Min, Max and Sum; strings count for Count, First and
 * Last only; First and Last go by time, then seq. Avg and Sum add in time order, so the result
 * does not depend on the physical row order.
 */
import type { QualityReason } from '../tags/sample.js';
import type { AggregateValue, AggregationFunction, StoredSample } from './history-backend.js';
import { tables } from './postgres-schema.js';

/** 0001-01-01T00:00:00.000Z, the earliest time the bounds are written exactly. */
const minMs = -62_135_596_800_000;
/** 9999-12-31T23:59:59.999Z, the latest. */
const maxMs = 253_402_300_799_999;

/** True when a sample time can be stored (years 1 to 9999). */
export function storable(epochMs: number): boolean {
  return epochMs >= minMs && epochMs <= maxMs;
}

/** A query bound as a timestamptz literal; beyond years 1–9999 it becomes ±infinity. */
export function pgTime(epochMs: number): string {
  if (Number.isNaN(epochMs)) throw new RangeError('a time bound is NaN');
  if (epochMs < minMs) return '-infinity';
  if (epochMs > maxMs) return 'infinity';
  return new Date(epochMs).toISOString();
}

/** A sample row as the reads select it. */
export interface PgSampleRow {
  seq: string;
  ms: number;
  quality: StoredSample['quality'];
  reason: string | null;
  num: number | null;
  flag: boolean | null;
  txt: string | null;
}

/** An aggregate row: window start, samples used, the aggregate or the picked value. */
export interface PgAggregateRow {
  w: number;
  n: number;
  a: number | null;
  num: number | null;
  flag: boolean | null;
  txt: string | null;
}

/** Milliseconds since the epoch of a timestamptz, exact (extract returns numeric). */
const epochMsOf = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

/** The seq bounds a read was given, in the order their parameters follow the others. */
export interface SeqBounds {
  /** An afterSeq parameter (exclusive lower bound) comes first. */
  after: boolean;
  /** Then a maxSeq parameter (inclusive upper bound). */
  upTo: boolean;
}

const rangeWhere = ({ after, upTo }: SeqBounds, firstSeqParameter: number) =>
  'tag_id = $1 AND time >= $2::timestamptz AND time <= $3::timestamptz' +
  (after ? ` AND seq > $${firstSeqParameter}::bigint` : '') +
  (upTo ? ` AND seq <= $${firstSeqParameter + (after ? 1 : 0)}::bigint` : '');

/**
 * Raw read of one tag: $1 tag id, $2 start, $3 stop, $4 limit, then afterSeq, maxSeq. The
 * ORDER BY names the table's columns: a bare `seq` would be the text output column, which
 * sorts 10 before 9.
 */
export function rawSql(bounds: SeqBounds): string {
  return `SELECT s.seq::text AS seq, ${epochMsOf('s.time')} AS ms, quality, reason, num, flag, txt
    FROM ${tables.samples} s WHERE ${rangeWhere(bounds, 5)}
    ORDER BY s.time, s.seq LIMIT $4`;
}

const good = "quality IN ('Good', 'Stale')";
const usable = `${good} AND (num IS NOT NULL OR flag IS NOT NULL OR txt IS NOT NULL)`;
const numeric = `${good} AND (num IS NOT NULL OR flag IS NOT NULL)`;
const asNumber = 'coalesce(num, flag::int::float8)';

const pick = (order: string) =>
  ['num', 'flag', 'txt']
    .map((c) => `(array_agg(${c} ORDER BY ${order}) FILTER (WHERE ${usable}))[1] AS ${c}`)
    .join(', ');

const noPick = 'NULL::float8 AS num, NULL::boolean AS flag, NULL::text AS txt';

const columns: Record<AggregationFunction, string> = {
  Avg: `count(*) FILTER (WHERE ${numeric}) AS n,
    avg(${asNumber} ORDER BY time, seq) FILTER (WHERE ${numeric}) AS a, ${noPick}`,
  Sum: `count(*) FILTER (WHERE ${numeric}) AS n,
    sum(${asNumber} ORDER BY time, seq) FILTER (WHERE ${numeric}) AS a, ${noPick}`,
  Min: `count(*) FILTER (WHERE ${numeric}) AS n,
    min(${asNumber}) FILTER (WHERE ${numeric}) AS a, ${noPick}`,
  Max: `count(*) FILTER (WHERE ${numeric}) AS n,
    max(${asNumber}) FILTER (WHERE ${numeric}) AS a, ${noPick}`,
  Count: `count(*) FILTER (WHERE ${usable}) AS n, NULL::float8 AS a, ${noPick}`,
  First: `count(*) FILTER (WHERE ${usable}) AS n, NULL::float8 AS a, ${pick('time, seq')}`,
  Last: `count(*) FILTER (WHERE ${usable}) AS n, NULL::float8 AS a,
    ${pick('time DESC, seq DESC')}`,
};

/**
 * Aggregated read of one tag: $1 tag id, $2 start, $3 stop, $4 limit, $5 window (an interval
 * such as `60000 milliseconds`), then afterSeq, maxSeq.
 */
export function aggregateSql(fn: AggregationFunction, bounds: SeqBounds): string {
  return `SELECT ${epochMsOf('b')} AS w, ${columns[fn]}
    FROM (SELECT date_bin($5::interval, time, 'epoch'::timestamptz) AS b, *
          FROM ${tables.samples} WHERE ${rangeWhere(bounds, 6)}) s
    GROUP BY b ORDER BY b LIMIT $4`;
}

function rowValue(row: {
  num: number | null;
  flag: boolean | null;
  txt: string | null;
}): number | boolean | string | undefined {
  if (row.num !== null) return row.num;
  if (row.flag !== null) return row.flag;
  if (row.txt !== null) return row.txt;
  return undefined;
}

/** A sample row as the interface returns it. */
export function decodeSample(fullTagId: string, row: PgSampleRow): StoredSample {
  const sample: StoredSample = {
    fullTagId,
    epochMs: row.ms,
    quality: row.quality,
    seq: row.seq,
  };
  const value = rowValue(row);
  if (value !== undefined) sample.value = value;
  if (row.reason !== null) sample.reason = row.reason as QualityReason;
  return sample;
}

/** An aggregate row as the interface returns it (no value when no sample went into it). */
export function decodeAggregate(
  fullTagId: string,
  fn: AggregationFunction,
  row: PgAggregateRow,
): AggregateValue {
  const n = Number(row.n);
  const item: AggregateValue = { fullTagId, windowStartMs: row.w, count: n };
  if (n === 0) return item;
  if (fn === 'Count') item.value = n;
  else if (fn === 'First' || fn === 'Last') {
    const value = rowValue(row);
    if (value !== undefined) item.value = value;
  } else if (row.a !== null) item.value = Number(row.a);
  return item;
}
