/**
 * SocketCAN transport: a Linux CAN network interface (`can0`, `vcan0`, `slcan0`…) through the
 * socketcan package, which is an optional native dependency loaded only when a profile uses this
 * transport. The package reports every failure to open as "Error while creating channel", so the
 * cause is worked out here from /proc and /sys and told plainly.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../../src/clock.js';
import type { CanFrame } from '../frame.js';
import { type CanTransport, CanTransportError, type TransportHandlers } from './transport.js';

/** Options of {@link SocketcanTransport}. */
export interface SocketcanTransportOptions {
  /** Network interface name, e.g. `can0`. */
  interface: string;
  clock: Clock;
  logger: Logger;
  /** Where procfs and sysfs are mounted (tests point these at fakes). Default: `/proc`, `/sys`. */
  roots?: SystemRoots;
  /** Loads the socketcan package. Default: `import('socketcan')`. */
  load?: () => Promise<SocketcanModule>;
}

/** Mount points of procfs and sysfs. */
export interface SystemRoots {
  proc: string;
  sys: string;
}

/** A frame as the socketcan package delivers it. */
export interface SocketcanMessage {
  id: number;
  ext?: boolean;
  rtr?: boolean;
  err?: boolean;
  data: Buffer;
  ts_sec?: number;
  ts_usec?: number;
}

/** The part of socketcan's RawChannel used here. */
export interface SocketcanChannel {
  addListener(event: 'onMessage', callback: (message: SocketcanMessage) => void): void;
  addListener(event: 'onStopped', callback: () => void): void;
  start(): void;
  stop(): void;
}

/** The part of the socketcan package used here. */
export interface SocketcanModule {
  createRawChannelWithOptions(
    name: string,
    options: { timestamps?: boolean; non_block_send?: boolean },
  ): SocketcanChannel;
}

/** ARPHRD_CAN: the link type /sys/class/net/<if>/type shows for a CAN interface. */
const arphrdCan = 280;
/** CAN_ERR_BUSOFF: the class bit of an error frame telling the controller went bus-off. */
const canErrorBusOff = 0x40;

/** Linux SocketCAN through the socketcan package. */
export class SocketcanTransport implements CanTransport {
  readonly description: string;
  private channel: SocketcanChannel | undefined;
  private handlers: TransportHandlers | undefined;
  private batch: CanFrame[] = [];
  private flush: NodeJS.Immediate | undefined;

  constructor(private readonly options: SocketcanTransportOptions) {
    this.description = `socketcan ${options.interface}`;
  }

  async open(handlers: TransportHandlers): Promise<void> {
    if (this.channel !== undefined) throw new Error(`${this.description} is already open.`);
    const name = this.options.interface;
    const socketcan = await loadSocketcan(this.options.load);
    let channel: SocketcanChannel;
    try {
      channel = socketcan.createRawChannelWithOptions(name, { timestamps: true });
    } catch (error) {
      throw await diagnoseOpenFailure(name, error as Error, this.options.roots);
    }
    this.handlers = handlers;
    this.channel = channel;
    channel.addListener('onMessage', (message) => this.receive(message));
    channel.addListener('onStopped', () =>
      this.lost(new Error(`CAN interface '${name}' went away or reported an error.`)),
    );
    channel.start();
  }

  async close(): Promise<void> {
    const channel = this.channel;
    this.channel = undefined;
    this.handlers = undefined;
    this.batch = [];
    if (this.flush !== undefined) clearImmediate(this.flush);
    this.flush = undefined;
    channel?.stop();
  }

  private receive(message: SocketcanMessage): void {
    if (message.err) {
      // The error class is in the identifier bits; only bus-off cuts us off the bus.
      if ((message.id & canErrorBusOff) !== 0) {
        this.lost(new Error(`CAN interface '${this.options.interface}' went bus-off.`));
      }
      return;
    }
    const data = new Uint8Array(message.data.buffer, message.data.byteOffset, message.data.length);
    const frame: CanFrame = {
      id: message.id,
      extended: message.ext === true,
      data,
      length: data.length,
      timestamp:
        message.ts_sec !== undefined
          ? message.ts_sec * 1000 + Math.floor((message.ts_usec ?? 0) / 1000)
          : this.options.clock.now(),
    };
    if (data.length > 8) frame.fd = true;
    if (message.rtr) frame.remote = true;
    this.batch.push(frame);
    // The package calls back once per frame; frames read in one go are handed over together.
    this.flush ??= setImmediate(() => {
      this.flush = undefined;
      const frames = this.batch;
      this.batch = [];
      if (frames.length > 0) this.handlers?.onFrames(frames);
    });
  }

  private lost(error: Error): void {
    const handlers = this.handlers;
    if (handlers === undefined) return;
    void this.close();
    handlers.onEnd({
      kind: 'lost',
      error: new CanTransportError('connection', error.message, { cause: error }),
    });
  }
}

async function loadSocketcan(load?: () => Promise<SocketcanModule>): Promise<SocketcanModule> {
  try {
    if (load) return await load();
    const module = (await import('socketcan')) as unknown as SocketcanModule & {
      default?: SocketcanModule;
    };
    return typeof module.createRawChannelWithOptions === 'function'
      ? module
      : (module.default as SocketcanModule);
  } catch (error) {
    throw new CanTransportError(
      'module-missing',
      'The socketcan package (an optional dependency, Linux only) is not installed or failed to ' +
        `build: ${(error as Error).message}. Install it with \`npm install socketcan\`, or use ` +
        'the slcan transport.',
      { cause: error },
    );
  }
}

/**
 * Works out why a CAN interface could not be opened: no SocketCAN in the kernel, no such
 * interface, an interface of another kind, or something else (permissions, a down link).
 * The failed open has already asked the kernel for the CAN protocol family, which loads the can
 * module when it exists, so a missing /proc/net/can then means the kernel has no CAN at all.
 */
export async function diagnoseOpenFailure(
  name: string,
  cause: Error,
  roots: SystemRoots = { proc: '/proc', sys: '/sys' },
): Promise<CanTransportError> {
  if (!(await exists(join(roots.proc, 'net/can')))) {
    return new CanTransportError(
      'no-kernel-support',
      `Cannot open CAN interface '${name}': this Linux kernel has no SocketCAN support ` +
        `(${join(roots.proc, 'net/can')} does not exist; the can and can_raw modules are missing ` +
        'or cannot be loaded here, e.g. in a container). Use a kernel with CAN support, or ' +
        'the slcan transport.',
      { cause },
    );
  }
  const sysDir = join(roots.sys, 'class/net', name);
  if (!(await exists(sysDir))) {
    return new CanTransportError(
      'no-interface',
      `Cannot open CAN interface '${name}': there is no network interface of that name ` +
        '(is the adapter plugged in? `ip link show` lists the interfaces).',
      { cause },
    );
  }
  const type = Number((await readFile(join(sysDir, 'type'), 'utf8').catch(() => '')).trim());
  if (type !== arphrdCan) {
    return new CanTransportError(
      'not-can',
      `Cannot open CAN interface '${name}': the interface exists but is not a CAN interface ` +
        `(link type ${Number.isNaN(type) ? 'unknown' : type}, CAN is ${arphrdCan}).`,
      { cause },
    );
  }
  return new CanTransportError(
    'connection',
    `Cannot open CAN interface '${name}': ${cause.message} (is the interface up? ` +
      `\`ip link set ${name} up type can bitrate 500000\`).`,
    { cause },
  );
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
