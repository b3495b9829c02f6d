import type { Clock } from '../../../src/clock.js';
import { reportSerialHangup } from '../../serial-hangup.js';
import type { ModbusStream, StreamHandlers, StreamOpener } from './stream.js';

/** The serial line settings. */
export interface SerialStreamOptions {
  path: string;
  baudRate: number;
  parity: 'none' | 'even' | 'odd';
  dataBits: 7 | 8;
  stopBits: 1 | 2;
  /** Longest wait for the port to open, ms. */
  timeoutMs: number;
  clock: Clock;
}

type SerialPortModule = typeof import('serialport');
let serialport: Promise<SerialPortModule> | undefined;

/**
 * Opens the serial port through the optional `serialport` package, imported on the first open:
 * a profile with only TCP devices never loads it (or its native binding).
 */
export function serialStreamOpener(options: SerialStreamOptions): StreamOpener {
  return async (handlers, signal) => {
    serialport ??= import('serialport').catch((error: unknown) => {
      serialport = undefined;
      throw new Error(
        `Modbus RTU needs the optional serialport package, which cannot be loaded: ${(error as Error).message}`,
        { cause: error },
      );
    });
    const { SerialPort } = await serialport;
    const port = new SerialPort({
      path: options.path,
      baudRate: options.baudRate,
      parity: options.parity,
      dataBits: options.dataBits,
      stopBits: options.stopBits,
      autoOpen: false,
    });
    if (signal.aborted) throw new Error('The connection attempt was abandoned.');
    await new Promise<void>((resolve, reject) => {
      let timedOut = false;
      const giveUp = (message: string) => {
        timedOut = true;
        options.clock.clearTimer(timer);
        signal.removeEventListener('abort', aborted);
        reject(new Error(message));
      };
      const aborted = () => giveUp('The connection attempt was abandoned.');
      signal.addEventListener('abort', aborted, { once: true });
      const timer = options.clock.setTimeout(
        () => giveUp(`${options.path} did not open within ${options.timeoutMs} ms`),
        options.timeoutMs,
      );
      port.open((error) => {
        options.clock.clearTimer(timer);
        signal.removeEventListener('abort', aborted);
        // Opened after we gave up on it: release it, a new attempt opens it again.
        if (timedOut) {
          if (!error) port.close(() => {});
          return;
        }
        if (error)
          reject(new Error(`Cannot open ${options.path}: ${error.message}`, { cause: error }));
        else resolve();
      });
    });
    reportSerialHangup(port);
    return new SerialStream(port, options.path, handlers);
  };
}

type Port = InstanceType<SerialPortModule['SerialPort']>;

class SerialStream implements ModbusStream {
  private closing = false;
  /** True once the port's handle is released. */
  private released = false;
  private readonly gone: Promise<void>;

  constructor(
    private readonly port: Port,
    path: string,
    handlers: StreamHandlers,
  ) {
    port.on('data', (chunk: Buffer) => handlers.data(chunk));
    let lastError: Error | undefined;
    port.on('error', (error: Error) => {
      lastError = error;
    });
    this.gone = new Promise((resolve) => {
      port.once('close', (error?: Error | null) => {
        this.released = true;
        resolve();
        if (this.closing) return;
        const reason = error?.message ?? lastError?.message ?? 'closed';
        handlers.closed(new Error(`Serial port ${path} lost: ${reason}`));
      });
    });
  }

  write(bytes: Uint8Array): void {
    if (!this.closing)
      this.port.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }

  close(): Promise<void> {
    if (this.released) return Promise.resolve();
    if (!this.closing) {
      this.closing = true;
      if (!this.port.isOpen) {
        this.released = true;
        return Promise.resolve();
      }
      this.port.close(() => {});
    }
    return this.gone;
  }
}
