/**
 * The webhook publishers of the daemon: created from the profile at load, managed over the API
 * through {@link PublisherManager}. A publisher runs only when the data relay feature is
 * licensed, at least one collection is selected and every selected collection exists (spec
 * §3.1); otherwise it stays Off and says why.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { NotFoundError } from '../../errors.js';
import type { LicenseState } from '../../license/license.js';
import { Outbox } from '../../outbox/outbox.js';
import type { Collections } from '../../tags/collections.js';
import type { TagStore } from '../../tags/tag-store.js';
import type {
  PublisherManager,
  PublisherMetrics,
  PublisherQueue,
  PublisherState,
} from '../publisher.js';
import { runBlocker } from '../run-conditions.js';
import type { WebhookConfig } from './schema.js';
import { WebhookPublisher } from './webhook-publisher.js';

/** Dependencies of {@link WebhookPublishers}. */
export interface WebhookPublishersDeps {
  /** Members are read from it and health tags written to it. */
  store: TagStore;
  /** The profile's collections (and those added over the API). */
  collections: Collections;
  /** Runs intervals and retry waits. */
  clock: Clock;
  /** The daemon's logger. */
  logger: Logger;
  /** The license in force, asked at every start (it can be replaced while the daemon runs). */
  license: () => LicenseState;
  /** tagd's version, for the User-Agent. */
  version: string;
  /** Folder a relative `caFile` is resolved against (the profile's). Default: the working directory. */
  baseDir?: string;
  /** The state directory (the storeAndForward outbox). */
  stateDir?: string;
  /** Delivery durations for the metrics. Default: not measured. */
  metrics?: PublisherMetrics;
}

/** Reason of a publisher that stays Off because Auto Connect is off. */
export const autoConnectOffReason = 'Auto Connect is off.';

/** The webhook publishers, in configuration order. */
export class WebhookPublishers implements PublisherManager<WebhookConfig> {
  private readonly publishers = new Map<string, WebhookPublisher>();
  private readonly log: Logger;

  constructor(private readonly deps: WebhookPublishersDeps) {
    this.log = deps.logger.child({ component: 'webhook' });
  }

  /**
   * Profile load: creates every publisher and starts those with Auto Connect on whose run
   * conditions hold; each one that stays Off logs one line saying why. Publishers from an
   * earlier call are stopped and replaced.
   */
  async startAll(configs: readonly WebhookConfig[]): Promise<void> {
    await this.stopAll();
    const kept = new Set(configs.map((config) => config.name));
    for (const name of this.publishers.keys())
      if (!kept.has(name)) this.deps.metrics?.removed(name);
    this.publishers.clear();
    for (const config of configs) {
      const publisher = this.create(config);
      if (config.autoConnect) await this.tryStart(publisher);
      else this.keepOff(publisher, autoConnectOffReason, 'info');
    }
  }

  /** Stops every publisher (daemon shutdown); they stay listed, Off. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.publishers.values()].map((publisher) => publisher.stop()));
  }

  list(): PublisherState[] {
    return [...this.publishers.values()].map((publisher) => publisher.state());
  }

  get(name: string): PublisherState | undefined {
    return this.publishers.get(name)?.state();
  }

  /** The configuration of a publisher, secrets in plaintext, or undefined. */
  config(name: string): WebhookConfig | undefined {
    return this.publishers.get(name)?.config;
  }

  async put(config: WebhookConfig): Promise<PublisherState> {
    const existing = this.publishers.get(config.name);
    if (existing !== undefined) {
      const wasRunning = existing.running;
      // A running publisher is restarted by reconfigure(); check its conditions again first.
      const blocker = wasRunning ? this.blocker(config) : undefined;
      if (blocker !== undefined) {
        await existing.stop(blocker);
        await existing.reconfigure(config);
        this.log.warn(`Webhook publisher '${config.name}' stopped: ${blocker}`);
      } else {
        await existing.reconfigure(config);
      }
      return existing.state();
    }
    const publisher = this.create(config);
    if (config.autoConnect) await this.tryStart(publisher);
    else this.keepOff(publisher, autoConnectOffReason, 'info');
    return publisher.state();
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
    this.deps.metrics?.removed(name);
    // Its stored batches go with it: a later publisher of that name starts empty.
    const outboxFile = publisher.outboxFile;
    if (outboxFile !== undefined) Outbox.discard(outboxFile);
    return true;
  }

  /** @throws NotFoundError when no publisher has that name. */
  async start(name: string): Promise<PublisherState> {
    const publisher = this.require(name);
    await this.tryStart(publisher);
    return publisher.state();
  }

  /** @throws NotFoundError when no publisher has that name. */
  async stop(name: string): Promise<PublisherState> {
    const publisher = this.require(name);
    await publisher.stop();
    return publisher.state();
  }

  private create(config: WebhookConfig): WebhookPublisher {
    const { store, collections, clock, logger, version, baseDir, stateDir, metrics } = this.deps;
    const publisher = new WebhookPublisher(config, {
      store,
      collections,
      clock,
      logger,
      version,
      ...(baseDir !== undefined ? { baseDir } : {}),
      ...(stateDir !== undefined ? { stateDir } : {}),
      ...(metrics !== undefined ? { metrics } : {}),
    });
    this.publishers.set(config.name, publisher);
    return publisher;
  }

  private require(name: string): WebhookPublisher {
    const publisher = this.publishers.get(name);
    if (publisher === undefined) throw new NotFoundError(`No webhook publisher named '${name}'.`);
    return publisher;
  }

  private async tryStart(publisher: WebhookPublisher): Promise<void> {
    if (publisher.running) return;
    const blocker = this.blocker(publisher.config);
    if (blocker !== undefined) this.keepOff(publisher, blocker, 'warn');
    else await publisher.start();
  }

  private keepOff(publisher: WebhookPublisher, reason: string, level: 'info' | 'warn'): void {
    publisher.setOff(reason);
    this.log[level](`Webhook publisher '${publisher.name}' stays Off: ${reason}`);
  }

  /** Why a publisher with this configuration cannot run, or undefined when it can. */
  private blocker(config: WebhookConfig): string | undefined {
    return runBlocker(this.deps.license(), this.deps.collections, config.collections);
  }
}
