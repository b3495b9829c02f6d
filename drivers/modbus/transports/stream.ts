/** A byte stream to a Modbus device: a TCP socket or a serial port. */
export interface ModbusStream {
  /** Writes bytes; errors surface through {@link StreamHandlers.closed}. */
  write(bytes: Uint8Array): void;
  /** Closes the stream and resolves once its handle is released. Idempotent. */
  close(): Promise<void>;
}

/** Where a stream reports what happens to it. */
export interface StreamHandlers {
  /** Bytes received. */
  data(chunk: Uint8Array): void;
  /** The stream closed on its own (peer closed, error); not called after close(). */
  closed(error: Error): void;
}

/**
 * Opens a stream; rejects when it cannot be opened within its timeout, or when `signal` aborts
 * (the driver stopped meanwhile), releasing what the attempt took.
 */
export type StreamOpener = (handlers: StreamHandlers, signal: AbortSignal) => Promise<ModbusStream>;
