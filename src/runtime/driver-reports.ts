/**
 * What `GET /api/v2/Drivers` tells an operator about each running driver: its type, its state
 * in the words of the API, its last error and when it happened, the counters the driver keeps,
 * and how many of its tags stand at each quality (read from the store, so it is what clients
 * see). Nothing of the driver's configuration is a field of the report, and its messages name
 * a file by its name alone, never the folder it is in (without-folders.ts); they do name the
 * device the driver could not reach (host and port, serial device), which an operator acts on.
 *
 * States: the driver contract's `Running`, `Reconnecting` and `Stopped` are kept; `Starting`
 * (not connected yet, retrying on its backoff) is reported as `Reconnecting`, `Error` (given up
 * until its configuration changes) as `Failed`. The contract's own state is in `driverState`.
 *
 * Beside the running drivers rather than in `src/api/`: the Drivers and Status routes and the
 * metrics read the reports, and none of them imports a driver.
 */
import type { Driver, DriverState } from '../../drivers/driver.js';
import { type Clock, systemClock, type TimerHandle } from '../clock.js';
import type { Quality } from '../tags/sample.js';
import type { TagStore } from '../tags/tag-store.js';
import { withoutFolders } from './without-folders.js';

/** A driver's state as the API reports it. */
export type DriverApiState = 'Running' | 'Reconnecting' | 'Stopped' | 'Failed';

/** The API state of a contract state (see the module comment). */
export function apiStateOf(state: DriverState): DriverApiState {
  switch (state) {
    case 'Running':
    case 'Stopped':
    case 'Reconnecting':
      return state;
    case 'Starting':
      return 'Reconnecting';
    case 'Error':
      return 'Failed';
  }
}

/** One driver as the API shows it. */
export interface DriverReport {
  name: string;
  type: string;
  state: DriverApiState;
  /** The driver contract's state (`Starting`, `Error`, …). */
  driverState: DriverState;
  /** When the driver entered its state, ISO 8601 UTC. */
  since: string;
  /** Why the driver is in its state (Reconnecting, Failed). */
  message?: string;
  /** The most recent error seen (Reconnecting or Failed with a message), kept after recovery. */
  lastError?: { message: string; utcTimestamp: string };
  /** Driver-specific running totals. */
  counters: Record<string, number>;
  /** Tags the driver declares. */
  tagCount: number;
  /** Tags of the driver in the store, per quality. */
  tagsByQuality: Record<Quality, number>;
}

/** Options of {@link DriverReports}. */
export interface DriverReportsOptions {
  /** The running drivers (those that started). */
  drivers: () => readonly Driver[];
  store: TagStore;
  clock?: Clock;
  /** How often driver states are sampled for `lastError`, ms. Default 1000. */
  sampleIntervalMs?: number;
}

/**
 * Builds {@link DriverReport}s. A driver reports only its current state, so the last error is
 * remembered here: sampled every second while started, and at each request.
 */
export class DriverReports {
  // Per driver instance, not name: a driver restarted with a new configuration (a reload, the
  // Drivers routes) starts without the old configuration's last error.
  private readonly lastErrors = new WeakMap<Driver, { message: string; utcTimestamp: string }>();
  private readonly clock: Clock;
  private timer: TimerHandle | undefined;

  constructor(private readonly options: DriverReportsOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** Starts sampling driver states. Idempotent. */
  async start(): Promise<void> {
    if (this.timer !== undefined) return;
    this.timer = this.clock.setInterval(() => this.sample(), this.options.sampleIntervalMs ?? 1000);
  }

  /** Stops sampling. Idempotent. */
  async stop(): Promise<void> {
    this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  /** Every driver, in profile order. */
  list(): DriverReport[] {
    const counts = this.countQualities();
    return this.options.drivers().map((driver) => this.report(driver, counts));
  }

  /** One driver, or undefined. */
  get(name: string): DriverReport | undefined {
    const driver = this.options.drivers().find((candidate) => candidate.name === name);
    return driver ? this.report(driver, this.countQualities(name)) : undefined;
  }

  private sample(): void {
    for (const driver of this.options.drivers()) this.remember(driver, driver.status());
  }

  private remember(driver: Driver, status: ReturnType<Driver['status']>): void {
    if ((status.state === 'Reconnecting' || status.state === 'Error') && status.message) {
      this.lastErrors.set(driver, {
        message: withoutFolders(status.message),
        utcTimestamp: status.since,
      });
    }
  }

  private report(driver: Driver, counts: Map<string, Record<Quality, number>>): DriverReport {
    const status = driver.status();
    this.remember(driver, status);
    const lastError = this.lastErrors.get(driver);
    return {
      name: driver.name,
      type: driver.type,
      state: apiStateOf(status.state),
      driverState: status.state,
      since: status.since,
      ...(status.message !== undefined ? { message: withoutFolders(status.message) } : {}),
      ...(lastError ? { lastError } : {}),
      counters: { ...status.counters },
      tagCount: status.tagCount,
      tagsByQuality: counts.get(driver.name) ?? emptyCounts(),
    };
  }

  // One pass over the store: a tag's driver is its first segment.
  private countQualities(only?: string): Map<string, Record<Quality, number>> {
    const { store } = this.options;
    const counts = new Map<string, Record<Quality, number>>();
    const prefix = only === undefined ? undefined : `${only}/`;
    for (const id of store.ids()) {
      if (prefix !== undefined && !id.startsWith(prefix)) continue;
      const component = id.slice(0, id.indexOf('/'));
      const sample = store.get(id);
      if (!sample) continue;
      let record = counts.get(component);
      if (!record) {
        record = emptyCounts();
        counts.set(component, record);
      }
      record[sample.quality] += 1;
    }
    return counts;
  }
}

function emptyCounts(): Record<Quality, number> {
  return { Good: 0, Stale: 0, Unavailable: 0, Bad: 0 };
}
