/**
 * When the SQLite history copies its WAL back into the database file (a checkpoint).
 *
 * With `synchronous=normal` a commit is only written to the WAL; the WAL is fsynced when a
 * checkpoint runs, so a power cut may roll back the commits since the last checkpoint. SQLite's
 * own trigger is a WAL of 1,000 pages: at a high append rate (each 1,000-sample transaction
 * rewrites about 200 pages, one index leaf per tag) that is a checkpoint, with two fsyncs and a
 * copy of every page, every few transactions, about a third of the append CPU; at a low rate
 * it may not come for minutes. A checkpoint at most `intervalMs` after each commit bounds the
 * loss window by time at every rate, and the page trigger, raised to a safety cap, rarely
 * fires: each checkpoint then copies a page rewritten by many transactions once.
 */
import type Database from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../clock.js';

/** Default of {@link SqliteCheckpointsOptions.intervalMs}, ms. */
export const defaultCheckpointIntervalMs = 1_000;

/**
 * SQLite's page trigger (`PRAGMA wal_autocheckpoint`), in 4 KiB pages: 16,384 ≈ 64 MiB of WAL.
 * A safety cap for bursts (a fast backlog reaches it in a fraction of a second); it is also about
 * the largest the -wal file grows, since SQLite reuses the file rather than shrinking it.
 */
export const walAutocheckpointPages = 16_384;

/** Options of {@link SqliteCheckpoints}. */
export interface SqliteCheckpointsOptions {
  /** Most time from a commit to the checkpoint that covers it, ms. Default 1,000. */
  intervalMs?: number;
  /** Time and the timer of a trailing checkpoint (injected so tests need not sleep). */
  clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimer'>;
  logger: Logger;
}

/** The checkpoint policy of one open SQLite connection. */
export class SqliteCheckpoints {
  private readonly checkpoint: Database.Statement;
  private readonly intervalMs: number;
  /** When the last checkpoint ran (epoch ms); none yet since open. */
  private last: number | undefined;
  /** The checkpoint of commits that came too soon after the last one, when no append follows. */
  private trailing: TimerHandle | undefined;
  private stopped = false;
  /** A checkpoint failed and none succeeded since: logged once, not every interval. */
  private failing = false;

  /** Raises the connection's page trigger to {@link walAutocheckpointPages}. */
  constructor(
    db: Database.Database,
    private readonly options: SqliteCheckpointsOptions,
  ) {
    this.intervalMs = options.intervalMs ?? defaultCheckpointIntervalMs;
    db.pragma(`wal_autocheckpoint = ${walAutocheckpointPages}`);
    // PASSIVE, never RESTART or TRUNCATE: those wait for readers (an API query), and this runs
    // on the append path. A page a reader still needs is copied by a later checkpoint.
    this.checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  }

  /**
   * Call after each committed append (synchronously, before the connection is used again).
   * Checkpoints now when `intervalMs` passed since the last checkpoint, when none ran since
   * open (a WAL a crashed run left is copied back promptly), or when the clock went back;
   * otherwise makes sure one runs `intervalMs` after the last, should no append come by then.
   */
  afterCommit(): void {
    if (this.stopped) return;
    const now = this.options.clock.now();
    const last = this.last;
    if (last === undefined || now < last || now - last >= this.intervalMs) {
      this.run(now);
    } else if (this.trailing === undefined) {
      this.trailing = this.options.clock.setTimeout(
        () => {
          this.trailing = undefined;
          if (!this.stopped) this.run(this.options.clock.now());
        },
        last + this.intervalMs - now,
      );
    }
  }

  /** Cancels the trailing checkpoint; call before closing the connection (close checkpoints). */
  stop(): void {
    this.stopped = true;
    this.options.clock.clearTimer(this.trailing);
    this.trailing = undefined;
  }

  /**
   * A failure is logged, never thrown: the append it follows is committed, and a retried batch
   * would be stored twice.
   */
  private run(now: number): void {
    this.options.clock.clearTimer(this.trailing);
    this.trailing = undefined;
    this.last = now;
    try {
      this.checkpoint.get();
      if (this.failing) {
        this.failing = false;
        this.options.logger.info('sqlite history checkpoints work again');
      }
    } catch (error) {
      if (!this.failing) {
        this.failing = true;
        this.options.logger.warn(
          { err: error },
          'sqlite history checkpoint failed; commits stay in the WAL until one succeeds',
        );
      }
    }
  }
}
