/**
 * The alarm journal: every transition of every alarm, and each alarm's current state, in one
 * SQLite file (better-sqlite3, WAL) in the state directory.
 *
 * - Durability, the house's rule for SQLite (as the history's): a committed append survives the
 *   process being killed (kill -9, a crash, an OOM kill) at once. Against a power cut, an
 *   operator's action is fsynced before {@link AlarmJournal.append} returns (`fsync: true`:
 *   that transaction runs with `synchronous = FULL`, which syncs the whole WAL, so every earlier
 *   commit with it); automatic transitions commit with `synchronous = NORMAL` and are fsynced by
 *   a checkpoint at most `checkpointIntervalMs` later (sqlite-checkpoints.ts), which bounds what
 *   a power cut may roll back. Appends are batched (one transaction per store batch, timer or
 *   action).
 * - One transaction holds the transitions and the states they led to: after a crash the states
 *   table never disagrees with the journal.
 * - Table `transitions`: `seq` (rowid, increasing), time, name, event, from/to state, active,
 *   acknowledged, value and limit (JSON, so booleans and strings come back as they were),
 *   account, comment, priority, severity, area, message. Indexes on time and (name, time).
 * - Table `states`: one row per alarm, its snapshot as JSON.
 *
 * Why not the history backend: a history backend buffers in memory while its database is away
 * (PostgreSQL on another machine), which cannot keep an acknowledgement before it is confirmed.
 */
import type Database from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { SqliteCheckpoints } from '../history/sqlite-checkpoints.js';
import { openOwnerOnlyDatabase } from '../state/owner-only-database.js';
import type { TagValue } from '../tags/sample.js';
import type { AlarmPriority } from './alarm-schema.js';
import type { AlarmEvent, AlarmSnapshot, AlarmState, AlarmTransition } from './alarm-state.js';

/** A transition read back, with its place in the journal. */
export interface JournalEntry extends AlarmTransition {
  /** Position in the journal: larger is newer. */
  seq: number;
}

/** Which transitions a journal query returns. */
export interface JournalQuery {
  /** Inclusive start, epoch ms. */
  fromMs: number;
  /** Inclusive end, epoch ms. */
  toMs: number;
  /** Only these alarms. */
  names?: readonly string[];
  /** Only alarms in these areas or below them (`Hall2` takes `Hall2/Ovens`). */
  areas?: readonly string[];
  /** Only these priorities. */
  priorities?: readonly AlarmPriority[];
  /** Only transitions into these states. */
  states?: readonly AlarmState[];
  /** Only these events. */
  events?: readonly AlarmEvent[];
  /** Only entries before this position (paging newest first) or after it (oldest first). */
  afterSeq?: number;
  /** `desc` (default): newest first. */
  order?: 'asc' | 'desc';
  /** Most entries returned. */
  limit: number;
}

/** Options of {@link AlarmJournal}. */
export interface AlarmJournalOptions {
  /** The database file; its folder is created (0700) when missing. */
  file: string;
  /** Most rows one retention statement deletes (retention yields between). Default 10,000. */
  deleteChunkRows?: number;
  /**
   * The checkpoint policy that fsyncs automatic transitions: a checkpoint at most `intervalMs`
   * (default 1,000) after each commit. Absent: SQLite's own (every 1,000 WAL pages), so a power
   * cut may roll back more of them; operator actions are fsynced either way.
   */
  checkpoints?: {
    clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimer'>;
    logger: Logger;
    intervalMs?: number;
  };
}

interface TransitionRow {
  seq: number;
  t: number;
  name: string;
  event: string;
  from_state: string;
  to_state: string;
  active: number;
  acked: number;
  value: string | null;
  lim: string | null;
  account: string | null;
  comment: string | null;
  priority: string;
  severity: number;
  area: string | null;
  message: string;
}

/** The durable journal and state store of the alarms. Open before use, close when done. */
export class AlarmJournal {
  private db: Database.Database | undefined;
  private checkpoints: SqliteCheckpoints | undefined;
  private writeBatch:
    | ((
        transitions: readonly AlarmTransition[],
        states: readonly [string, AlarmSnapshot][],
      ) => number[])
    | undefined;

  constructor(private readonly options: AlarmJournalOptions) {}

  /** Opens (or creates) the file. Idempotent. */
  open(): void {
    if (this.db !== undefined) return;
    // Who acknowledged what is plant data: the file is the owner's.
    const db = openOwnerOnlyDatabase(this.options.file, (db) => {
      db.exec(`
        CREATE TABLE IF NOT EXISTS transitions (
          seq INTEGER PRIMARY KEY,
          t INTEGER NOT NULL,
          name TEXT NOT NULL,
          event TEXT NOT NULL,
          from_state TEXT NOT NULL,
          to_state TEXT NOT NULL,
          active INTEGER NOT NULL,
          acked INTEGER NOT NULL,
          value TEXT,
          lim TEXT,
          account TEXT,
          comment TEXT,
          priority TEXT NOT NULL,
          severity INTEGER NOT NULL,
          area TEXT,
          message TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS transitions_t ON transitions (t);
        CREATE INDEX IF NOT EXISTS transitions_name_t ON transitions (name, t);
        CREATE TABLE IF NOT EXISTS states (name TEXT PRIMARY KEY, snapshot TEXT NOT NULL) WITHOUT ROWID;
      `);
    });
    this.db = db;
    const policy = this.options.checkpoints;
    if (policy) {
      this.checkpoints = new SqliteCheckpoints(db, {
        clock: policy.clock,
        logger: policy.logger,
        ...(policy.intervalMs !== undefined ? { intervalMs: policy.intervalMs } : {}),
      });
    }
    const insert = db.prepare(
      'INSERT INTO transitions (t, name, event, from_state, to_state, active, acked, value, lim, ' +
        'account, comment, priority, severity, area, message) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const upsertState = db.prepare(
      'INSERT INTO states (name, snapshot) VALUES (?, ?) ' +
        'ON CONFLICT (name) DO UPDATE SET snapshot = excluded.snapshot',
    );
    this.writeBatch = db.transaction(
      (transitions: readonly AlarmTransition[], states: readonly [string, AlarmSnapshot][]) => {
        const seqs: number[] = [];
        for (const x of transitions) {
          const { lastInsertRowid } = insert.run(
            x.time,
            x.name,
            x.event,
            x.from,
            x.to,
            x.active ? 1 : 0,
            x.acknowledged ? 1 : 0,
            x.value === undefined ? null : JSON.stringify(x.value),
            x.limit === undefined ? null : JSON.stringify(x.limit),
            x.account ?? null,
            x.comment ?? null,
            x.priority,
            x.severity,
            x.area ?? null,
            x.message,
          );
          seqs.push(Number(lastInsertRowid));
        }
        for (const [name, snapshot] of states) upsertState.run(name, JSON.stringify(snapshot));
        return seqs;
      },
    );
  }

  /** Closes the file. Idempotent. */
  close(): void {
    const db = this.db;
    this.db = undefined;
    this.writeBatch = undefined;
    this.checkpoints?.stop();
    this.checkpoints = undefined;
    db?.close();
  }

  /**
   * Appends transitions and saves the states they led to, in one transaction: kept through a
   * kill -9 when this returns, and with `fsync` (an operator's action) on disk through a power
   * cut too.
   * @returns the journal position (seq) of each transition, in order.
   * @throws when the database refuses (a full disk): nothing of the batch is kept then.
   */
  append(
    transitions: readonly AlarmTransition[],
    states: readonly [name: string, snapshot: AlarmSnapshot][] = [],
    options: { fsync?: boolean } = {},
  ): number[] {
    const db = this.require();
    if (transitions.length === 0 && states.length === 0) return [];
    const write = this.writeBatch;
    if (write === undefined) return [];
    if (!options.fsync) {
      const seqs = write(transitions, states);
      this.checkpoints?.afterCommit();
      return seqs;
    }
    // FULL syncs the WAL at this commit: every earlier commit is on disk with it.
    db.pragma('synchronous = FULL');
    try {
      return write(transitions, states);
    } finally {
      db.pragma('synchronous = NORMAL');
    }
  }

  /** Every saved state, by alarm name. */
  states(): Map<string, AlarmSnapshot> {
    const rows = this.require().prepare('SELECT name, snapshot FROM states').all() as {
      name: string;
      snapshot: string;
    }[];
    return new Map(rows.map((row) => [row.name, JSON.parse(row.snapshot) as AlarmSnapshot]));
  }

  /** Forgets the saved states of these alarms (removed or disabled); their journal stays. */
  removeStates(names: readonly string[]): void {
    if (names.length === 0) return;
    const db = this.require();
    const remove = db.prepare('DELETE FROM states WHERE name = ?');
    db.transaction(() => {
      for (const name of names) remove.run(name);
    })();
  }

  /**
   * Transitions matching the query in journal order (the order they happened), newest first
   * unless `order` is `asc`; `afterSeq` pages on from the last entry of the previous page.
   */
  query(query: JournalQuery): JournalEntry[] {
    const { where, parameters } = this.filter(query);
    const descending = query.order !== 'asc';
    if (query.afterSeq !== undefined) {
      where.push(descending ? 'seq < ?' : 'seq > ?');
      parameters.push(query.afterSeq);
    }
    const sql =
      `SELECT * FROM transitions WHERE ${where.join(' AND ')} ` +
      `ORDER BY seq ${descending ? 'DESC' : 'ASC'} LIMIT ?`;
    parameters.push(query.limit);
    const rows = this.require()
      .prepare(sql)
      .all(...parameters) as TransitionRow[];
    return rows.map(toEntry);
  }

  /**
   * How many transitions match the query's filters (time range, names, areas, priorities,
   * states, events; `afterSeq`, `order` and `limit` are ignored), counted in SQLite: a caller
   * can refuse a query too large before any row is read into memory.
   */
  count(query: Omit<JournalQuery, 'limit'>): number {
    const { where, parameters } = this.filter(query);
    const row = this.require()
      .prepare(`SELECT COUNT(*) AS n FROM transitions WHERE ${where.join(' AND ')}`)
      .get(...parameters) as { n: number };
    return row.n;
  }

  /** The WHERE terms of a query's filters, with their parameters. */
  private filter(query: Omit<JournalQuery, 'limit'>): { where: string[]; parameters: unknown[] } {
    const where: string[] = ['t >= ?', 't <= ?'];
    const parameters: unknown[] = [query.fromMs, query.toMs];
    const list = (column: string, values: readonly string[] | undefined) => {
      if (values === undefined || values.length === 0) return;
      where.push(`${column} IN (${values.map(() => '?').join(', ')})`);
      parameters.push(...values);
    };
    list('name', query.names);
    list('priority', query.priorities);
    list('to_state', query.states);
    list('event', query.events);
    if (query.areas !== undefined && query.areas.length > 0) {
      // An area and everything below it; the prefix compared with substr (no LIKE wildcards).
      where.push(`(${query.areas.map(() => '(area = ? OR substr(area, 1, ?) = ?)').join(' OR ')})`);
      for (const area of query.areas) parameters.push(area, area.length + 1, `${area}/`);
    }
    return { where, parameters };
  }

  /**
   * Deletes transitions older than `beforeMs` (retention), in slices of `deleteChunkRows`,
   * yielding to the event loop between them.
   * @returns how many were deleted.
   */
  async deleteBefore(beforeMs: number): Promise<number> {
    const chunk = Math.max(1, this.options.deleteChunkRows ?? 10_000);
    let deleted = 0;
    for (;;) {
      const db = this.db;
      if (db === undefined) return deleted;
      const changes = db
        .prepare(
          'DELETE FROM transitions WHERE seq IN (SELECT seq FROM transitions WHERE t < ? LIMIT ?)',
        )
        .run(beforeMs, chunk).changes;
      deleted += changes;
      if (changes < chunk) return deleted;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private require(): Database.Database {
    if (this.db === undefined) throw new Error('The alarm journal is not open.');
    return this.db;
  }
}

function toEntry(row: TransitionRow): JournalEntry {
  return {
    seq: row.seq,
    time: row.t,
    name: row.name,
    event: row.event as AlarmEvent,
    from: row.from_state as AlarmState,
    to: row.to_state as AlarmState,
    active: row.active === 1,
    acknowledged: row.acked === 1,
    ...(row.value !== null ? { value: JSON.parse(row.value) as TagValue } : {}),
    ...(row.lim !== null ? { limit: JSON.parse(row.lim) as TagValue } : {}),
    ...(row.account !== null ? { account: row.account } : {}),
    ...(row.comment !== null ? { comment: row.comment } : {}),
    priority: row.priority as AlarmPriority,
    severity: row.severity,
    ...(row.area !== null ? { area: row.area } : {}),
    message: row.message,
  };
}
