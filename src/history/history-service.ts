/**
 * History as the daemon and the API see it: the configured backend, the logger that fills it,
 * and the reads Logged query bindings need (pattern resolution, raw, aggregated, counts).
 */
import { isAbsolute, join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { HistoryUnavailableError } from '../errors.js';
import type { Collections } from '../tags/collections.js';
import { isPattern } from '../tags/tag-pattern.js';
import type { TagStore } from '../tags/tag-store.js';
import type {
  AggregateQuery,
  AggregateValue,
  HistoryBackend,
  HistoryRange,
  RawQuery,
  StoredSample,
} from './history-backend.js';
import type { HistoryConfig } from './history-config.js';
import { HistoryLogger, type HistoryLoggerStats } from './history-logger.js';
import { isUnreachableError, OpenOnUseBackend } from './open-on-use-backend.js';

/** What {@link HistoryService} works with. */
export interface HistoryServiceOptions {
  backend: HistoryBackend;
  store: TagStore;
  collections?: Collections;
  config: HistoryConfig;
  clock: Clock;
  logger: Logger;
  /** Milliseconds between appends. Default 1,000. */
  flushIntervalMs?: number;
}

/** The running history: backend plus logger, and the reads of Logged bindings. */
export class HistoryService {
  readonly backend: HistoryBackend;
  private readonly historyLogger: HistoryLogger;
  private readonly store: TagStore;
  private readonly logger: Logger;

  constructor(options: HistoryServiceOptions) {
    // Opened on use: a database that is unreachable at start is retried at each flush and read.
    this.backend = new OpenOnUseBackend(options.backend);
    this.store = options.store;
    this.logger = options.logger;
    this.historyLogger = new HistoryLogger({
      backend: this.backend,
      store: options.store,
      ...(options.collections ? { collections: options.collections } : {}),
      entries: options.config.log,
      retentionDays: options.config.retentionDays,
      bufferLimit: options.config.bufferLimit,
      clock: options.clock,
      logger: options.logger,
      ...(options.flushIntervalMs !== undefined
        ? { flushIntervalMs: options.flushIntervalMs }
        : {}),
    });
  }

  /**
   * Opens the backend, then starts logging. A backend that cannot be reached (a central
   * PostgreSQL server that is down) does not stop the daemon: logging starts anyway, samples
   * are buffered up to the bound, and every flush tries to open the backend again.
   * @throws the backend's error when it is not a connection problem (a wrong password, a
   * folder that cannot hold the SQLite file): retrying cannot mend those.
   */
  async start(): Promise<void> {
    try {
      await this.backend.start();
    } catch (error) {
      if (!isUnreachableError(error)) throw error;
      this.logger.error(
        { err: error },
        'history backend unreachable at start; samples are buffered in memory and the ' +
          'connection is retried at every flush',
      );
    }
    try {
      await this.historyLogger.start();
    } catch (error) {
      await this.backend.stop();
      throw error;
    }
  }

  /** Stops logging (appending what is buffered), then closes the backend. Idempotent. */
  async stop(): Promise<void> {
    try {
      await this.historyLogger.stop();
    } finally {
      await this.backend.stop();
    }
    this.logger.info(this.historyLogger.stats(), 'history stopped');
  }

  /** Appends what is buffered now (tests, and a clean stop). */
  flush(): Promise<void> {
    return this.historyLogger.flush();
  }

  /** The logger's counters. */
  stats(): HistoryLoggerStats {
    return this.historyLogger.stats();
  }

  /** Whether the backend's last append failed as a whole (samples buffered, retried). */
  get inOutage(): boolean {
    return this.historyLogger.inOutage;
  }

  /**
   * The tags a binding source names in history: those with logged samples plus those in the
   * store now (whose samples may still be on their way), sorted.
   * @throws HistoryUnavailableError when the backend cannot be read.
   */
  async resolve(source: string): Promise<string[]> {
    const logged = await this.guard(() => this.backend.tagIds(source));
    const live = isPattern(source)
      ? this.store.match(source)
      : this.store.has(source)
        ? [source]
        : [];
    return [...new Set([...logged, ...live])].sort();
  }

  /** @throws HistoryUnavailableError when the backend cannot be read. */
  raw(query: RawQuery): Promise<StoredSample[]> {
    return this.guard(() => this.backend.raw(query));
  }

  /** @throws HistoryUnavailableError when the backend cannot be read. */
  aggregate(query: AggregateQuery): Promise<AggregateValue[]> {
    return this.guard(() => this.backend.aggregate(query));
  }

  /** @throws HistoryUnavailableError when the backend cannot be read. */
  count(range: HistoryRange & { afterSeq?: string }): Promise<number> {
    return this.guard(() => this.backend.count(range));
  }

  /** @throws HistoryUnavailableError when the backend cannot be read. */
  lastSeq(): Promise<string> {
    return this.guard(() => this.backend.lastSeq());
  }

  private async guard<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      this.logger.warn({ err: error }, 'history read failed');
      throw new HistoryUnavailableError();
    }
  }
}

/** Where the backend of a history section lives, and what it logs with. */
export interface HistoryBackendContext {
  /** State directory: a relative sqlite file is resolved from it. */
  stateDir: string;
  clock: Clock;
  logger: Logger;
}

/**
 * Creates the backend a history section names. PostgreSQL's module (and `pg`) load only when
 * a profile asks for it.
 */
export async function createHistoryBackend(
  config: HistoryConfig,
  context: HistoryBackendContext,
): Promise<HistoryBackend> {
  if (config.backend === 'sqlite') {
    const { createSqliteBackend } = await import('./sqlite-backend.js');
    return createSqliteBackend({
      file: isAbsolute(config.file) ? config.file : join(context.stateDir, config.file),
      synchronous: config.synchronous,
      logger: context.logger,
      clock: context.clock,
    });
  }
  const { createPostgresBackend } = await import('./postgres-backend.js');
  return createPostgresBackend({ url: config.url, logger: context.logger, clock: context.clock });
}
