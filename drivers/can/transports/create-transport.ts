import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../../src/clock.js';
import type { CanTransportConfig } from '../schema.js';
import { ReplayTransport } from './replay.js';
import { SlcanTransport } from './slcan.js';
import { SocketcanTransport } from './socketcan.js';
import type { CanTransport } from './transport.js';

/** What a transport is built with besides its settings. */
export interface TransportDeps {
  clock: Clock;
  logger: Logger;
  /** Folder relative file paths (a replay log) are resolved from. */
  baseDir: string;
}

/** Builds the transport a CAN driver's `transport` setting describes (no I/O yet). */
export function createTransport(config: CanTransportConfig, deps: TransportDeps): CanTransport {
  const { clock, logger } = deps;
  switch (config.kind) {
    case 'socketcan':
      return new SocketcanTransport({ interface: config.interface, clock, logger });
    case 'slcan':
      return new SlcanTransport({
        port: config.port,
        bitrate: config.bitrate,
        baudRate: config.baudRate,
        timestamps: config.timestamps,
        clock,
        logger,
      });
    case 'replay':
      return new ReplayTransport({
        file: resolve(deps.baseDir, config.file),
        speed: config.speed,
        loop: config.loop,
        ...(config.channel !== undefined ? { channel: config.channel } : {}),
        clock,
        logger,
      });
  }
}
