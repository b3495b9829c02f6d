/**
 * The publishers of one kind (webhook, MQTT) in the daemon: created from the profile at load,
 * managed over the API through {@link PublisherManager}. A publisher runs only when the data
 * relay feature is licensed, at least one collection is selected and every selected collection
 * exists (spec §3.1); otherwise it stays Off and says why. One whose start fails (a file it
 * names cannot be used, or its start throws) is Error, not running, with a reason, so that
 * monitoring flags it; a later Start, or a replacement, tries again. The kinds differ only in
 * how one publisher is built, so this class holds everything else once.
 */
import type { Logger } from 'pino';
import { type FieldError, NotFoundError } from '../errors.js';
import type { LicenseState } from '../license/license.js';
import { Outbox } from '../outbox/outbox.js';
import type { Collections } from '../tags/collections.js';
import type {
  PublisherManager,
  PublisherMetrics,
  PublisherQueue,
  PublisherState,
} from './publisher.js';
import { runBlocker } from './run-conditions.js';

/** Reason of a publisher that stays Off because Auto Connect is off. */
export const autoConnectOffReason = 'Auto Connect is off.';

/**
 * Reason of a publisher whose start threw: it is Error, not running, and the others keep
 * running. Shown to every PublisherView account, so it says nothing of the error itself; the
 * log has it.
 */
export const startFailedReason = 'The publisher failed to start; the gateway log says why.';

/** What every publisher configuration has that the set reads. */
export interface PublisherSetConfig {
  name: string;
  autoConnect: boolean;
  collections: string[];
}

/** One publisher as the set drives it. */
export interface ManagedPublisher<Config, State> {
  readonly name: string;
  readonly config: Config;
  readonly running: boolean;
  /** Its durable outbox file, if it has one: deleted with the publisher. */
  readonly outboxFile: string | undefined;
  start(): Promise<void>;
  /** Stops it, Off with `reason` (default "stopped"). */
  stop(reason?: string): Promise<void>;
  /** Marks a publisher that is not running Off with a reason. */
  setOff(reason: string): void;
  /** Marks a publisher that is not running because its start failed Error with a reason. */
  setError(reason: string): void;
  /** Takes a new configuration, restarting if it was running. */
  reconfigure(config: Config): Promise<void>;
  state(): State;
  queue(): PublisherQueue;
}

/** What the set itself needs; each kind adds what its publishers need. */
export interface PublisherSetDeps {
  /** The profile's collections (and those added over the API). */
  collections: Collections;
  /** The daemon's logger. */
  logger: Logger;
  /** The license in force, asked at every start (it can be replaced while the daemon runs). */
  license: () => LicenseState;
  /** Delivery durations for the metrics. Default: not measured. */
  metrics?: PublisherMetrics;
}

/** How a kind of publisher is named in logs and answers. */
export interface PublisherKind {
  /** The logger's `component`, e.g. `webhook`. */
  component: string;
  /** The kind as it starts a log line, e.g. `Webhook` or `MQTT`. */
  label: string;
  /** The kind inside a sentence, e.g. `webhook` or `MQTT`. */
  noun: string;
}

/** The publishers of one kind, in configuration order. */
export abstract class PublisherSet<
  Config extends PublisherSetConfig,
  State extends PublisherState,
  Publisher extends ManagedPublisher<Config, State>,
> implements PublisherManager<Config, State>
{
  private readonly publishers = new Map<string, Publisher>();
  private readonly log: Logger;

  constructor(
    private readonly setDeps: PublisherSetDeps,
    private readonly kind: PublisherKind,
  ) {
    this.log = setDeps.logger.child({ component: kind.component });
  }

  /** Builds one publisher of this kind; constructors only assign, so nothing runs yet. */
  protected abstract build(config: Config): Publisher;

  /**
   * Reads and checks the files a configuration names (caFile, a client certificate and key) as
   * its start will; each problem's path is relative to the configuration.
   */
  abstract checkFiles(config: Config): Promise<FieldError[]>;

  /**
   * Profile load: creates every publisher and starts those with Auto Connect on whose run
   * conditions hold; each one that stays Off logs one line saying why. Publishers from an
   * earlier call are stopped and replaced.
   */
  async startAll(configs: readonly Config[]): Promise<void> {
    await this.stopAll();
    const kept = new Set(configs.map((config) => config.name));
    for (const name of this.publishers.keys())
      if (!kept.has(name)) this.setDeps.metrics?.removed(name);
    this.publishers.clear();
    for (const config of configs) await this.add(config);
  }

  /** Stops every publisher (daemon shutdown); they stay listed, Off. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.publishers.values()].map((publisher) => publisher.stop()));
  }

  list(): State[] {
    return [...this.publishers.values()].map((publisher) => publisher.state());
  }

  get(name: string): State | undefined {
    return this.publishers.get(name)?.state();
  }

  /** The configuration of a publisher, secrets in plaintext, or undefined. */
  config(name: string): Config | undefined {
    return this.publishers.get(name)?.config;
  }

  async put(config: Config): Promise<State> {
    const existing = this.publishers.get(config.name);
    if (existing === undefined) return (await this.add(config)).state();
    // One whose start failed meant to run: the new configuration may be what it lacked.
    if (!existing.running && existing.state().status === 'Error') {
      await existing.reconfigure(config);
      if (config.autoConnect) await this.tryStart(existing);
      else this.keepOff(existing, autoConnectOffReason, 'info');
      return existing.state();
    }
    // A running publisher is restarted by reconfigure(); check its conditions again first.
    const blocker = existing.running ? this.blocker(config) : undefined;
    if (blocker !== undefined) {
      await existing.stop(blocker);
      await existing.reconfigure(config);
      this.log.warn(`${this.kind.label} publisher '${config.name}' stopped: ${blocker}`);
    } else {
      // A running publisher starts again inside reconfigure(): guarded like any start.
      await this.guarded(existing, () => existing.reconfigure(config));
    }
    return existing.state();
  }

  /** What waits for delivery in each publisher, in configuration order (metrics). */
  queues(): PublisherQueue[] {
    return [...this.publishers.values()].map((publisher) => publisher.queue());
  }

  async remove(name: string): Promise<boolean> {
    const publisher = this.publishers.get(name);
    if (publisher === undefined) return false;
    await publisher.stop('removed');
    this.publishers.delete(name);
    this.setDeps.metrics?.removed(name);
    // What it had not delivered goes with it: a later publisher of that name starts empty.
    const outboxFile = publisher.outboxFile;
    if (outboxFile !== undefined) Outbox.discard(outboxFile);
    return true;
  }

  /** @throws NotFoundError when no publisher has that name. */
  async start(name: string): Promise<State> {
    const publisher = this.require(name);
    await this.tryStart(publisher);
    return publisher.state();
  }

  /** @throws NotFoundError when no publisher has that name. */
  async stop(name: string): Promise<State> {
    const publisher = this.require(name);
    await publisher.stop();
    return publisher.state();
  }

  private async add(config: Config): Promise<Publisher> {
    const publisher = this.build(config);
    this.publishers.set(config.name, publisher);
    if (config.autoConnect) await this.tryStart(publisher);
    else this.keepOff(publisher, autoConnectOffReason, 'info');
    return publisher;
  }

  private require(name: string): Publisher {
    const publisher = this.publishers.get(name);
    if (publisher === undefined)
      throw new NotFoundError(`No ${this.kind.noun} publisher named '${name}'.`);
    return publisher;
  }

  private async tryStart(publisher: Publisher): Promise<void> {
    if (publisher.running) return;
    const blocker = this.blocker(publisher.config);
    if (blocker !== undefined) this.keepOff(publisher, blocker, 'warn');
    else await this.guarded(publisher, () => publisher.start());
  }

  /**
   * Runs a start (or a reconfiguration that starts again). One that throws leaves this
   * publisher Error, not running, with {@link startFailedReason} and the error in the log; it
   * never reaches the caller, so neither the daemon's start nor an API call fails for one
   * publisher.
   */
  private async guarded(publisher: Publisher, start: () => Promise<void>): Promise<void> {
    try {
      await start();
    } catch (error) {
      this.log.error(
        { err: error },
        `${this.kind.label} publisher '${publisher.name}' failed to start; the other publishers keep running.`,
      );
      // Releases whatever the failed start had set up (timer, connection, outbox).
      await publisher.stop(startFailedReason).catch((stopError: unknown) => {
        this.log.error(
          { err: stopError },
          `${this.kind.label} publisher '${publisher.name}' stop failed.`,
        );
      });
      publisher.setError(startFailedReason);
    }
  }

  private keepOff(publisher: Publisher, reason: string, level: 'info' | 'warn'): void {
    publisher.setOff(reason);
    this.log[level](`${this.kind.label} publisher '${publisher.name}' stays Off: ${reason}`);
  }

  /** Why a publisher with this configuration cannot run, or undefined when it can. */
  private blocker(config: Config): string | undefined {
    return runBlocker(this.setDeps.license(), this.setDeps.collections, config.collections);
  }
}
