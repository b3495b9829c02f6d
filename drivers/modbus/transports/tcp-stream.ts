import { connect, type Socket } from 'node:net';
import type { Clock } from '../../../src/clock.js';
import type { ModbusStream, StreamHandlers, StreamOpener } from './stream.js';

/** Where and how to connect. */
export interface TcpStreamOptions {
  host: string;
  port: number;
  /** Longest wait for the connection, ms. */
  timeoutMs: number;
  clock: Clock;
}

/**
 * Opens TCP connections with Nagle's algorithm off (TCP_NODELAY): a Modbus request is one small
 * write that must leave at once, not wait for the answer to the previous one.
 */
export function tcpStreamOpener(options: TcpStreamOptions): StreamOpener {
  return (handlers, signal) => openTcp(options, handlers, signal);
}

function openTcp(
  options: TcpStreamOptions,
  handlers: StreamHandlers,
  signal: AbortSignal,
): Promise<ModbusStream> {
  const { clock } = options;
  return new Promise((resolve, reject) => {
    const socket = connect({ host: options.host, port: options.port, noDelay: true });
    const timer = clock.setTimeout(() => {
      signal.removeEventListener('abort', aborted);
      socket.destroy();
      reject(
        new Error(
          `No connection to ${options.host}:${options.port} within ${options.timeoutMs} ms`,
        ),
      );
    }, options.timeoutMs);
    const aborted = () => {
      clock.clearTimer(timer);
      socket.destroy();
      reject(new Error('The connection attempt was abandoned.'));
    };
    signal.addEventListener('abort', aborted, { once: true });
    const failed = (error: Error) => {
      signal.removeEventListener('abort', aborted);
      clock.clearTimer(timer);
      socket.destroy();
      reject(
        new Error(`Cannot connect to ${options.host}:${options.port}: ${error.message}`, {
          cause: error,
        }),
      );
    };
    socket.once('error', failed);
    socket.once('connect', () => {
      signal.removeEventListener('abort', aborted);
      clock.clearTimer(timer);
      socket.off('error', failed);
      resolve(new TcpStream(socket, options, handlers));
    });
  });
}

class TcpStream implements ModbusStream {
  private closing = false;
  private lastError: Error | undefined;
  private readonly gone: Promise<void>;

  constructor(
    private readonly socket: Socket,
    options: TcpStreamOptions,
    handlers: StreamHandlers,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => handlers.data(chunk));
    socket.on('error', (error) => {
      this.lastError = error;
    });
    this.gone = new Promise((resolve) => {
      socket.once('close', () => {
        resolve();
        if (this.closing) return;
        const reason = this.lastError?.message ?? 'closed by the device';
        handlers.closed(new Error(`Connection to ${options.host}:${options.port} lost: ${reason}`));
      });
    });
    // A half-closed socket (device sent FIN) is of no use: close our side too.
    socket.once('end', () => socket.destroy());
  }

  write(bytes: Uint8Array): void {
    if (!this.closing) this.socket.write(bytes);
  }

  close(): Promise<void> {
    this.closing = true;
    this.socket.destroy();
    return this.gone;
  }
}
