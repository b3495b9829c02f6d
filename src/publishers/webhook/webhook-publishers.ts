/**
 * The webhook publishers of the daemon: created from the profile at load, managed over the API
 * through `PublisherManager`; the shared handling is {@link PublisherSet}'s.
 */
import { resolve } from 'node:path';
import type { AlarmFeed } from '../../alarms/alarm-filter.js';
import type { Clock } from '../../clock.js';
import type { FieldError } from '../../errors.js';
import type { TagStore } from '../../tags/tag-store.js';
import type { PublisherState, PublisherTestResult } from '../publisher.js';
import { PublisherSet, type PublisherSetDeps } from '../publisher-set.js';
import type { WebhookConfig } from './schema.js';
import { sendWebhookTest } from './test-delivery.js';
import { readCaFile, WebhookPublisher } from './webhook-publisher.js';

export { autoConnectOffReason } from '../publisher-set.js';

/** Dependencies of {@link WebhookPublishers}. */
export interface WebhookPublishersDeps extends PublisherSetDeps {
  /** Members are read from it and health tags written to it. */
  store: TagStore;
  /** Runs intervals and retry waits. */
  clock: Clock;
  /** tagd's version, for the User-Agent. */
  version: string;
  /** Folder a relative `caFile` is resolved against (the profile's). Default: the working directory. */
  baseDir?: string;
  /** The state directory (the storeAndForward outbox). */
  stateDir?: string;
  /** The running alarms, for publishers with `alarms`. */
  alarms?: AlarmFeed;
}

/** The webhook publishers, in configuration order. */
export class WebhookPublishers extends PublisherSet<
  WebhookConfig,
  PublisherState,
  WebhookPublisher
> {
  constructor(private readonly deps: WebhookPublishersDeps) {
    super(deps, { component: 'webhook', label: 'Webhook', noun: 'webhook' });
  }

  protected build(config: WebhookConfig): WebhookPublisher {
    const { store, collections, clock, logger, version, baseDir, stateDir, metrics, alarms } =
      this.deps;
    return new WebhookPublisher(config, {
      store,
      collections,
      clock,
      logger,
      version,
      ...(baseDir !== undefined ? { baseDir } : {}),
      ...(stateDir !== undefined ? { stateDir } : {}),
      ...(metrics !== undefined ? { metrics } : {}),
      ...(alarms !== undefined ? { alarms } : {}),
    });
  }

  sendTest(config: WebhookConfig): Promise<PublisherTestResult> {
    const { store, collections, clock, version, baseDir } = this.deps;
    return sendWebhookTest(config, {
      store,
      collections,
      clock,
      version,
      ...(baseDir !== undefined ? { baseDir } : {}),
    });
  }

  async checkFiles(config: WebhookConfig): Promise<FieldError[]> {
    if (config.caFile === undefined) return [];
    try {
      await readCaFile(resolve(this.deps.baseDir ?? process.cwd(), config.caFile));
      return [];
    } catch (error) {
      return [{ path: 'caFile', message: (error as Error).message }];
    }
  }
}
