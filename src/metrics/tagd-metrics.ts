/**
 * The metrics of one tagd process: the registry and every collector, wired by the daemon.
 * Components never see this class: each gets its small port (drivers a `DriverMetrics`,
 * publishers a `PublisherMetrics`, the sign-in limiter a `SignInMetrics`, the API an
 * `ApiMetrics`), or is read when Prometheus scrapes (store, history, driver and
 * publisher states and counters), so no hot path reaches into prom-client.
 */
import type { ApiMetrics } from '../api/api-deps.js';
import type { SignInMetrics } from '../auth/sign-in-limiter.js';
import type { PublisherMetrics } from '../publishers/publisher.js';
import type { TagStore } from '../tags/tag-store.js';
import type { TagWriteMetrics } from '../tags/tag-writer.js';
import { registerApiMetrics } from './api-metrics.js';
import {
  DriverMetricsCollector,
  type DriverMetricsHandle,
  type DriverReportSource,
} from './driver-metrics.js';
import { type HistoryStatsSource, registerHistoryMetrics } from './history-metrics.js';
import { type Exposition, MetricsRegistry } from './metrics-registry.js';
import { type NotificationSource, registerNotificationMetrics } from './notification-metrics.js';
import { PublisherMetricsCollector, type PublisherSource } from './publisher-metrics.js';
import { registerSignInMetrics } from './sign-in-metrics.js';
import { registerStoreMetrics } from './store-metrics.js';
import { registerWriteMetrics } from './write-metrics.js';

/** Options of {@link TagdMetrics}. */
export interface TagdMetricsOptions {
  /** tagd's version (`tagd_build_info`). */
  version: string;
  /** Node.js and process metrics. Default true (see {@link MetricsRegistry}). */
  processMetrics?: boolean;
  /** Epoch ms now, for queue ages. Default Date.now. */
  now?: () => number;
}

/** Every metric of the process; see the Monitoring section of docs/operations.md for the series. */
export class TagdMetrics {
  private readonly base: MetricsRegistry;
  private readonly requestEnded: ApiMetrics['requestEnded'];
  private readonly drivers: DriverMetricsCollector;
  private readonly publishers: PublisherMetricsCollector;
  /** The sign-in limiter's port. */
  readonly signIn: SignInMetrics;
  /** The tag writer's port. */
  readonly writes: TagWriteMetrics;
  private driverSource: DriverReportSource | undefined;
  private notificationSource: NotificationSource | undefined;

  constructor(options: TagdMetricsOptions) {
    this.base = new MetricsRegistry({
      version: options.version,
      ...(options.processMetrics !== undefined ? { processMetrics: options.processMetrics } : {}),
    });
    const registry = this.base.registry;
    this.requestEnded = registerApiMetrics(registry);
    this.signIn = registerSignInMetrics(registry);
    this.writes = registerWriteMetrics(registry);
    // The reports exist once the drivers are known; until then no driver is listed.
    this.drivers = new DriverMetricsCollector(registry, {
      list: () => this.driverSource?.list() ?? [],
    });
    this.publishers = new PublisherMetricsCollector(registry, options.now);
    registerNotificationMetrics(registry, () => this.notificationSource);
  }

  /** Alarm e-mail series, read from `source` at each scrape. */
  watchNotifications(source: NotificationSource): void {
    this.notificationSource = source;
  }

  /** Store series, read from `store` at each scrape. */
  watchStore(store: TagStore): void {
    registerStoreMetrics(this.base.registry, store);
  }

  /** History series, read from `history` at each scrape. Call at most once. */
  watchHistory(history: HistoryStatsSource): void {
    registerHistoryMetrics(this.base.registry, history);
  }

  /** Driver states, counters and tag qualities, read from `reports` at each scrape. */
  watchDrivers(reports: DriverReportSource): void {
    this.driverSource = reports;
  }

  /** The port of one driver (poll durations); `remove()` once the driver is removed. */
  driver(name: string, type: string): DriverMetricsHandle {
    return this.drivers.driver(name, type);
  }

  /**
   * Adds a kind of publisher (`webhook`); returns the port its publishers report deliveries
   * to. `source` may be undefined until the manager exists (it needs the port).
   */
  publisherKind(
    type: string,
    source: () => Omit<PublisherSource, 'type'> | undefined,
  ): PublisherMetrics {
    return this.publishers.add(type, source);
  }

  /**
   * The API's port.
   * @param allowLoopbackWithoutToken the profile setting in force, asked per `/metrics` request.
   */
  api(allowLoopbackWithoutToken: () => boolean): ApiMetrics {
    return {
      requestEnded: this.requestEnded,
      exposition: () => this.exposition(),
      allowLoopbackWithoutToken,
    };
  }

  /** Every series now, in the Prometheus text format. */
  exposition(): Promise<Exposition> {
    return this.base.exposition();
  }
}
