import type { Clock, TimerHandle } from '../../../src/clock.js';
import { ModbusRequestError } from '../request-error.js';
import type { ModbusFrame, ModbusFramer } from './framer.js';
import type { ModbusStream, StreamOpener } from './stream.js';

/** Settings of one connection. */
export interface ConnectionOptions {
  /** Longest wait for an answer, ms, timed on the clock from when the request is sent. */
  timeoutMs: number;
  /** Requests in flight at once; forced to 1 when the framer cannot match answers by id. */
  maxInFlight: number;
  clock: Clock;
}

interface Request {
  id: number;
  unit: number;
  functionCode: number;
  count: number;
  bytes: Uint8Array;
  timer: TimerHandle | undefined;
  resolve(data: Uint8Array): void;
  reject(error: ModbusRequestError): void;
}

/**
 * One open connection to a device: a queue of read requests, at most `maxInFlight` of them
 * sent and unanswered at a time, each with its own timeout. A closed connection is not
 * reopened: the driver opens a new one, so no state survives a reconnect.
 */
export class ModbusConnection {
  private stream: ModbusStream | undefined;
  private readonly queue: Request[] = [];
  private readonly inFlight = new Map<number, Request>();
  private readonly maxInFlight: number;
  private nextId = 1;
  private closed = false;
  /** Requests sent (for the driver's counters). */
  requestsSent = 0;

  private constructor(
    private readonly framer: ModbusFramer,
    private readonly options: ConnectionOptions,
  ) {
    this.maxInFlight = framer.matchesById ? Math.max(1, options.maxInFlight) : 1;
  }

  /**
   * Opens a connection.
   * @param onLost called once when the stream closes on its own (not after close()).
   * @param signal abandons the attempt (the opener releases what it took).
   */
  static async open(
    opener: StreamOpener,
    framer: ModbusFramer,
    options: ConnectionOptions,
    onLost: (error: Error) => void,
    signal: AbortSignal,
  ): Promise<ModbusConnection> {
    const connection = new ModbusConnection(framer, options);
    connection.stream = await opener(
      {
        data: (chunk) => connection.receive(chunk),
        closed: (error) => {
          if (connection.closed) return;
          connection.shutDown(new ModbusRequestError('closed', error.message));
          onLost(error);
        },
      },
      signal,
    );
    return connection;
  }

  /**
   * Reads `count` coils (FC 1), discrete inputs (2), holding (3) or input registers (4) from
   * `address` of `unit`; resolves with the data bytes of the answer.
   * @throws ModbusRequestError on an exception answer, a timeout, a malformed answer or a
   *   closed connection.
   */
  read(unit: number, functionCode: number, address: number, count: number): Promise<Uint8Array> {
    if (this.closed)
      return Promise.reject(new ModbusRequestError('closed', 'The connection is closed.'));
    return new Promise((resolve, reject) => {
      const id = this.nextId;
      this.nextId = this.nextId === 0xffff ? 1 : this.nextId + 1;
      this.queue.push({
        id,
        unit,
        functionCode,
        count,
        bytes: this.framer.encodeRead(id, unit, functionCode, address, count),
        timer: undefined,
        resolve,
        reject,
      });
      this.pump();
    });
  }

  /** Closes the stream; pending requests fail as `closed`. Idempotent. */
  async close(): Promise<void> {
    if (!this.closed) this.shutDown(new ModbusRequestError('closed', 'The connection was closed.'));
    await this.stream?.close();
  }

  private pump(): void {
    const { clock, timeoutMs } = this.options;
    while (this.inFlight.size < this.maxInFlight && this.queue.length > 0 && this.stream) {
      const request = this.queue.shift() as Request;
      this.inFlight.set(request.id, request);
      request.timer = clock.setTimeout(() => this.timedOut(request), timeoutMs);
      this.requestsSent++;
      this.stream.write(request.bytes);
    }
  }

  private timedOut(request: Request): void {
    if (this.inFlight.get(request.id) !== request) return;
    this.inFlight.delete(request.id);
    this.framer.reset();
    request.reject(
      new ModbusRequestError('timeout', `No answer within ${this.options.timeoutMs} ms`),
    );
    this.pump();
  }

  private receive(chunk: Uint8Array): void {
    this.framer.push(chunk, (frame) => this.answer(frame));
    this.pump();
  }

  private answer(frame: ModbusFrame): void {
    let request: Request | undefined;
    if (frame.id !== undefined) request = this.inFlight.get(frame.id);
    else request = this.inFlight.values().next().value;
    // A late answer to a request that timed out, or another unit's on a shared line.
    if (request === undefined || frame.unit !== request.unit) return;
    this.inFlight.delete(request.id);
    this.options.clock.clearTimer(request.timer);
    const body = frame.body;
    if (frame.functionCode === (request.functionCode | 0x80)) {
      request.reject(ModbusRequestError.exception(body[0] ?? 0));
      return;
    }
    const expected = request.functionCode <= 2 ? Math.ceil(request.count / 8) : request.count * 2;
    if (
      frame.functionCode !== request.functionCode ||
      body[0] !== expected ||
      body.length < expected + 1
    ) {
      request.reject(
        new ModbusRequestError(
          'malformed',
          `Malformed answer: function ${frame.functionCode}, ${body[0]} data bytes (expected function ${request.functionCode}, ${expected} bytes)`,
        ),
      );
      return;
    }
    request.resolve(body.subarray(1, 1 + expected));
  }

  private shutDown(error: ModbusRequestError): void {
    this.closed = true;
    const failed = [...this.inFlight.values(), ...this.queue];
    this.inFlight.clear();
    this.queue.length = 0;
    for (const request of failed) {
      this.options.clock.clearTimer(request.timer);
      request.reject(error);
    }
  }
}
