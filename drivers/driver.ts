/**
 * The contract between tagd and its field drivers. A driver owns its connection, writes samples
 * into the store, reconnects by itself with capped backoff, and reports quality: Unavailable
 * while disconnected or never read, Bad on a read or decode error. Staleness is the store's job.
 */
import type { Logger } from 'pino';
import type { Clock } from '../src/clock.js';
import type { DbcSignalCatalog } from '../src/dbc/signal-catalog.js';
import type { TagStore } from '../src/tags/tag-store.js';

/** Lifecycle state of a driver. */
export type DriverState = 'Stopped' | 'Starting' | 'Running' | 'Reconnecting' | 'Error';

/** What a driver reports about itself (API and logs). */
export interface DriverStatus {
  state: DriverState;
  /** When the driver entered `state`, ISO 8601 UTC. */
  since: string;
  /** Why the driver is in this state, for Reconnecting and Error. */
  message?: string;
  /** Number of tags the driver serves. */
  tagCount: number;
  /** Driver-specific running totals, e.g. frames received or ignored (CAN). */
  counters?: Record<string, number>;
}

/** A running connection to one piece of equipment; its name is the first segment of its tags. */
export interface Driver {
  /** Component name: the first segment of every tag the driver writes. */
  readonly name: string;
  /** Driver type as written in the profile, e.g. `simulator`. */
  readonly type: string;
  /** Declares the tags and starts reading. Resolves once started, not once connected. Idempotent. */
  start(): Promise<void>;
  /** Stops reading, releases sockets and timers, marks its tags Unavailable. Idempotent. */
  stop(): Promise<void>;
  /** Current state. */
  status(): DriverStatus;
}

/** What every driver is given. */
export interface DriverDeps {
  store: TagStore;
  clock: Clock;
  /** Logger bound to this driver (`component` is its name). */
  logger: Logger;
  /** The daemon's state directory (for certificates, caches). */
  stateDir: string;
  /**
   * Folder of the profile file: relative file paths in a driver's config (a DBC file, a replay
   * log) are resolved from here. Default: the working directory.
   */
  profileDir?: string;
  /** Where CAN drivers register their DBC, for the API's DBC route. Default: not registered. */
  dbc?: DbcSignalCatalog;
}

/** Builds a driver from its validated config; constructors only assign, start does the I/O. */
export type DriverFactory<Config> = (config: Config, deps: DriverDeps) => Driver;

/** The fullTagId of a driver's tag: `<component>/<tag path>`. */
export function driverTagId(component: string, tagName: string): string {
  return `${component}/${tagName}`;
}
