/**
 * Native time partitions of `tagd_history_samples`: one table per `partitionDays` days, aligned
 * to the UTC epoch (so day partitions run midnight to midnight UTC), named after their first day
 * (`tagd_history_samples_p20260101`).
 *
 * Partitions are created ahead (on start and on a timer), and on demand for any sample that
 * falls outside the existing ones, so no sample is ever refused for want of a partition (there
 * is no DEFAULT partition: one would have to be scanned whenever a partition is added).
 * Retention drops the partitions that end at or before the cut-off: a catalog change, no
 * row-by-row delete, no table bloat.
 *
 * All gateways that share a database must use the same partition length; partitions are made
 * under an advisory lock with CREATE TABLE IF NOT EXISTS, so gateways do not race.
 */
import type { PoolClient } from 'pg';
import { ddlLockKey, tables } from './postgres-schema.js';

/** Milliseconds in a day. */
export const dayMs = 86_400_000;

/** One partition as found in the catalog: [fromMs, toMs). */
export interface PartitionInfo {
  name: string;
  fromMs: number;
  toMs: number;
}

/** An identifier in double quotes (partition names found in the catalog may be made by hand). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** 0001-01-01T00:00:00.000Z: the earliest partition bound (a four-digit year). */
const firstBoundMs = -62_135_596_800_000;
/**
 * 10000-01-01T00:00:00.000Z: no partition may reach it. `toISOString` writes that bound as
 * `+010000-01-01…`, which PostgreSQL does not read, so every append of such a sample failed.
 */
const yearTenThousandMs = 253_402_300_800_000;

/**
 * True when the partition of length `partitionMs` holding `epochMs` has both bounds in years
 * 1–9999: with day partitions, samples from 0001-01-01 to 9999-12-30 (a sample of 9999-12-31
 * is refused); longer partitions refuse a little more at both ends. False for NaN.
 */
export function partitionable(epochMs: number, partitionMs: number): boolean {
  const from = partitionStart(epochMs, partitionMs);
  return from >= firstBoundMs && from + partitionMs < yearTenThousandMs;
}

/** Start of the partition of length `partitionMs` holding `epochMs`. */
export function partitionStart(epochMs: number, partitionMs: number): number {
  return Math.floor(epochMs / partitionMs) * partitionMs;
}

/** Table name of the partition starting at `fromMs`: `tagd_history_samples_pYYYYMMDD`. */
export function partitionName(fromMs: number): string {
  const day = new Date(fromMs).toISOString().slice(0, 10).replaceAll('-', '');
  return `${tables.samples}_p${day}`;
}

/**
 * The partitions of the samples table, from the catalog, sorted by start. The bounds are
 * printed by pg_get_expr and read back by the same session, so the session's time zone does
 * not matter. A DEFAULT or MINVALUE/MAXVALUE partition (made by hand) is listed with an
 * infinite bound.
 */
export async function listPartitions(client: PoolClient): Promise<PartitionInfo[]> {
  const result = await client.query<{ name: string; from_ms: number | null; to_ms: number | null }>(
    `SELECT c.relname AS name,
       (extract(epoch FROM substring(b.expr FROM $$FROM \\('([^']+)'\\)$$)::timestamptz) * 1000)::float8 AS from_ms,
       (extract(epoch FROM substring(b.expr FROM $$TO \\('([^']+)'\\)$$)::timestamptz) * 1000)::float8 AS to_ms
     FROM pg_inherits i
     JOIN pg_class c ON c.oid = i.inhrelid
     CROSS JOIN LATERAL (SELECT pg_get_expr(c.relpartbound, c.oid) AS expr) b
     WHERE i.inhparent = to_regclass($1)`,
    [tables.samples],
  );
  return result.rows
    .map((row) => ({
      name: row.name,
      fromMs: row.from_ms ?? Number.NEGATIVE_INFINITY,
      toMs: row.to_ms ?? Number.POSITIVE_INFINITY,
    }))
    .sort((a, b) => a.fromMs - b.fromMs);
}

/** True when one known partition holds every time in [fromMs, toMs]. */
export function covered(partitions: readonly PartitionInfo[], fromMs: number, toMs: number) {
  return partitions.some((p) => p.fromMs <= fromMs && toMs < p.toMs);
}

/**
 * Creates the partitions starting at `starts` (each `partitionMs` long) that do not exist yet,
 * in one transaction under the DDL advisory lock.
 * @returns the names created.
 */
export async function createPartitions(
  client: PoolClient,
  starts: readonly number[],
  partitionMs: number,
): Promise<string[]> {
  if (starts.length === 0) return [];
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [ddlLockKey]);
    const existing = new Set((await listPartitions(client)).map((p) => p.name));
    const created: string[] = [];
    for (const fromMs of starts) {
      const name = partitionName(fromMs);
      if (existing.has(name)) continue;
      // The bounds are ISO strings with Z: read the same whatever the session time zone.
      await client.query(
        `CREATE TABLE ${quoteIdent(name)} PARTITION OF ${tables.samples} FOR VALUES ` +
          `FROM ('${new Date(fromMs).toISOString()}') TO ('${new Date(fromMs + partitionMs).toISOString()}')`,
      );
      created.push(name);
    }
    await client.query('COMMIT');
    return created;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Drops the partitions that end at or before `beforeMs` (whole partitions only, under the DDL
 * advisory lock).
 * @returns the names dropped.
 */
export async function dropPartitionsBefore(
  client: PoolClient,
  beforeMs: number,
): Promise<string[]> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [ddlLockKey]);
    const old = (await listPartitions(client)).filter((p) => p.toMs <= beforeMs);
    for (const partition of old) await client.query(`DROP TABLE ${quoteIdent(partition.name)}`);
    await client.query('COMMIT');
    return old.map((p) => p.name);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
