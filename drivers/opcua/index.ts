// Imported first, before node-opcua loads: its load-time warnings stay off the console.
import './node-opcua-quiet.js';
import './node-opcua-logging.js';
import type { DriverFactory } from '../driver.js';
import { OpcuaDriver } from './opcua-driver.js';
import type { OpcuaDriverConfig } from './schema.js';

/**
 * Creates an OPC UA driver: one server endpoint, its variables monitored through
 * subscriptions, each tag `<component>/<tag name>`. Nothing is connected until start.
 */
export const createOpcuaDriver: DriverFactory<OpcuaDriverConfig> = (config, deps) =>
  new OpcuaDriver(config, deps);
