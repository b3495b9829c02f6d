import type { DriverFactory } from '../driver.js';
import { DerivedDriver } from './derived-driver.js';
import type { DerivedDriverConfig } from './schema.js';

/**
 * Creates a derived-tag driver: tags computed by expressions from other tags of the store,
 * written back into it. Nothing is evaluated until start.
 */
export const createDerivedDriver: DriverFactory<DerivedDriverConfig> = (config, deps) =>
  new DerivedDriver(config, deps);
