/**
 * The contract between tagd and its field drivers. A driver owns its connection, writes samples
 * into the store, reconnects by itself with capped backoff, and reports quality: Unavailable
 * while disconnected or never read, Bad on a read or decode error. Staleness is the store's job:
 * a driver that polls declares, when it defines its tags, how often it refreshes each one
 * (`refreshBoundMs`, from {@link pollRefreshBoundMs}), and the store turns a Good tag Stale
 * (NoUpdate) once that bound passes without an update, whatever went wrong in the driver.
 */
import type { Logger } from 'pino';
import type { Clock } from '../src/clock.js';
import type { DbcSignalCatalog } from '../src/tags/dbc-signal-catalog.js';
import type { TagStore } from '../src/tags/tag-store.js';
import type { TagWritePort } from '../src/tags/tag-write-port.js';

// The write types are the TagWriter's port (declared on its side, implemented by drivers); the
// drivers name them through their contract.
export type {
  WritableTag,
  WriteReason,
  WriteRequest,
  WriteResult,
  WriteStatus,
  WriteValue,
} from '../src/tags/tag-write-port.js';

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

/**
 * A running connection to one piece of equipment; its name is the first segment of its tags.
 * A driver that can write implements the TagWriter's write port, which this contract extends.
 */
export interface Driver extends TagWritePort {
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

/**
 * Where a driver reports what only it can time. Counts need no port: they are read from
 * {@link DriverStatus.counters} when metrics are scraped.
 */
export interface DriverMetrics {
  /** One poll (or scan cycle) took this long, seconds; called once per poll, never per tag. */
  observePollSeconds(seconds: number): void;
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
  /** Poll durations for the metrics (`/metrics`). Default: not measured. */
  metrics?: DriverMetrics;
}

/** Builds a driver from its validated config; constructors only assign, start does the I/O. */
export type DriverFactory<Config> = (config: Config, deps: DriverDeps) => Driver;

/** The fullTagId of a driver's tag: `<component>/<tag path>`. */
export function driverTagId(component: string, tagName: string): string {
  return `${component}/${tagName}`;
}

/**
 * The smallest refresh bound a polling driver declares, ms. A bound of a few scan intervals is
 * tens of milliseconds for a fast poll, and an event loop that stalls that long (garbage
 * collection, a history checkpoint, a busy machine) would flash healthy tags Stale into
 * history and webhooks; a second is still quick for a person or a plant system to see a dead
 * source, and the store's sweep (every 250 ms by default) is no finer anyway.
 */
export const minRefreshBoundMs = 1000;

/**
 * The longest a working polling driver takes between two updates of a tag, ms:
 * max(1000, 3 × `intervalMs`, `intervalMs` + `longestPollMs`). A poll's tags are written when
 * it ends and a poll starts on the first tick after the previous one ended, so two updates are
 * at most an interval plus the longest poll apart; three intervals leave room for a late or a
 * skipped tick on a busy machine; {@link minRefreshBoundMs} is the floor. Declared as the tag's
 * `refreshBoundMs`.
 * @param intervalMs how often the tag is read, ms.
 * @param longestPollMs the longest one poll takes while the source works, ms: every answer it
 *   waits for arriving just within its timeout (0 for a source that cannot be late).
 */
export function pollRefreshBoundMs(intervalMs: number, longestPollMs: number): number {
  return Math.max(minRefreshBoundMs, 3 * intervalMs, intervalMs + longestPollMs);
}
