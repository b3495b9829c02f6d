/**
 * The PostgreSQL history tables, created on first start in the connection's current schema:
 *
 * - `tagd_history_tags (id, full_tag_id)`: one row per tag path ever logged, so samples carry
 *   a 4-byte id instead of the path. Rows are never deleted (ids stay valid for every gateway).
 * - `tagd_history_samples (seq, tag_id, time, quality, reason, num, flag, txt)`: the samples,
 *   range-partitioned by `time` (postgres-partitions.ts), or a TimescaleDB hypertable when that
 *   extension can be used. `num` holds numbers, `flag` booleans, `txt` strings; at most one is
 *   set. Index (tag_id, time, seq) serves every read; a BRIN index on time serves retention.
 * - `tagd_history_seq`: the sequence behind `seq`.
 * - `tagd_history_state (id = 1, last_seq, schema_version)`: the newest seq, updated by every
 *   append under a row lock, so concurrent appenders (several gateways) commit in seq order and
 *   a Delta poll (`seq > lastSeq`) never skips a sample committed late.
 *
 * Set-up runs in one transaction under an advisory lock, so gateways starting together do not
 * race on CREATE.
 */

import type { PoolClient } from 'pg';
import type { Logger } from 'pino';

/** How samples are partitioned: native declarative partitions, or a TimescaleDB hypertable. */
export type PostgresHistoryMode = 'partitioned' | 'timescaledb';

/** Names of the history objects (unquoted; all lower case, so no quoting is needed). */
export const tables = {
  tags: 'tagd_history_tags',
  samples: 'tagd_history_samples',
  state: 'tagd_history_state',
  sequence: 'tagd_history_seq',
} as const;

/** Version of the table layout, stored in tagd_history_state for future migrations. */
export const schemaVersion = 1;

/** Oldest server version supported (server_version_num): 14, for date_bin. */
export const minServerVersion = 140_000;

/** Advisory lock key (pg_advisory_xact_lock) of DDL on the history tables: "tagd" + 1. */
export const ddlLockKey = 0x74616764_01;

const samplesColumns = `
  seq bigint NOT NULL DEFAULT nextval('${tables.sequence}'),
  tag_id integer NOT NULL,
  time timestamptz NOT NULL,
  quality text NOT NULL,
  reason text,
  num double precision,
  flag boolean,
  txt text`;

/**
 * Creates the history tables when missing and tells which mode the samples table uses. A new
 * samples table becomes a TimescaleDB hypertable when the extension is installed or can be
 * created (`pg_available_extensions`), else a natively partitioned table; an existing table
 * keeps its mode.
 * @param partitionMs chunk length for a new hypertable, milliseconds.
 */
export async function setUpSchema(
  client: PoolClient,
  partitionMs: number,
  logger: Logger,
): Promise<PostgresHistoryMode> {
  const version = await client.query<{ v: string }>('SHOW server_version_num');
  if (Number(version.rows[0]?.v) < minServerVersion) {
    throw new Error(
      `PostgreSQL 14 or later is required (date_bin); the server is ${version.rows[0]?.v}`,
    );
  }
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [ddlLockKey]);
    const existing = await client.query<{ relkind: string }>(
      'SELECT relkind FROM pg_class WHERE oid = to_regclass($1)',
      [tables.samples],
    );
    let mode: PostgresHistoryMode;
    const relkind = existing.rows[0]?.relkind;
    if (relkind === undefined) {
      mode = (await useTimescale(client, logger)) ? 'timescaledb' : 'partitioned';
      await createTables(client, mode, partitionMs);
    } else {
      mode = await existingMode(client, relkind);
    }
    await client.query('COMMIT');
    return mode;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** True when TimescaleDB is installed in the database or could be created now. */
async function useTimescale(client: PoolClient, logger: Logger): Promise<boolean> {
  const available = await client.query<{ installed: string | null }>(
    "SELECT installed_version AS installed FROM pg_available_extensions WHERE name = 'timescaledb'",
  );
  const row = available.rows[0];
  if (row === undefined) return false;
  if (row.installed !== null) return true;
  // Creating it needs the right privileges and timescaledb in shared_preload_libraries;
  // without them, native partitioning does the same job.
  await client.query('SAVEPOINT timescale');
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS timescaledb');
    await client.query('RELEASE SAVEPOINT timescale');
    return true;
  } catch (error) {
    await client.query('ROLLBACK TO SAVEPOINT timescale');
    logger.warn(
      { reason: (error as Error).message },
      'timescaledb is available but could not be created; using native partitions',
    );
    return false;
  }
}

async function createTables(
  client: PoolClient,
  mode: PostgresHistoryMode,
  partitionMs: number,
): Promise<void> {
  await client.query(`CREATE SEQUENCE IF NOT EXISTS ${tables.sequence} AS bigint`);
  await client.query(`CREATE TABLE IF NOT EXISTS ${tables.tags} (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    full_tag_id text COLLATE "C" NOT NULL UNIQUE)`);
  await client.query(`CREATE TABLE IF NOT EXISTS ${tables.state} (
    id integer PRIMARY KEY CHECK (id = 1),
    last_seq bigint NOT NULL,
    schema_version integer NOT NULL)`);
  await client.query(
    `INSERT INTO ${tables.state} (id, last_seq, schema_version) VALUES (1, 0, $1)
     ON CONFLICT (id) DO NOTHING`,
    [schemaVersion],
  );
  if (mode === 'timescaledb') {
    await client.query(`CREATE TABLE ${tables.samples} (${samplesColumns})`);
    // partitionMs is a whole number of days, checked by the backend's options.
    await client.query(
      `SELECT create_hypertable('${tables.samples}', 'time',
         chunk_time_interval => interval '${Math.round(partitionMs / 1000)} seconds')`,
    );
  } else {
    await client.query(
      `CREATE TABLE ${tables.samples} (${samplesColumns}) PARTITION BY RANGE (time)`,
    );
  }
  await client.query(
    `CREATE INDEX IF NOT EXISTS ${tables.samples}_tag_time ON ${tables.samples} (tag_id, time, seq)`,
  );
  // Retention deletes by time alone in the partition the cut-off falls in; samples arrive
  // roughly in time order, so a BRIN index (a few kB, next to free on insert) finds them.
  await client.query(
    `CREATE INDEX IF NOT EXISTS ${tables.samples}_time ON ${tables.samples} USING brin (time)
     WITH (autosummarize = on)`,
  );
}

async function existingMode(client: PoolClient, relkind: string): Promise<PostgresHistoryMode> {
  if (relkind === 'p') return 'partitioned';
  const extension = await client.query("SELECT 1 FROM pg_extension WHERE extname = 'timescaledb'");
  // The information view exists only with the extension, so it is asked only then.
  const hypertable =
    extension.rowCount === 1
      ? await client.query(
          `SELECT 1 FROM timescaledb_information.hypertables
           WHERE hypertable_name = $1 AND hypertable_schema = current_schema()`,
          [tables.samples],
        )
      : undefined;
  if (hypertable?.rowCount === 1) return 'timescaledb';
  throw new Error(
    `${tables.samples} exists but is neither partitioned nor a TimescaleDB hypertable; ` +
      'it was not created by tagd',
  );
}
