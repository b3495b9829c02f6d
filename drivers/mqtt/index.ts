import type { DriverFactory } from '../driver.js';
import { MqttDriver } from './mqtt-driver.js';
import type { MqttDriverConfig } from './schema.js';

/**
 * Creates an MQTT subscriber driver: topic filters of one broker mapped to tags, each message a
 * sample. Nothing is connected until start.
 */
export const createMqttDriver: DriverFactory<MqttDriverConfig> = (config, deps) =>
  new MqttDriver(config, deps);
