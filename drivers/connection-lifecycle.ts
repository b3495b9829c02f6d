/**
 * The lifecycle every connected driver shares: a single-flight start, a stop that waits for a
 * start under way, a run generation that lets late callbacks of an earlier connection know they
 * are stale, reconnection after a doubling, capped wait on the injected clock, the
 * state/since/message of the status, and writing the tags Unavailable once per outage.
 * A driver owns one by composition and keeps what is its own: the connection itself, its
 * samples and its log lines about connecting.
 */
import type { TimerHandle } from '../src/clock.js';
import type { DriverDeps, DriverState, DriverStatus } from './driver.js';
import { driverStoppedMessage } from './unavailable-sample.js';

/** The reconnection settings every connected driver's config has. */
export interface ReconnectBackoff {
  /** Wait before the first reconnection attempt after a failure, ms; doubles on every failure. */
  reconnectDelayMs: number;
  /** Longest wait between reconnection attempts, ms: the doubling stops here. */
  maxReconnectDelayMs: number;
}

/** What a {@link ConnectionLifecycle} needs of the driver it serves. */
export interface LifecycleHooks {
  /** A copy of the driver's running totals, for the status and the log line of a stop. */
  counters(): Record<string, number>;
  /**
   * Writes every tag of the driver Unavailable (Disconnected) with `message`. Called through
   * {@link ConnectionLifecycle.markUnavailable}, so at most once per outage.
   */
  writeUnavailable(message: string): void;
}

/**
 * Start, stop, reconnection backoff and status bookkeeping of one driver. The driver calls
 * {@link start} and {@link stop} with its own steps, {@link started} once its tags are declared,
 * {@link retryLater} when a connection fails and {@link resetBackoff} once the device has
 * proved it answers.
 */
export class ConnectionLifecycle {
  private state: DriverState = 'Stopped';
  /** When `state` was entered, epoch ms. */
  private since: number;
  private message: string | undefined;
  private starting: Promise<void> | undefined;
  private isRunning = false;
  /** Bumped on every start and stop (and on request): callbacks of an older one are ignored. */
  private run = 0;
  private reconnectTimer: TimerHandle | undefined;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  /** The wait the next {@link retryLater} schedules, ms. */
  private reconnectDelayMs: number;
  private attemptCount = 0;
  private lastFailure: string | undefined;
  /** True once every tag has been written Unavailable for the current outage. */
  private markedUnavailable = false;

  /**
   * @param label the driver's kind as its log lines name it, e.g. `CAN`, `Modbus`, `OPC UA`.
   * @param deps the driver's clock (for the waits and `since`) and logger.
   * @param backoff the driver's reconnection settings, read once here.
   * @param hooks what only the driver knows: its counters and how its tags turn Unavailable.
   */
  constructor(
    private readonly label: string,
    private readonly deps: Pick<DriverDeps, 'clock' | 'logger'>,
    backoff: ReconnectBackoff,
    private readonly hooks: LifecycleHooks,
  ) {
    this.since = deps.clock.now();
    this.initialDelayMs = backoff.reconnectDelayMs;
    this.maxDelayMs = backoff.maxReconnectDelayMs;
    this.reconnectDelayMs = backoff.reconnectDelayMs;
  }

  /** True between a successful start and the next stop, reconnecting or not. */
  get running(): boolean {
    return this.isRunning;
  }

  /** The current run generation; compare with {@link isCurrent}. */
  get generation(): number {
    return this.run;
  }

  /** Connection attempts since the last success or loss (1 during the first attempt). */
  get attempts(): number {
    return this.attemptCount;
  }

  /** True when `generation` is still the current one: nothing stopped or superseded it. */
  isCurrent(generation: number): boolean {
    return generation === this.run;
  }

  /**
   * Runs `begin` unless the driver runs already; callers during a start share its promise, so
   * two starts never prepare the driver twice. `begin` calls {@link started} once it succeeds.
   */
  start(begin: () => Promise<void>): Promise<void> {
    if (this.isRunning) return Promise.resolve();
    this.starting ??= begin().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /**
   * The driver is prepared and about to connect: running, backoff reset, state Starting.
   * @returns the generation the first connection attempt belongs to.
   */
  started(): number {
    this.isRunning = true;
    this.run++;
    this.markedUnavailable = false;
    this.resetBackoff();
    this.setState('Starting');
    return this.run;
  }

  /**
   * Stops after a start under way has settled: ends the generation (so late callbacks of the
   * connection are ignored) and clears the reconnection wait before `release` closes the
   * connection; then writes the tags Unavailable, enters Stopped and logs the counters.
   * Does nothing when not running.
   */
  async stop(release: () => Promise<void>): Promise<void> {
    await this.starting?.catch(() => {});
    if (!this.isRunning) return;
    this.isRunning = false;
    this.run++;
    this.deps.clock.clearTimer(this.reconnectTimer);
    this.reconnectTimer = undefined;
    await release();
    // Whatever the tags showed, a stopped driver leaves them all Unavailable with this message.
    this.markedUnavailable = false;
    this.markUnavailable(driverStoppedMessage);
    this.setState('Stopped');
    this.deps.logger.info({ counters: this.hooks.counters() }, `${this.label} driver stopped`);
  }

  /** Starts a new generation while running, so callbacks of a failed attempt are ignored. */
  nextGeneration(): number {
    return ++this.run;
  }

  /** Counts a connection attempt (see {@link attempts}). */
  attempt(): void {
    this.attemptCount++;
  }

  /** A connection that was up is lost: the next success is a first attempt again. */
  resetAttempts(): void {
    this.attemptCount = 0;
  }

  /** The device answers: the next failure waits the initial delay and is logged as new. */
  resetBackoff(): void {
    this.attemptCount = 0;
    this.lastFailure = undefined;
    this.reconnectDelayMs = this.initialDelayMs;
  }

  /**
   * Runs a step of the driver that nobody awaits: a connection attempt, at start or after a
   * wait. A step deals with its own failures (a refused connection is a retry); one that throws
   * or rejects all the same is a bug the driver cannot recover from by itself, so the driver
   * enters Error (the API's Failed) with the reason, its tags turn Unavailable and the error is
   * logged: it never escapes to the daemon, and the other drivers keep running. A failure of a
   * generation already over (the driver stopped or moved on) is only logged.
   * @param run the generation the step belongs to.
   */
  detached(run: number, step: () => unknown): void {
    let done: Promise<unknown>;
    try {
      // Awaited when it returns a promise: a step must return it, not discard it with `void`.
      done = Promise.resolve(step());
    } catch (error) {
      done = Promise.reject(error);
    }
    done.catch((error: unknown) => this.crashed(run, error));
  }

  private crashed(run: number, error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    const { logger, clock } = this.deps;
    if (!this.isCurrent(run) || !this.isRunning) {
      logger.warn({ err: error }, `${this.label} driver: a step of an earlier run failed`);
      return;
    }
    logger.error({ err: error }, `${this.label} driver failed; the other drivers keep running`);
    clock.clearTimer(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const message = `The driver failed: ${reason}`;
    // Whatever the tags showed, none of them is updated any more.
    this.markedUnavailable = false;
    this.markUnavailable(message);
    this.setState('Error', message);
  }

  /**
   * Enters Reconnecting with `message` and runs `reconnect` after the current wait, which then
   * doubles up to `maxReconnectDelayMs`. A wait already scheduled is replaced, never doubled up.
   * `reconnect` runs as a {@link detached} step of the generation current when it is scheduled.
   */
  retryLater(message: string, reconnect: () => unknown): void {
    const { logger, clock } = this.deps;
    const label = this.label;
    const delay = this.reconnectDelayMs;
    // The same failure again and again (a device switched off) is logged once, not every retry.
    if (message !== this.lastFailure) {
      logger.warn({ retryInMs: delay }, `${label} connection failed: ${message}`);
    } else logger.debug({ retryInMs: delay }, `${label} connection failed again`);
    this.lastFailure = message;
    this.setState('Reconnecting', message);
    this.reconnectDelayMs = Math.min(delay * 2, this.maxDelayMs);
    clock.clearTimer(this.reconnectTimer);
    const run = this.run;
    this.reconnectTimer = clock.setTimeout(() => {
      this.reconnectTimer = undefined;
      this.detached(run, reconnect);
    }, delay);
  }

  /** Writes every tag Unavailable (Disconnected) with `message`, once per outage. */
  markUnavailable(message: string): void {
    if (this.markedUnavailable) return;
    this.markedUnavailable = true;
    this.hooks.writeUnavailable(message);
  }

  /** Values arrived: the next outage writes the tags Unavailable again. */
  markAvailable(): void {
    this.markedUnavailable = false;
  }

  /** Enters `state`; `since` moves only when the state changes, the message always. */
  setState(state: DriverState, message?: string): void {
    if (state !== this.state) this.since = this.deps.clock.now();
    this.state = state;
    this.message = message;
  }

  /** The driver's status with its `tagCount`. */
  status(tagCount: number): DriverStatus {
    return {
      state: this.state,
      since: new Date(this.since).toISOString(),
      ...(this.message !== undefined ? { message: this.message } : {}),
      tagCount,
      counters: this.hooks.counters(),
    };
  }
}
