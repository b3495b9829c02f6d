/**
 * What the CAN driver needs of a transport: open a connection, receive frames in batches, learn
 * when the connection is gone. Reconnecting is the driver's job, so every transport behaves the
 * same way when its adapter, socket or bus goes away.
 */
import type { CanFrame } from '../frame.js';

/** Why a transport stopped delivering frames (other than a call to close). */
export type TransportEnd =
  /** The adapter, socket or interface went away, or the bus went bus-off: reconnect. */
  | { kind: 'lost'; error: Error }
  /** A finite source (a replay log without loop) has delivered its last frame: nothing to do. */
  | { kind: 'finished' };

/** Callbacks a transport calls while open. */
export interface TransportHandlers {
  /**
   * Frames received together (one read, or one instant of a replay), in bus order. The array
   * and the frames belong to the driver once handed over.
   */
  onFrames(frames: CanFrame[]): void;
  /** The transport stopped on its own; called at most once per open, never after close(). */
  onEnd(end: TransportEnd): void;
  /** Lines or records the transport could not parse; counted by the driver, never logged one by one. */
  onMalformed?(count: number): void;
}

/** A connection to one CAN bus. One open at a time; it may be opened again after it ended. */
export interface CanTransport {
  /** What this transport connects to, for logs and status, e.g. `slcan socket://10.0.0.5:3333`. */
  readonly description: string;
  /**
   * Connects and starts delivering frames to `handlers`.
   * @throws Error (often {@link CanTransportError}) when the connection cannot be made; the
   *   transport is closed again then.
   */
  open(handlers: TransportHandlers): Promise<void>;
  /** Stops delivering frames and releases the socket, port, file and timers. Idempotent. */
  close(): Promise<void>;
}

/** Why a transport could not be opened, in words an operator can act on. */
export type CanTransportProblem =
  /** The kernel has no SocketCAN (no CAN protocol family): no interface will ever appear. */
  | 'no-kernel-support'
  /** The named network interface does not exist (yet): an adapter may be plugged in later. */
  | 'no-interface'
  /** The interface exists but is not a CAN interface. */
  | 'not-can'
  /** An optional package (socketcan, serialport) is not installed or failed to build. */
  | 'module-missing'
  /** The adapter refused a command or did not answer it. */
  | 'adapter-refused'
  /** The source file (replay log) is missing or malformed. */
  | 'bad-source'
  /** The connection could not be made or was lost (socket, serial port). */
  | 'connection';

/** A transport failure with a machine-readable {@link CanTransportProblem}. */
export class CanTransportError extends Error {
  constructor(
    readonly problem: CanTransportProblem,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'CanTransportError';
  }

  /** False when retrying cannot help (no kernel support, a missing package, a bad log file). */
  get retryable(): boolean {
    return (
      this.problem !== 'no-kernel-support' &&
      this.problem !== 'module-missing' &&
      this.problem !== 'bad-source'
    );
  }
}
