/**
 * The drivers the daemon runs, by name, in profile order: started at start-up, and started,
 * restarted or stopped one by one when the profile changes (reload, the Drivers routes), so the
 * other drivers never notice.
 *
 * A driver that is stopped for good (removed from the profile, disabled) or restarted with
 * another configuration has its tags removed from the store: a restarted driver defines its
 * tags anew (Unavailable, NeverRead, until its first read), so a tag it no longer has does not
 * linger as Unavailable forever; collections drop removed tags (Collections listens to the
 * store), and history logs what the store holds, so both follow without a restart of their own.
 * At a daemon stop the tags stay in the store, Unavailable, as they always did.
 *
 * A driver that failed to start, or that was left out because a file it names cannot be used,
 * is listed all the same, as a driver in Error (the API's Failed) with no tags and a reason, so
 * the Drivers API, `tagd status` and the metrics show it instead of leaving it out silently;
 * the other drivers keep running. The reason names no more than the fields at fault: the
 * Drivers API is for every DriverView account, and a parse error may quote a file (the log, for
 * operators, has the detail).
 *
 * A driver whose type needs a licensed feature the license in force lacks (the relay drivers:
 * the data relay, src/license/licensed-drivers.ts) is not started either: it is listed in Error
 * with the reason naming the feature and the editions that include it, as a publisher stays Off
 * saying so; the rest of the gateway runs.
 */
import type { Logger } from 'pino';
import type { Driver, DriverDeps, DriverMetrics } from '../../drivers/driver.js';
import { createDriver, type DriverConfig } from '../../drivers/registry.js';
import type { FieldError } from '../errors.js';
import type { LicenseState } from '../license/license.js';
import { driverLicenseBlocker } from '../license/licensed-drivers.js';
import type { TagStore } from '../tags/tag-store.js';

/** Options of {@link RunningDrivers}. */
export interface RunningDriversOptions {
  /** What every driver is given, except its logger (a child of `logger` per driver). */
  shared: Omit<DriverDeps, 'logger' | 'store'>;
  store: TagStore;
  /** The daemon's logger; each driver logs as `component: <name>, driver: <type>`. */
  logger: Logger;
  /** The license in force, asked at every start (a reload can replace it). */
  license: () => LicenseState;
  /**
   * Called once a driver has started, and before it stops: where the daemon keeps what maps
   * tags to drivers in step (the TagWriter's routes to writable tags). Default: nothing.
   */
  hooks?: { started?(driver: Driver): void; stopping?(driver: Driver): void };
  /**
   * Makes each driver's metrics port (poll durations); its series are removed with the driver
   * (stopped for good, restarted, failed to start). Default: not measured.
   */
  metrics?: (name: string, type: string) => { port: DriverMetrics; remove(): void };
}

/** What became of a driver that was asked to start. */
export type DriverStartOutcome =
  | { ok: true; driver: Driver }
  /** `disabled`: the profile has it disabled; nothing runs, nothing failed. */
  | { ok: true; driver: undefined; disabled: true }
  | { ok: false; message: string };

/** Status message of a driver whose start failed. */
export const startFailedMessage = 'The driver failed to start; the gateway log says why.';

/** Status message of a driver left out because of files it names, e.g. `certificateFile`. */
export function filesUnusableMessage(fields: readonly string[]): string {
  return `A file the driver names cannot be used (${fields.join(', ')}); the gateway log says why.`;
}

/** The running drivers; see the module comment. */
export class RunningDrivers {
  private readonly drivers = new Map<string, Driver>();
  /** Drivers that failed to start or were left out, by name: listed, never run. */
  private readonly failed = new Map<string, Driver>();
  /** Removes each driver's metric series, by driver name. */
  private readonly metricsRemovers = new Map<string, () => void>();
  private order: string[] = [];

  constructor(private readonly options: RunningDriversOptions) {}

  /**
   * The running drivers and those that failed (see the module comment), in profile order (the
   * last {@link arrange} order, then start order).
   */
  list(): Driver[] {
    const find = (name: string) => this.drivers.get(name) ?? this.failed.get(name);
    const known = this.order.filter((name) => find(name) !== undefined);
    const rest = [...this.drivers.keys(), ...this.failed.keys()].filter(
      (name) => !known.includes(name),
    );
    return [...known, ...rest].map((name) => find(name) as Driver);
  }

  /** The running driver of that name, or undefined (also for one that failed). */
  get(name: string): Driver | undefined {
    return this.drivers.get(name);
  }

  /** Sets the order {@link list} reports drivers in: the profile's. */
  arrange(names: readonly string[]): void {
    this.order = [...names];
  }

  /**
   * Creates and starts a driver. A driver that fails to load or start is logged and left out,
   * so the other equipment keeps being read; a disabled one is logged and not started; one the
   * license does not allow is logged and listed in Error, not started (`ok: false`).
   * A driver of that name still running is stopped first (its tags removed).
   */
  async start(config: DriverConfig): Promise<DriverStartOutcome> {
    if (this.drivers.has(config.name)) await this.stop(config.name);
    this.failed.delete(config.name);
    const logger = this.options.logger.child({ component: config.name, driver: config.type });
    if (!config.enabled) {
      logger.info('driver disabled in the profile');
      return { ok: true, driver: undefined, disabled: true };
    }
    const unlicensed = this.licenseBlocker(config);
    if (unlicensed !== undefined) {
      logger.warn(`driver not started: ${unlicensed}`);
      this.failed.set(config.name, this.failedDriver(config, unlicensed));
      return { ok: false, message: unlicensed };
    }
    const metrics = this.options.metrics?.(config.name, config.type);
    if (metrics) this.metricsRemovers.set(config.name, () => metrics.remove());
    try {
      const driver = await createDriver(config, {
        ...this.options.shared,
        store: this.options.store,
        logger,
        ...(metrics ? { metrics: metrics.port } : {}),
      });
      await driver.start();
      this.drivers.set(config.name, driver);
      this.options.hooks?.started?.(driver);
      return { ok: true, driver };
    } catch (error) {
      this.removeMetrics(config.name);
      logger.error({ err: error }, 'driver failed to start; the other drivers keep running');
      this.failed.set(config.name, this.failedDriver(config, startFailedMessage));
      return { ok: false, message: error instanceof Error ? error.message : String(error) };
    }
  }

  /**
   * Why a driver of this configuration may not run under the license in force (its type needs
   * a feature the license lacks), or undefined when it may.
   */
  licenseBlocker(config: Pick<DriverConfig, 'type'>): string | undefined {
    return driverLicenseBlocker(this.options.license(), config.type);
  }

  /**
   * Lists a driver that is not started because files it names cannot be used (a start-up or
   * reload check found them): Failed, naming the fields. A driver of that name still running is
   * stopped first, and tags of its name are removed, as by {@link stop}.
   * @param problems what the check found, e.g. at `drivers[2].certificateFile`.
   */
  async leaveOut(config: DriverConfig, problems: readonly FieldError[]): Promise<void> {
    await this.stop(config.name);
    // Relative to the driver's entry, as an operator finds them in it: `certificateFile`.
    const fields = problems.map((problem) => problem.path.replace(/^drivers\[\d+\]\./, ''));
    this.failed.set(config.name, this.failedDriver(config, filesUnusableMessage(fields)));
  }

  private failedDriver(config: DriverConfig, message: string): Driver {
    const since = new Date(this.options.shared.clock.now()).toISOString();
    return {
      name: config.name,
      type: config.type,
      start: async () => undefined,
      stop: async () => undefined,
      status: () => ({ state: 'Error', since, message, tagCount: 0, counters: {} }),
    };
  }

  /**
   * Stops a driver and removes its tags from the store (see the module comment). A driver
   * that is not running still has any tags of its name removed (one that failed to start may
   * have defined some). A failing stop is logged, not thrown: the tags go anyway.
   * @returns the ids of the removed tags.
   */
  async stop(name: string): Promise<string[]> {
    const driver = this.drivers.get(name);
    this.drivers.delete(name);
    this.failed.delete(name);
    if (driver) {
      this.options.hooks?.stopping?.(driver);
      try {
        await driver.stop();
      } catch (error) {
        this.options.logger.error({ err: error, component: name }, 'driver stop failed');
      }
    }
    this.removeMetrics(name);
    const prefix = `${name}/`;
    const { store } = this.options;
    return store.remove([...store.ids()].filter((id) => id.startsWith(prefix)));
  }

  private removeMetrics(name: string): void {
    this.metricsRemovers.get(name)?.();
    this.metricsRemovers.delete(name);
  }

  /** Stops every driver, last started first, keeping their tags (Unavailable): daemon stop. */
  async stopAll(): Promise<void> {
    this.failed.clear();
    for (const driver of this.list().reverse()) {
      this.drivers.delete(driver.name);
      this.options.hooks?.stopping?.(driver);
      try {
        await driver.stop();
      } catch (error) {
        this.options.logger.error({ err: error, component: driver.name }, 'stop failed');
      }
    }
  }
}
