import type { DriverFactory } from '../driver.js';
import { CanDriver } from './can-driver.js';
import type { CanDriverConfig } from './schema.js';

/**
 * Creates a CAN driver: one bus (SocketCAN, SLCAN or a replayed candump log) decoded with one
 * DBC file, each signal the tag `<component>/<message>/<signal>`. Nothing is read until start.
 */
export const createCanDriver: DriverFactory<CanDriverConfig> = (config, deps) =>
  new CanDriver(config, deps);
