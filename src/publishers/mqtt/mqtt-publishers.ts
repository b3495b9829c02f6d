/**
 * The MQTT publishers of the daemon: created from the profile at load, managed over the API
 * through `PublisherManager`, under the webhook publishers' run conditions; the shared
 * handling is {@link PublisherSet}'s.
 */
import type { AlarmFeed } from '../../alarms/alarm-filter.js';
import type { Clock } from '../../clock.js';
import type { FieldError } from '../../errors.js';
import type { TagStore } from '../../tags/tag-store.js';
import type { PublisherTestResult } from '../publisher.js';
import { PublisherSet, type PublisherSetDeps } from '../publisher-set.js';
import { readBrokerFiles } from './broker-files.js';
import { MqttPublisher, type MqttPublisherState } from './mqtt-publisher.js';
import type { MqttConfig } from './schema.js';
import type { CommandWriter } from './sparkplug-commands.js';
import { publishMqttTest } from './test-publish.js';

/** Dependencies of {@link MqttPublishers}. */
export interface MqttPublishersDeps extends PublisherSetDeps {
  /** Members are read from it and health tags written to it. */
  store: TagStore;
  /** Runs intervals and reconnection waits. */
  clock: Clock;
  /** Folder relative file names are resolved against (the profile's). Default: the working directory. */
  baseDir?: string;
  /** The state directory (Sparkplug's bdSeq). */
  stateDir: string;
  /** The running alarms, for publishers with `alarms`. */
  alarms?: AlarmFeed;
  /** The tag writer Sparkplug write commands go through (`acceptWrites`). Default: none. */
  writer?: CommandWriter;
}

/** The MQTT publishers, in configuration order. */
export class MqttPublishers extends PublisherSet<MqttConfig, MqttPublisherState, MqttPublisher> {
  constructor(private readonly deps: MqttPublishersDeps) {
    super(deps, { component: 'mqtt', label: 'MQTT', noun: 'MQTT' });
  }

  protected build(config: MqttConfig): MqttPublisher {
    const { store, collections, clock, logger, baseDir, stateDir, metrics, alarms, writer } =
      this.deps;
    return new MqttPublisher(config, {
      store,
      collections,
      clock,
      logger,
      stateDir,
      ...(baseDir !== undefined ? { baseDir } : {}),
      ...(metrics !== undefined ? { metrics } : {}),
      ...(alarms !== undefined ? { alarms } : {}),
      ...(writer !== undefined ? { writer } : {}),
    });
  }

  sendTest(config: MqttConfig): Promise<PublisherTestResult> {
    const { store, collections, clock, baseDir } = this.deps;
    return publishMqttTest(config, {
      store,
      collections,
      clock,
      baseDir: baseDir ?? process.cwd(),
    });
  }

  async checkFiles(config: MqttConfig): Promise<FieldError[]> {
    return (await readBrokerFiles(config, this.deps.baseDir ?? process.cwd())).problems;
  }
}
