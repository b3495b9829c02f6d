/**
 * A history backend that opens itself on first use and tries again on every later use until
 * it succeeds. A central PostgreSQL server that is down when the gateway boots must not keep
 * the gateway from reading its drivers: the history logger buffers (up to its bound) and each
 * flush retries the open, so logging resumes as soon as the server answers.
 */
import type {
  AggregateQuery,
  AggregateValue,
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

/** Wraps a backend so that every call first opens it, once, sharing one attempt at a time. */
export class OpenOnUseBackend implements HistoryBackend {
  private opened = false;
  private opening: Promise<void> | undefined;

  /** @param inner the backend to open on use; its `start` may be called again after a failure. */
  constructor(private readonly inner: HistoryBackend) {}

  /** True once the inner backend has opened. */
  get isOpen(): boolean {
    return this.opened;
  }

  /** Opens the inner backend now; rejects with its error (a later call tries again). */
  start(): Promise<void> {
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

  /** Waits for an open in progress, then closes the inner backend. Idempotent. */
  async stop(): Promise<void> {
    await this.opening?.catch(() => undefined);
    if (!this.opened) return;
    this.opened = false;
    await this.inner.stop();
  }

  async append(samples: readonly LoggedSample[]): Promise<void> {
    await this.start();
    return this.inner.append(samples);
  }

  async raw(query: RawQuery): Promise<StoredSample[]> {
    await this.start();
    return this.inner.raw(query);
  }

  async aggregate(query: AggregateQuery): Promise<AggregateValue[]> {
    await this.start();
    return this.inner.aggregate(query);
  }

  async count(range: HistoryRange & { afterSeq?: string }): Promise<number> {
    await this.start();
    return this.inner.count(range);
  }

  async tagIds(pattern: string): Promise<string[]> {
    await this.start();
    return this.inner.tagIds(pattern);
  }

  async lastSeq(): Promise<string> {
    await this.start();
    return this.inner.lastSeq();
  }

  async deleteBefore(beforeMs: number): Promise<number | undefined> {
    await this.start();
    return this.inner.deleteBefore(beforeMs);
  }
}
