import type { DriverFactory } from '../driver.js';
import { ModbusDriver } from './modbus-driver.js';
import type { ModbusDriverConfig } from './schema.js';

/**
 * Creates a Modbus driver: one TCP or RTU connection, its tags polled in groups by interval with
 * the fewest requests the block limits allow. Nothing is opened until start; the optional
 * serialport package is imported only when an RTU connection is opened.
 */
export const createModbusDriver: DriverFactory<ModbusDriverConfig> = (config, deps) =>
  new ModbusDriver(config, deps);
