import type { Clock, TimerHandle } from '../../../src/clock.js';
import { ModbusRequestError } from '../request-error.js';
import type { FrameSink, ModbusFrame, ModbusFramer } from './framer.js';
import type { ModbusStream, StreamOpener } from './stream.js';

/** Settings of one connection. */
export interface ConnectionOptions {
  /** Longest wait for an answer, ms, timed on the clock from when the request is sent. */
  timeoutMs: number;
  /** Requests in flight at once; forced to 1 when the framer cannot match answers by id. */
  maxInFlight: number;
  /**
   * After a timeout, how long the line must stay silent before the next request goes out, ms;
   * bytes that arrive meanwhile are discarded and restart the wait. Needed where answers carry
   * no id (RTU): an answer that comes after its timeout would otherwise be taken for the answer
   * to the next request. 0 sends at once (TCP, whose answers carry their request's id).
   */
  quietAfterTimeoutMs: number;
  clock: Clock;
  /** Told of what the connection drops, for the driver's counters. */
  events?: ConnectionEvents;
}

/** What a connection drops on the way, reported for the driver's counters. */
export interface ConnectionEvents {
  /** The framer dropped bytes that are no answer (CRC mismatch, impossible header). */
  malformedFrame(reason: string): void;
  /** An answer matched no request in flight: late after a timeout, a wrong id or unit. */
  unmatchedAnswer(): void;
}

interface Request {
  id: number;
  unit: number;
  functionCode: number;
  /**
   * The data of a fitting answer (its body, without the function code), or a message saying
   * why the answer does not fit the request.
   */
  accept(body: Uint8Array): Uint8Array | string;
  bytes: Uint8Array;
  timer: TimerHandle | undefined;
  resolve(data: Uint8Array): void;
  reject(error: ModbusRequestError): void;
}

/**
 * One open connection to a device: a queue of requests (reads and writes, in order), at most `maxInFlight` of them
 * sent and unanswered at a time, each with its own timeout. A closed connection is not
 * reopened: the driver opens a new one, so no state survives a reconnect. A stream that falls
 * out of step (a malformed MBAP header) is closed at once and reported lost.
 */
export class ModbusConnection {
  private stream: ModbusStream | undefined;
  private readonly queue: Request[] = [];
  private readonly inFlight = new Map<number, Request>();
  private readonly maxInFlight: number;
  private nextId = 1;
  private closed = false;
  /** Set after a timeout while the line must stay silent before the next request. */
  private quietTimer: TimerHandle | undefined;
  private draining = false;
  /** When the current wait for silence began, or the last request was given up on, clock ms. */
  private drainingSince = 0;
  private onLost: ((error: Error) => void) | undefined;
  private readonly sink: FrameSink;

  private constructor(
    private readonly framer: ModbusFramer,
    private readonly options: ConnectionOptions,
  ) {
    this.maxInFlight = framer.matchesById ? Math.max(1, options.maxInFlight) : 1;
    this.sink = {
      frame: (frame) => this.answer(frame),
      malformed: (reason, outOfStep) => {
        this.options.events?.malformedFrame(reason);
        if (outOfStep) this.outOfStep(reason);
      },
    };
  }

  /**
   * Opens a connection.
   * @param onLost called once when the stream closes on its own or falls out of step (not
   *   after close()).
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
    connection.onLost = onLost;
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
    const expected = functionCode <= 2 ? Math.ceil(count / 8) : count * 2;
    const id = this.takeId();
    return this.enqueue(
      id,
      unit,
      functionCode,
      this.framer.encodeRead(id, unit, functionCode, address, count),
      (body) =>
        body[0] === expected && body.length === expected + 1
          ? body.subarray(1, 1 + expected)
          : `Malformed answer: function ${functionCode}, ${body[0]} data bytes (expected ${expected} bytes)`,
    );
  }

  /**
   * Sends a write request (FC 5, 6, 15, 16, 22) whose PDU after the function code is `data`,
   * once: a request is never re-sent, on this connection or another. Resolves with the answer's
   * body when it echoes the first `echoBytes` bytes of `data` (the address and value of FC 5 and
   * 6, the address and quantity of FC 15 and 16, all of FC 22).
   * @throws ModbusRequestError as {@link read}; its `sent` says whether the request had gone
   *   out (a `closed` or `timeout` failure before sending changed nothing on the device).
   */
  write(
    unit: number,
    functionCode: number,
    data: Uint8Array,
    echoBytes: number,
  ): Promise<Uint8Array> {
    if (this.closed)
      return Promise.reject(
        new ModbusRequestError('closed', 'The connection is closed.', undefined, false),
      );
    const id = this.takeId();
    const echo = data.subarray(0, echoBytes);
    return this.enqueue(
      id,
      unit,
      functionCode,
      this.framer.encodeRequest(id, unit, functionCode, data),
      (body) =>
        body.length === echoBytes && body.every((byte, index) => byte === echo[index])
          ? body
          : `Malformed answer to function ${functionCode}: it does not echo the request`,
    );
  }

  private takeId(): number {
    const id = this.nextId;
    this.nextId = this.nextId === 0xffff ? 1 : this.nextId + 1;
    return id;
  }

  private enqueue(
    id: number,
    unit: number,
    functionCode: number,
    bytes: Uint8Array,
    accept: Request['accept'],
  ): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id, unit, functionCode, accept, bytes, timer: undefined, resolve, reject });
      this.pump();
    });
  }

  /**
   * Closes the stream; pending requests fail as `closed` with `reason` as their message
   * (default: `The connection was closed.`). Idempotent.
   */
  async close(reason = 'The connection was closed.'): Promise<void> {
    if (!this.closed) this.shutDown(new ModbusRequestError('closed', reason));
    await this.stream?.close();
  }

  private pump(): void {
    const { clock, timeoutMs } = this.options;
    while (
      !this.draining &&
      this.inFlight.size < this.maxInFlight &&
      this.queue.length > 0 &&
      this.stream
    ) {
      const request = this.queue.shift() as Request;
      this.inFlight.set(request.id, request);
      request.timer = clock.setTimeout(() => this.timedOut(request), timeoutMs);
      this.stream.write(request.bytes);
    }
  }

  private timedOut(request: Request): void {
    if (this.inFlight.get(request.id) !== request) return;
    this.inFlight.delete(request.id);
    request.reject(
      new ModbusRequestError('timeout', `No answer within ${this.options.timeoutMs} ms`),
    );
    if (this.options.quietAfterTimeoutMs > 0) {
      // The answer may still be on its way: wait for silence, so it cannot be taken for the
      // answer to the next request. Its bytes still go through the framer (and are dropped
      // as unmatched), so one that began before the timeout is not counted as malformed.
      this.draining = true;
      this.drainingSince = this.options.clock.now();
      this.waitForQuiet();
      return;
    }
    this.framer.reset();
    this.pump();
  }

  /** (Re)starts the silent interval; when it passes, partial bytes are dropped and sending resumes. */
  private waitForQuiet(): void {
    const { clock, quietAfterTimeoutMs } = this.options;
    clock.clearTimer(this.quietTimer);
    this.quietTimer = clock.setTimeout(() => {
      this.quietTimer = undefined;
      this.draining = false;
      this.framer.reset();
      this.pump();
    }, quietAfterTimeoutMs);
  }

  private receive(chunk: Uint8Array): void {
    if (this.closed) return;
    if (this.draining) {
      this.waitForQuiet();
      // A line that never goes quiet (noise, another master) must not hold the requests
      // forever: each timeoutMs of chatter fails the next one as a timeout, so the driver
      // marks its tags and eventually reconnects.
      const { clock, timeoutMs } = this.options;
      if (clock.now() - this.drainingSince >= timeoutMs) {
        this.drainingSince = clock.now();
        this.queue
          .shift()
          ?.reject(
            new ModbusRequestError(
              'timeout',
              `The line did not go quiet within ${timeoutMs} ms`,
              undefined,
              false,
            ),
          );
      }
    }
    this.framer.push(chunk, this.sink);
    this.pump();
  }

  /** The stream cannot be resynchronised: close it and report it lost, as if it had closed. */
  private outOfStep(reason: string): void {
    if (this.closed) return;
    const message = `${reason}: the answers are out of step, so the connection is dropped`;
    this.shutDown(new ModbusRequestError('closed', message));
    void this.stream?.close();
    this.onLost?.(new Error(message));
  }

  private answer(frame: ModbusFrame): void {
    if (this.closed) return;
    let request: Request | undefined;
    if (frame.id !== undefined) request = this.inFlight.get(frame.id);
    else request = this.inFlight.values().next().value;
    // A late answer to a request that timed out, a wrong id, or another unit's on a shared line.
    if (request === undefined || frame.unit !== request.unit) {
      this.options.events?.unmatchedAnswer();
      return;
    }
    this.inFlight.delete(request.id);
    this.options.clock.clearTimer(request.timer);
    const body = frame.body;
    if (frame.functionCode === (request.functionCode | 0x80)) {
      request.reject(ModbusRequestError.exception(body[0] ?? 0));
      return;
    }
    const data =
      frame.functionCode === request.functionCode
        ? request.accept(body)
        : `Malformed answer: function ${frame.functionCode} (expected ${request.functionCode})`;
    if (typeof data === 'string') {
      request.reject(new ModbusRequestError('malformed', data));
      return;
    }
    request.resolve(data);
  }

  private shutDown(error: ModbusRequestError): void {
    this.closed = true;
    this.draining = false;
    this.options.clock.clearTimer(this.quietTimer);
    this.quietTimer = undefined;
    const sent = [...this.inFlight.values()];
    const queued = [...this.queue];
    this.inFlight.clear();
    this.queue.length = 0;
    for (const request of sent) {
      this.options.clock.clearTimer(request.timer);
      request.reject(error);
    }
    // Requests still queued never went out: a write among them changed nothing.
    const unsent = new ModbusRequestError(error.failure, error.message, undefined, false);
    for (const request of queued) request.reject(unsent);
  }
}
