import type { DriverFactory } from '../driver.js';
import type { SparkplugDriverConfig } from './schema.js';
import { SparkplugDriver } from './sparkplug-driver.js';

/**
 * Creates a Sparkplug B host application driver: one broker connection as a Primary Host, the
 * metrics of the edge nodes it follows as tags `<component>/<group>/<node>[/<device>]/<metric>`.
 * Nothing is connected until start.
 */
export const createSparkplugDriver: DriverFactory<SparkplugDriverConfig> = (config, deps) =>
  new SparkplugDriver(config, deps);
