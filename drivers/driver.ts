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
import type { DbcSignalCatalog } from '../src/dbc/signal-catalog.js';
import type { TagValue } from '../src/tags/sample.js';
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
  /**
   * The tags the profile lets clients write, with what a value must be (drivers that cannot
   * write leave this out). Read by the TagWriter once the driver has started.
   */
  writableTags?(): readonly WritableTag[];
  /**
   * Checks that need the device but write nothing (an OPC UA node's DataType, read once and
   * cached), for values that passed {@link WritableTag.check}: one message per request that
   * cannot be written, undefined for the others. Optional; a request it refuses is never
   * written, and neither is any other of the same client request.
   */
  checkWrites?(requests: readonly WriteRequest[]): Promise<(string | undefined)[]>;
  /**
   * Writes values to the device, in order, each once: never retried, whatever happens. Resolves
   * with one result per request once the device acknowledged or refused each (or its answer
   * could not come). A Good write makes the driver read the tag back at once, so the new value
   * reaches the store without waiting for the next poll.
   */
  write?(requests: readonly WriteRequest[]): Promise<WriteResult[]>;
}

/**
 * A value as a client sends it: a number, boolean or string (a 64-bit integer at or beyond
 * ±2^53 as its decimal string, since a JSON number cannot hold it exactly).
 */
export type WriteValue = TagValue;

/** One tag the profile marks writable. */
export interface WritableTag {
  fullTagId: string;
  /** Least value a client may write, engineering units (after scaling). Default: none. */
  writeMin?: number;
  /** Greatest value a client may write, engineering units. Default: none. */
  writeMax?: number;
  /**
   * Whether the owning driver's `allowWrites` master switch is on (default false in every
   * profile): off, every write to the tag is refused before any I/O.
   */
  allowWrites: boolean;
  /**
   * Whether `value` fits the tag (JSON type, range of the device type, string length): a
   * message naming what is wrong, or undefined. Runs before any I/O; NaN and infinities are
   * refused before it is called.
   * @param numberText a number `value` as the client spelt it, when known (see
   *   {@link WriteRequest.numberText}).
   */
  check(value: WriteValue, numberText?: string): string | undefined;
}

/** One value to write, already checked. */
export interface WriteRequest {
  fullTagId: string;
  value: WriteValue;
  /**
   * When `value` is a number: its JSON text as the client sent it, which JSON parsing may have
   * rounded (`9007199254740993` arrives as 9007199254740992). Integer checks compare the two and
   * refuse a value that is not the number written. Absent when not known.
   */
  numberText?: string;
}

/**
 * What happened to one write: `Good` the device acknowledged it; `Bad` it was refused or never
 * sent (no change on the device); `Uncertain` the request went out and no answer came, so the
 * device may or may not have applied it (reason `OutcomeUnknown`; it is never re-sent).
 */
export type WriteStatus = 'Good' | 'Bad' | 'Uncertain';

/** Why a write is not Good. */
export type WriteReason =
  /** The request was sent and its answer never came (timeout, connection lost meanwhile). */
  | 'OutcomeUnknown'
  /** The driver had no connection: nothing was sent. */
  | 'Disconnected'
  /** Nothing was written: a request the write needed first (a read) was not answered. */
  | 'Timeout'
  /** The device answered with an exception (Modbus); the message names it. */
  | 'DeviceException'
  /** The device's answer did not fit the request. */
  | 'DecodeError'
  /** The driver cannot write this value (a type it does not handle). */
  | 'NotSupported'
  /** An OPC UA status code name, e.g. `BadNotWritable`, `BadTypeMismatch`. */
  | `Bad${string}`
  | `Uncertain${string}`;

/** The answer to one {@link WriteRequest}. */
export interface WriteResult {
  status: WriteStatus;
  reason?: WriteReason;
  /** Human-readable detail, safe for clients. */
  message?: string;
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
