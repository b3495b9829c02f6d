/**
 * A history backend that opens itself on first use and tries again on every later use until
 * it succeeds. A central PostgreSQL server that is down when the gateway boots must not keep
 * the gateway from reading its drivers: the history logger buffers (up to its bound) and each
 * flush retries the open, so logging resumes as soon as the server answers.
 *
 * Once stopped it stays closed: a late call (a query or a flush that outlived the daemon's
 * stop) rejects with {@link HistoryStoppedError} instead of opening it again (which would
 * leave a connection pool that nothing closes). Only an explicit `start()` opens it again.
 */
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

/** True for errors that say the database could not be reached (worth retrying later). */
export function isUnreachableError(error: unknown): boolean {
  return (error as { unreachable?: unknown } | undefined)?.unreachable === true;
}

/** A call made after {@link OpenOnUseBackend.stop}: the backend is closed and stays so. */
export class HistoryStoppedError extends Error {
  constructor(action: string) {
    super(`history is stopped (${action})`);
    this.name = 'HistoryStoppedError';
  }
}

/** Wraps a backend so that every call first opens it, once, sharing one attempt at a time. */
export class OpenOnUseBackend implements HistoryBackend {
  private opened = false;
  private opening: Promise<void> | undefined;
  /** Set by stop(), cleared by start(): calls in between are refused. */
  private stopped = false;

  /** @param inner the backend to open on use; its `start` may be called again after a failure. */
  constructor(private readonly inner: HistoryBackend) {}

  /** True once the inner backend has opened. */
  get isOpen(): boolean {
    return this.opened;
  }

  /** Opens the inner backend now; rejects with its error (a later call tries again). */
  start(): Promise<void> {
    this.stopped = false;
    return this.open();
  }

  /** Opens the inner backend unless stopped (one attempt at a time). */
  private open(action = 'start'): Promise<void> {
    if (this.stopped) return Promise.reject(new HistoryStoppedError(action));
    if (this.opened) return Promise.resolve();
    this.opening ??= this.inner.start().then(
      () => {
        this.opened = true;
        this.opening = undefined;
      },
      (error: unknown) => {
        this.opening = undefined;
        throw error;
      },
    );
    return this.opening;
  }

  /** Opens the inner backend for a call; rejects when stopped, also while the open was going on. */
  private async ready(action: string): Promise<void> {
    await this.open(action);
    if (this.stopped) throw new HistoryStoppedError(action);
  }

  /**
   * Waits for an open in progress, then closes the inner backend; later calls reject with
   * {@link HistoryStoppedError} until `start()`. Idempotent.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.opening?.catch(() => undefined);
    if (!this.opened) return;
    this.opened = false;
    await this.inner.stop();
  }

  async append(samples: readonly LoggedSample[]): Promise<void> {
    await this.ready('append');
    return this.inner.append(samples);
  }

  async raw(query: RawQuery): Promise<StoredSample[]> {
    await this.ready('raw');
    return this.inner.raw(query);
  }

  async aggregate(query: AggregateQuery): Promise<AggregateValue[]> {
    await this.ready('aggregate');
    return this.inner.aggregate(query);
  }

  async count(range: HistoryRange & { afterSeq?: string }): Promise<number> {
    await this.ready('count');
    return this.inner.count(range);
  }

  async tagIds(pattern: string): Promise<string[]> {
    await this.ready('tagIds');
    return this.inner.tagIds(pattern);
  }

  async lastSeq(): Promise<string> {
    await this.ready('lastSeq');
    return this.inner.lastSeq();
  }

  async deleteBefore(beforeMs: number, options?: DeleteOptions): Promise<number | undefined> {
    await this.ready('deleteBefore');
    return this.inner.deleteBefore(beforeMs, options);
  }
}
