/**
 * The MQTT publisher of a benchmark: `bench`, publishing the collection `plant` of a TagStore,
 * as bench/mqtt.bench.ts, bench/relay.bench.ts and bench/sparkplug-backlog.ts set it up.
 */
import { pino } from 'pino';
import type { z } from 'zod';
import type { Clock } from '../src/clock.js';
import { MqttPublisher } from '../src/publishers/mqtt/mqtt-publisher.js';
import { mqttConfigSchema } from '../src/publishers/mqtt/schema.js';
import { Collections } from '../src/tags/collections.js';
import type { TagStore } from '../src/tags/tag-store.js';

/** Where the publisher runs. */
export interface PublisherSetting {
  store: TagStore;
  clock: Clock;
  brokerUrl: string;
  /** The publisher's state directory (its outbox). */
  stateDir: string;
  /** The members of the collection `plant`. Default: `**`, every tag. */
  members?: string[];
}

/** The publisher's configuration beyond its name, broker and collection. */
export type PublisherOptions = Omit<
  z.input<typeof mqttConfigSchema>,
  'name' | 'brokerUrl' | 'collections'
>;

/**
 * Starts the collection `plant` and builds the publisher `bench` (silent; not started: the
 * caller starts it when it is ready to wait for what it measures). Stop both when done.
 */
export async function benchPublisher(
  setting: PublisherSetting,
  options: PublisherOptions,
): Promise<{ publisher: MqttPublisher; collections: Collections }> {
  const { store, clock, brokerUrl, stateDir, members = ['**'] } = setting;
  const logger = pino({ level: 'silent' });
  const collections = new Collections(store, [{ name: 'plant', members }], logger);
  await collections.start();
  const publisher = new MqttPublisher(
    mqttConfigSchema.parse({ name: 'bench', brokerUrl, collections: ['plant'], ...options }),
    { store, collections, clock, logger, stateDir },
  );
  return { publisher, collections };
}
