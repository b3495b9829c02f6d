/**
 * SLCAN transport: a Lawicel-protocol adapter (CANable, CANtact, USBtin…) on a serial port, or
 * the same protocol over TCP (`socket://host:port`, as served by ser2net or an adapter's network
 * bridge). Opening sends `C` (close the channel, in case it was left open), `S<n>` (bitrate),
 * `Z1` when timestamps are wanted, then `O` (open), each answered before the next is sent.
 */
import { connect, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../../src/clock.js';
import { reportSerialHangup } from '../../serial-hangup.js';
import type { CanFrame } from '../frame.js';
import { parseSlcanFrame, SlcanTimestampMapper, slcanBitrates } from './slcan-protocol.js';
import {
  type CanTransport,
  CanTransportError,
  type TransportEnd,
  type TransportHandlers,
} from './transport.js';

/** Options of {@link SlcanTransport}. */
export interface SlcanTransportOptions {
  /** `socket://host:port` for TCP, otherwise the serial device path, e.g. `/dev/ttyACM0`. */
  port: string;
  /** CAN bitrate in bit/s, one of {@link slcanBitrates}' keys. */
  bitrate: number;
  /** Serial line speed in baud (ignored over TCP and by USB CDC adapters). Default: 115200. */
  baudRate?: number;
  /** Ask the adapter for its millisecond timestamps (`Z1`). Default: false (host arrival time). */
  timestamps?: boolean;
  /** How long to wait for the adapter to answer one command, ms. Default: 1000. */
  commandTimeoutMs?: number;
  /** How long a TCP connection or serial open may take, ms. Default: 5000. */
  connectTimeoutMs?: number;
  clock: Clock;
  logger: Logger;
}

/** A byte stream to the adapter, whatever carries it. */
interface Link {
  write(text: string): void;
  /** Flushes what was written, then closes; resolves once the handle is released. */
  close(): Promise<void>;
}

interface LinkEvents {
  onData(chunk: Buffer): void;
  onClose(error: Error): void;
}

/** A command waiting for the adapter's CR or BEL. */
interface PendingCommand {
  resolve(ok: boolean): void;
  timer: TimerHandle;
  /** True for `O`: frames may follow its answer in the same read. */
  opens: boolean;
}

/** The TCP form of the port setting. */
const socketUrl = /^socket:\/\/(\[[^\]]+\]|[^:/[\]]+):(\d{1,5})\/?$/;

/** Host and port of a `socket://host:port` setting, or undefined for a serial device path. */
export function parseSocketUrl(port: string): { host: string; port: number } | undefined {
  const match = socketUrl.exec(port);
  if (match === null) return undefined;
  const host = (match[1] as string).replace(/^\[(.*)\]$/, '$1');
  const number = Number(match[2]);
  if (number < 1 || number > 65_535) return undefined;
  return { host, port: number };
}

/** SLCAN over a serial port or TCP. */
export class SlcanTransport implements CanTransport {
  readonly description: string;
  private link: Link | undefined;
  private handlers: TransportHandlers | undefined;
  private pending: PendingCommand | undefined;
  private connectTimer: TimerHandle | undefined;
  private buffer = '';
  private streaming = false;
  private closing = false;
  private ended = false;
  private readonly timestamps = new SlcanTimestampMapper();

  constructor(private readonly options: SlcanTransportOptions) {
    this.description = `slcan ${options.port}`;
  }

  async open(handlers: TransportHandlers): Promise<void> {
    if (this.link !== undefined) throw new Error(`${this.description} is already open.`);
    const bitrateCommand = slcanBitrates.get(this.options.bitrate);
    if (bitrateCommand === undefined) {
      throw new CanTransportError(
        'adapter-refused',
        `SLCAN has no command for a bitrate of ${this.options.bitrate} bit/s.`,
      );
    }
    this.handlers = handlers;
    this.buffer = '';
    this.streaming = false;
    this.closing = false;
    this.ended = false;
    this.timestamps.reset();
    const events: LinkEvents = {
      onData: (chunk) => this.receive(chunk),
      onClose: (error) => this.lost(error),
    };
    try {
      const link = await this.connect(events);
      if (this.closing || this.ended) {
        // close() was called, or the link dropped, while connecting: this link is nobody's.
        await link.close();
        throw new CanTransportError('connection', `${this.description}: closed while connecting.`);
      }
      this.link = link;
      // A channel left open by an earlier run must be closed before the bitrate can change;
      // adapters whose channel is already closed answer BEL, which is fine.
      await this.command('C');
      await this.require(bitrateCommand, `the bitrate ${this.options.bitrate} bit/s`);
      if (this.options.timestamps && !(await this.command('Z1'))) {
        this.options.logger.warn(
          { port: this.options.port },
          'the SLCAN adapter refused timestamps (Z1): frames carry the host arrival time',
        );
      }
      await this.require('O', 'opening the channel');
      this.streaming = true;
    } catch (error) {
      await this.close();
      throw error instanceof CanTransportError
        ? error
        : new CanTransportError('connection', `${this.description}: ${(error as Error).message}`, {
            cause: error,
          });
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.streaming = false;
    this.options.clock.clearTimer(this.connectTimer);
    this.connectTimer = undefined;
    this.settle(false);
    const link = this.link;
    this.link = undefined;
    this.handlers = undefined;
    if (link === undefined) return;
    // Closing the channel stops the adapter acknowledging frames on the bus for us.
    try {
      link.write('C\r');
    } catch {
      // The link may already be broken; closing it is all that is left to do.
    }
    await link.close();
  }

  private async connect(events: LinkEvents): Promise<Link> {
    const tcp = parseSocketUrl(this.options.port);
    const timeoutMs = this.options.connectTimeoutMs ?? 5000;
    const connecting = tcp
      ? connectTcp(tcp.host, tcp.port, events)
      : openSerial(this.options, events);
    let timedOut = false;
    const timeout = new Promise<never>((_, reject) => {
      this.connectTimer = this.options.clock.setTimeout(() => {
        timedOut = true;
        reject(
          new CanTransportError(
            'connection',
            `${this.description}: no connection within ${timeoutMs} ms.`,
          ),
        );
      }, timeoutMs);
    });
    try {
      return await Promise.race([connecting, timeout]);
    } finally {
      this.options.clock.clearTimer(this.connectTimer);
      this.connectTimer = undefined;
      // A connection that completes after the timeout must not stay open.
      if (timedOut) void connecting.then((link) => link.close()).catch(() => {});
    }
  }

  /** Sends a command and waits for the adapter's answer: true for CR, false for BEL or none. */
  private command(text: string): Promise<boolean> {
    const link = this.link;
    if (link === undefined || this.closing) return Promise.resolve(false);
    const timeoutMs = this.options.commandTimeoutMs ?? 1000;
    return new Promise<boolean>((resolve) => {
      const timer = this.options.clock.setTimeout(() => this.settle(false), timeoutMs);
      this.pending = { resolve, timer, opens: text === 'O' };
      link.write(`${text}\r`);
    });
  }

  private async require(text: string, what: string): Promise<void> {
    if (await this.command(text)) return;
    if (this.link === undefined || this.closing) {
      throw new CanTransportError(
        'connection',
        `${this.description}: the connection closed while setting up the adapter.`,
      );
    }
    throw new CanTransportError(
      'adapter-refused',
      `${this.description}: the adapter refused or did not answer '${text}' (${what}).`,
    );
  }

  private settle(ok: boolean): void {
    const pending = this.pending;
    if (pending === undefined) return;
    this.pending = undefined;
    this.options.clock.clearTimer(pending.timer);
    // Frames the adapter sends right after its answer to O may be in this very read.
    if (ok && pending.opens && !this.closing) this.streaming = true;
    pending.resolve(ok);
  }

  private receive(chunk: Buffer): void {
    const text = this.buffer + chunk.toString('latin1');
    const now = this.options.clock.now();
    let frames: CanFrame[] | undefined;
    let malformed = 0;
    let start = 0;
    // BEL is rare (refused commands only): find it once per chunk, not once per line.
    let bell = text.indexOf('\x07');
    if (bell < 0) bell = Number.POSITIVE_INFINITY;
    for (;;) {
      let end = text.indexOf('\r', start);
      if (end < 0) end = Number.POSITIVE_INFINITY;
      if (bell < start) {
        bell = text.indexOf('\x07', start);
        if (bell < 0) bell = Number.POSITIVE_INFINITY;
      }
      const stop = Math.min(end, bell);
      if (stop === Number.POSITIVE_INFINITY) break;
      const line = text.slice(start, stop);
      start = stop + 1;
      if (stop === bell) {
        if (line !== '') malformed++;
        this.settle(false);
        continue;
      }
      if (line === '') {
        this.settle(true);
        continue;
      }
      const parsed = parseSlcanFrame(line, now);
      if (parsed === undefined) {
        const kind = line.charCodeAt(0);
        // z/Z acknowledge a transmission; V, v, N and F answer a query: none is a frame.
        if (kind === 0x7a || kind === 0x5a) continue;
        if (kind === 0x56 || kind === 0x76 || kind === 0x4e || kind === 0x46) {
          this.settle(true);
          continue;
        }
        malformed++;
        continue;
      }
      // Frames that arrive while the channel is being set up belong to an earlier session.
      if (!this.streaming) continue;
      if (parsed.adapterTimestamp !== undefined) {
        parsed.frame.timestamp = this.timestamps.map(parsed.adapterTimestamp, now);
      }
      if (frames === undefined) frames = [];
      frames.push(parsed.frame);
    }
    this.buffer = text.slice(start);
    // An adapter sending garbage without line ends must not grow the buffer without bound.
    if (this.buffer.length > 4096) {
      this.buffer = '';
      malformed++;
    }
    const handlers = this.handlers;
    if (handlers === undefined) return;
    if (malformed > 0) handlers.onMalformed?.(malformed);
    if (frames !== undefined) handlers.onFrames(frames);
  }

  private lost(error: Error): void {
    const handlers = this.handlers;
    const wasStreaming = this.streaming;
    const reported = this.ended;
    this.ended = true;
    this.link = undefined;
    this.streaming = false;
    // During set-up the pending command fails and open() rejects: no end to report.
    this.settle(false);
    if (!wasStreaming || this.closing || reported || handlers === undefined) return;
    this.handlers = undefined;
    const end: TransportEnd = {
      kind: 'lost',
      error: new CanTransportError(
        'connection',
        `${this.description}: the adapter connection was lost (${error.message}).`,
        { cause: error },
      ),
    };
    handlers.onEnd(end);
  }
}

function connectTcp(host: string, port: number, events: LinkEvents): Promise<Link> {
  return new Promise<Link>((resolve, reject) => {
    const socket: Socket = connect({ host, port });
    let connected = false;
    let closed: Promise<void> | undefined;
    const link: Link = {
      write: (text) => {
        socket.write(text, 'latin1');
      },
      close: () => {
        closed ??= new Promise<void>((done) => {
          if (socket.destroyed) return done();
          socket.once('close', () => done());
          socket.end();
          // A peer that never acknowledges the end must not keep the socket.
          socket.destroySoon();
        });
        return closed;
      },
    };
    let failure: Error | undefined;
    socket.on('error', (error) => {
      failure = error;
      if (!connected) reject(error);
    });
    socket.once('connect', () => {
      connected = true;
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 10_000);
      resolve(link);
    });
    socket.on('data', (chunk: Buffer) => events.onData(chunk));
    socket.once('close', () => {
      if (connected) events.onClose(failure ?? new Error('the peer closed the connection'));
    });
  });
}

/** The part of the serialport package's API used here (it is an optional dependency). */
interface SerialPortLike {
  open(callback: (error: Error | null) => void): void;
  write(data: string, encoding: BufferEncoding): boolean;
  drain(callback: (error: Error | null) => void): void;
  close(callback: (error: Error | null) => void): void;
  readonly isOpen: boolean;
  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'close', listener: (error: Error | null) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
}

type SerialPortConstructor = new (options: {
  path: string;
  baudRate: number;
  autoOpen: false;
}) => SerialPortLike;

async function loadSerialPort(): Promise<SerialPortConstructor> {
  try {
    const module = (await import('serialport')) as unknown as { SerialPort: SerialPortConstructor };
    return module.SerialPort;
  } catch (error) {
    throw new CanTransportError(
      'module-missing',
      'The serialport package (an optional dependency) is not installed or failed to build; ' +
        'install it with `npm install serialport` to use an SLCAN adapter on a serial port.',
      { cause: error },
    );
  }
}

async function openSerial(options: SlcanTransportOptions, events: LinkEvents): Promise<Link> {
  const SerialPort = await loadSerialPort();
  const port = new SerialPort({
    path: options.port,
    baudRate: options.baudRate ?? 115_200,
    autoOpen: false,
  });
  await new Promise<void>((resolve, reject) => {
    port.open((error) => (error ? reject(error) : resolve()));
  });
  reportSerialHangup(port);
  let closing: Promise<void> | undefined;
  let lost = false;
  const onLost = (error: Error) => {
    if (closing !== undefined || lost) return;
    lost = true;
    events.onClose(error);
    // An error that serialport does not follow with a close (e.g. a failed write) still
    // means the adapter is unusable: close the port so the descriptor is released.
    if (port.isOpen) port.close(() => {});
  };
  port.on('error', onLost);
  port.on('data', (chunk) => events.onData(chunk));
  port.on('close', (error) => onLost(error ?? new Error('the serial port was closed')));
  return {
    write: (text) => {
      port.write(text, 'latin1');
    },
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        if (!port.isOpen) return resolve();
        port.drain(() => port.close(() => resolve()));
      });
      return closing;
    },
  };
}
