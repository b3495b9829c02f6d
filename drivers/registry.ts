/**
 * The driver types tagd knows. Schemas load eagerly (the profile is validated before anything
 * starts); implementations load lazily through import(), so node-opcua or socketcan are only
 * loaded when a profile uses them.
 */
import { z } from 'zod';
import { DriverLoadError } from '../src/errors.js';
import { canDriverSchema } from './can/schema.js';
import { derivedDriverSchema } from './derived/schema.js';
import type { Driver, DriverDeps, DriverFactory } from './driver.js';
import { modbusDriverSchema } from './modbus/schema.js';
import { mqttDriverSchema } from './mqtt/schema.js';
import { opcuaDriverSchema } from './opcua/schema.js';
import { simulatorDriverSchema } from './simulator/schema.js';
import { sparkplugDriverSchema } from './sparkplug/schema.js';

/** Every driver entry a profile may hold, told apart by `type`. */
export const driverConfigSchema = z.discriminatedUnion('type', [
  simulatorDriverSchema,
  canDriverSchema,
  modbusDriverSchema,
  opcuaDriverSchema,
  derivedDriverSchema,
  sparkplugDriverSchema,
  mqttDriverSchema,
]);

/** A validated driver entry. */
export type DriverConfig = z.infer<typeof driverConfigSchema>;

/** Driver type names, e.g. `simulator`. */
export type DriverType = DriverConfig['type'];

type Loaders = {
  [Type in DriverType]: () => Promise<DriverFactory<Extract<DriverConfig, { type: Type }>>>;
};

const loaders: Loaders = {
  simulator: async () => (await import('./simulator/index.js')).createSimulatorDriver,
  can: async () => (await import('./can/index.js')).createCanDriver,
  modbus: async () => (await import('./modbus/index.js')).createModbusDriver,
  opcua: async () => (await import('./opcua/index.js')).createOpcuaDriver,
  derived: async () => (await import('./derived/index.js')).createDerivedDriver,
  sparkplug: async () => (await import('./sparkplug/index.js')).createSparkplugDriver,
  mqtt: async () => (await import('./mqtt/index.js')).createMqttDriver,
};

/** The names of every known driver type. */
export const driverTypes = Object.keys(loaders) as DriverType[];

/**
 * Loads the implementation of a driver's type and builds the driver (no I/O yet).
 * @throws DriverLoadError when the type is unknown or its module cannot be loaded.
 */
export async function createDriver(config: DriverConfig, deps: DriverDeps): Promise<Driver> {
  const load = loaders[config.type] as (() => Promise<DriverFactory<DriverConfig>>) | undefined;
  if (load === undefined) {
    throw new DriverLoadError(
      `Unknown driver type '${String(config.type)}' (known: ${driverTypes.join(', ')}).`,
    );
  }
  let factory: DriverFactory<DriverConfig>;
  try {
    factory = await load();
  } catch (error) {
    throw new DriverLoadError(
      `The ${config.type} driver of '${config.name}' could not be loaded: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return factory(config, deps);
}
