/**
 * The durable outbox: messages a publisher could not deliver yet, kept in order in one SQLite
 * file (better-sqlite3, WAL) in the state directory until the receiver acknowledged them.
 *
 * - Durability: WAL with `synchronous = NORMAL`, as the history's default: a committed append
 *   survives the process being killed (kill -9, a crash, an OOM kill); a power loss may lose the
 *   last appends since the previous WAL checkpoint fsync.
 * - Order: each message gets the next rowid; reads and deletions go by it, oldest first.
 * - Bound: the summed size of topic and payload bytes stays within `limitBytes`; an append
 *   beyond drops the oldest messages and counts them ({@link Outbox.dropped}), and the samples
 *   they carried ({@link Outbox.droppedSamples}: a message may carry many, as Sparkplug's
 *   stored batches do).
 * - Delivery is at least once: the owner removes a message only after the receiver acknowledged
 *   it, so a message acknowledged just before a crash is sent again after the restart.
 */
import { rmSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { openOwnerOnlyDatabase } from '../state/owner-only-database.js';

/** One queued message. */
export interface OutboxMessage {
  /** Position in the outbox: larger is newer. */
  id: number;
  /** Where it goes: an MQTT topic, or a label the owner understands. */
  topic: string;
  payload: Buffer;
  /** When it was queued, epoch ms. */
  queuedAt: number;
  /** Samples it carries, as appended (default 1). */
  samples: number;
}

/** What an append takes. */
export interface OutboxEntry {
  topic: string;
  payload: string | Buffer;
  /** Samples the message carries, counted in {@link Outbox.samples}. Default 1. */
  samples?: number;
}

/** Options of {@link Outbox}. */
export interface OutboxOptions {
  /** The database file; its folder is created (0700) when missing. */
  file: string;
  /** Most bytes of topics and payloads kept; beyond, the oldest messages are dropped. */
  limitBytes: number;
  /** Epoch ms now, for `queuedAt`. Default: Date.now. */
  now?: () => number;
}

type Statement = Database.Statement<unknown[], unknown>;

/** A bounded, durable, ordered queue of messages. Open before use, close when done. */
export class Outbox {
  private db: Database.Database | undefined;
  private insert: Statement | undefined;
  private bytes = 0;
  private count = 0;
  private sampleCount = 0;
  private droppedTotal = 0;
  private droppedSampleTotal = 0;

  constructor(private readonly options: OutboxOptions) {}

  /** Messages queued. */
  get depth(): number {
    return this.count;
  }

  /** Samples the queued messages carry (a message counts 1 unless its append said more). */
  get samples(): number {
    return this.sampleCount;
  }

  /** Samples carried by the messages dropped since the outbox was opened. */
  get droppedSamples(): number {
    return this.droppedSampleTotal;
  }

  /** Bytes of topics and payloads queued. */
  get sizeBytes(): number {
    return this.bytes;
  }

  /** Messages dropped to stay within the limit since the outbox was opened. */
  get dropped(): number {
    return this.droppedTotal;
  }

  /** Opens (or creates) the file and reads its totals. Idempotent. */
  open(): void {
    if (this.db !== undefined) return;
    // Queued messages are plant data: the file is the owner's only.
    const db = openOwnerOnlyDatabase(this.options.file, (db) => {
      db.exec(`
        CREATE TABLE IF NOT EXISTS messages (
          id INTEGER PRIMARY KEY,
          topic TEXT NOT NULL,
          payload BLOB NOT NULL,
          size INTEGER NOT NULL,
          t INTEGER NOT NULL,
          samples INTEGER NOT NULL DEFAULT 1
        );
      `);
      // An outbox written before messages counted their samples: each counts 1.
      const columns = db.prepare('PRAGMA table_info(messages)').all() as { name: string }[];
      if (!columns.some((column) => column.name === 'samples')) {
        db.exec('ALTER TABLE messages ADD COLUMN samples INTEGER NOT NULL DEFAULT 1');
      }
      const totals = db
        .prepare(
          'SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS b, COALESCE(SUM(samples), 0) AS s FROM messages',
        )
        .get() as { n: number; b: number; s: number };
      this.count = totals.n;
      this.bytes = totals.b;
      this.sampleCount = totals.s;
    });
    this.db = db;
    this.insert = db.prepare(
      'INSERT INTO messages (topic, payload, size, t, samples) VALUES (?, ?, ?, ?, ?)',
    );
  }

  /**
   * Deletes an outbox's files (the database, its WAL and shared memory), when its publisher is
   * deleted: its messages must not go to whatever publisher takes the name later.
   */
  static discard(file: string): void {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  }

  /** Closes the file. Idempotent. */
  close(): void {
    const db = this.db;
    this.db = undefined;
    this.insert = undefined;
    db?.close();
  }

  /**
   * Appends messages in one transaction, in order, then drops the oldest beyond the limit.
   * @returns how many messages were dropped by this append.
   */
  append(entries: readonly OutboxEntry[]): number {
    const db = this.require();
    const insert = this.insert as Statement;
    const now = (this.options.now ?? Date.now)();
    let added = 0;
    let samples = 0;
    db.transaction(() => {
      for (const entry of entries) {
        const payload =
          typeof entry.payload === 'string' ? Buffer.from(entry.payload, 'utf8') : entry.payload;
        const size = payload.length + Buffer.byteLength(entry.topic, 'utf8');
        const carried = entry.samples ?? 1;
        insert.run(entry.topic, payload, size, now, carried);
        added += size;
        samples += carried;
      }
    })();
    this.count += entries.length;
    this.bytes += added;
    this.sampleCount += samples;
    return this.trim();
  }

  /** The oldest `limit` messages, oldest first. */
  peek(limit: number): OutboxMessage[] {
    const rows = this.require()
      .prepare('SELECT id, topic, payload, t, samples FROM messages ORDER BY id LIMIT ?')
      .all(limit) as MessageRow[];
    return rows.map(messageOf);
  }

  /**
   * The oldest messages, oldest first, as many as carry at most `maxSamples` samples together
   * (at least one message), and at most `maxMessages`. Only the messages returned are read in
   * full: a window of a few large messages does not copy a thousand.
   */
  peekSamples(maxSamples: number, maxMessages: number): OutboxMessage[] {
    const db = this.require();
    const heads = db
      .prepare('SELECT id, samples FROM messages ORDER BY id LIMIT ?')
      .all(maxMessages) as { id: number; samples: number }[];
    let last: number | undefined;
    let count = 0;
    for (const head of heads) {
      if (last !== undefined && count + head.samples > maxSamples) break;
      last = head.id;
      count += head.samples;
    }
    if (last === undefined) return [];
    const rows = db
      .prepare('SELECT id, topic, payload, t, samples FROM messages WHERE id <= ? ORDER BY id')
      .all(last) as MessageRow[];
    return rows.map(messageOf);
  }

  /** When the oldest message was queued, epoch ms; undefined when empty. */
  oldestQueuedAt(): number | undefined {
    if (this.count === 0) return undefined;
    const row = this.require().prepare('SELECT t FROM messages ORDER BY id LIMIT 1').get() as
      | { t: number }
      | undefined;
    return row?.t;
  }

  /** Removes delivered messages by id, in one transaction. */
  remove(ids: readonly number[]): void {
    if (ids.length === 0) return;
    const db = this.require();
    const select = db.prepare('SELECT size, samples FROM messages WHERE id = ?');
    const remove = db.prepare('DELETE FROM messages WHERE id = ?');
    let removed = 0;
    let bytes = 0;
    let samples = 0;
    db.transaction(() => {
      for (const id of ids) {
        const row = select.get(id) as { size: number; samples: number } | undefined;
        if (row === undefined) continue;
        remove.run(id);
        removed++;
        bytes += row.size;
        samples += row.samples;
      }
    })();
    this.count -= removed;
    this.bytes -= bytes;
    this.sampleCount -= samples;
  }

  /** Drops the oldest messages until the total fits the limit. */
  private trim(): number {
    if (this.bytes <= this.options.limitBytes) return 0;
    const db = this.require();
    const oldest = db.prepare('SELECT id, size, samples FROM messages ORDER BY id LIMIT 1000');
    const removeUpTo = db.prepare('DELETE FROM messages WHERE id <= ?');
    let dropped = 0;
    while (this.bytes > this.options.limitBytes && this.count > 0) {
      const rows = oldest.all() as { id: number; size: number; samples: number }[];
      let last: number | undefined;
      let n = 0;
      let freed = 0;
      let samples = 0;
      for (const row of rows) {
        if (this.bytes - freed <= this.options.limitBytes) break;
        last = row.id;
        n++;
        freed += row.size;
        samples += row.samples;
      }
      if (last === undefined) break;
      removeUpTo.run(last);
      this.count -= n;
      this.bytes -= freed;
      this.sampleCount -= samples;
      this.droppedSampleTotal += samples;
      dropped += n;
    }
    this.droppedTotal += dropped;
    return dropped;
  }

  private require(): Database.Database {
    if (this.db === undefined) throw new Error('The outbox is not open.');
    return this.db;
  }
}

/** A row of the messages table, as the peeks select it. */
interface MessageRow {
  id: number;
  topic: string;
  payload: Buffer;
  /** When it was queued, epoch ms. */
  t: number;
  samples: number;
}

function messageOf(row: MessageRow): OutboxMessage {
  return {
    id: row.id,
    topic: row.topic,
    payload: row.payload,
    queuedAt: row.t,
    samples: row.samples,
  };
}
