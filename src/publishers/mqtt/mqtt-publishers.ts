/**
 * The MQTT publishers of the daemon: created from the profile at load, managed over the API
 * through {@link PublisherManager}, under the webhook publishers' run conditions (data relay
 * licensed, every selected collection exists); a publisher that cannot run stays Off and says why.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { NotFoundError } from '../../errors.js';
import type { LicenseState } from '../../license/license.js';
import { Outbox } from '../../outbox/outbox.js';
import type { Collections } from '../../tags/collections.js';
import type { TagStore } from '../../tags/tag-store.js';
import type { PublisherManager, PublisherMetrics, PublisherQueue } from '../publisher.js';
import { runBlocker } from '../run-conditions.js';
import { MqttPublisher, type MqttPublisherState } from './mqtt-publisher.js';
import type { MqttConfig } from './schema.js';

/** Dependencies of {@link MqttPublishers}. */
export interface MqttPublishersDeps {
  /** Members are read from it and health tags written to it. */
  store: TagStore;
  /** The profile's collections (and those added over the API). */
  collections: Collections;
  /** Runs intervals and reconnection waits. */
  clock: Clock;
  /** The daemon's logger. */
  logger: Logger;
  /** The license in force, asked at every start (it can be replaced while the daemon runs). */
  license: () => LicenseState;
  /** Folder relative file names are resolved against (the profile's). Default: the working directory. */
  baseDir?: string;
  /** The state directory (Sparkplug's bdSeq). */
  stateDir: string;
  /** Delivery durations for the metrics. Default: not measured. */
  metrics?: PublisherMetrics;
}

/** Reason of a publisher that stays Off because Auto Connect is off. */
export const autoConnectOffReason = 'Auto Connect is off.';

/** The MQTT publishers, in configuration order. */
export class MqttPublishers implements PublisherManager<MqttConfig, MqttPublisherState> {
  private readonly publishers = new Map<string, MqttPublisher>();
  private readonly log: Logger;

  constructor(private readonly deps: MqttPublishersDeps) {
    this.log = deps.logger.child({ component: 'mqtt' });
  }

  /**
   * Profile load: creates every publisher and starts those with Auto Connect on whose run
   * conditions hold; each one that stays Off logs one line saying why. Publishers from an
   * earlier call are stopped and replaced.
   */
  async startAll(configs: readonly MqttConfig[]): Promise<void> {
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

  list(): MqttPublisherState[] {
    return [...this.publishers.values()].map((publisher) => publisher.state());
  }

  get(name: string): MqttPublisherState | undefined {
    return this.publishers.get(name)?.state();
  }

  /** The configuration of a publisher, secrets in plaintext, or undefined. */
  config(name: string): MqttConfig | undefined {
    return this.publishers.get(name)?.config;
  }

  async put(config: MqttConfig): Promise<MqttPublisherState> {
    const existing = this.publishers.get(config.name);
    if (existing !== undefined) {
      const wasRunning = existing.running;
      // A running publisher is restarted by reconfigure(); check its conditions again first.
      const blocker = wasRunning ? this.blocker(config) : undefined;
      if (blocker !== undefined) {
        await existing.stop(blocker);
        await existing.reconfigure(config);
        this.log.warn(`MQTT publisher '${config.name}' stopped: ${blocker}`);
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

  /** What waits for the broker in each publisher, in configuration order (metrics). */
  queues(): PublisherQueue[] {
    return [...this.publishers.values()].map((publisher) => publisher.queue());
  }

  async remove(name: string): Promise<boolean> {
    const publisher = this.publishers.get(name);
    if (publisher === undefined) return false;
    await publisher.stop('removed');
    this.publishers.delete(name);
    this.deps.metrics?.removed(name);
    // Its undelivered messages go with it: a later publisher of that name starts empty.
    Outbox.discard(publisher.outboxFile);
    return true;
  }

  /** @throws NotFoundError when no publisher has that name. */
  async start(name: string): Promise<MqttPublisherState> {
    const publisher = this.require(name);
    await this.tryStart(publisher);
    return publisher.state();
  }

  /** @throws NotFoundError when no publisher has that name. */
  async stop(name: string): Promise<MqttPublisherState> {
    const publisher = this.require(name);
    await publisher.stop();
    return publisher.state();
  }

  private create(config: MqttConfig): MqttPublisher {
    const { store, collections, clock, logger, baseDir, stateDir, metrics } = this.deps;
    const publisher = new MqttPublisher(config, {
      store,
      collections,
      clock,
      logger,
      stateDir,
      ...(baseDir !== undefined ? { baseDir } : {}),
      ...(metrics !== undefined ? { metrics } : {}),
    });
    this.publishers.set(config.name, publisher);
    return publisher;
  }

  private require(name: string): MqttPublisher {
    const publisher = this.publishers.get(name);
    if (publisher === undefined) throw new NotFoundError(`No MQTT publisher named '${name}'.`);
    return publisher;
  }

  private async tryStart(publisher: MqttPublisher): Promise<void> {
    if (publisher.running) return;
    const blocker = this.blocker(publisher.config);
    if (blocker !== undefined) this.keepOff(publisher, blocker, 'warn');
    else await publisher.start();
  }

  private keepOff(publisher: MqttPublisher, reason: string, level: 'info' | 'warn'): void {
    publisher.setOff(reason);
    this.log[level](`MQTT publisher '${publisher.name}' stays Off: ${reason}`);
  }

  /** Why a publisher with this configuration cannot run, or undefined when it can. */
  private blocker(config: MqttConfig): string | undefined {
    return runBlocker(this.deps.license(), this.deps.collections, config.collections);
  }
}
