/**
 * The Modbus driver: one connection (TCP or a serial line) to a device or a gateway, polling
 * its tags in groups by interval. Each group's tags are read with the fewest requests the
 * limits allow (see block-planner.ts) and written as one batch per poll. A refused block
 * ("illegal data address") is split into one request per tag, so only the tags at addresses
 * the device lacks turn Bad. A lost connection turns every tag Unavailable and the driver
 * reconnects with a doubling, capped wait on the injected clock. A device that stops answering
 * leaves no tag Good: unanswered requests turn their tags Bad (Timeout), and when the driver
 * gives up on the connection the reads it abandons turn theirs Unavailable at once. Each tag's
 * refresh bound (its interval plus the longest a poll takes while the device answers) is
 * declared to the store, which turns it Stale if no update comes in time.
 */
import type { TimerHandle } from '../../src/clock.js';
import type { QualityReason, Sample } from '../../src/tags/sample.js';
import { ConnectionLifecycle } from '../connection-lifecycle.js';
import {
  type Driver,
  type DriverDeps,
  type DriverStatus,
  pollRefreshBoundMs,
  type WritableTag,
  type WriteRequest,
  type WriteResult,
} from '../driver.js';
import { unavailableSample } from '../unavailable-sample.js';
import { decodeBit, decodeRegisters, exactInteger } from './codec.js';
import {
  longestPollMs,
  type ModbusTagState,
  type PlannedRequest,
  type PollGroup,
  planPolls,
  splitRequest,
  tagStates,
} from './poll-plan.js';
import { illegalDataAddress, ModbusRequestError } from './request-error.js';
import type { ModbusDriverConfig, ModbusTransportConfig } from './schema.js';
import { type WriteOptions, writeTag } from './tag-write.js';
import { type ConnectionEvents, ModbusConnection } from './transports/connection.js';
import type { ModbusFramer } from './transports/framer.js';
import { MbapFramer } from './transports/mbap-framer.js';
import { RtuFramer } from './transports/rtu-framer.js';
import { serialStreamOpener } from './transports/serial-stream.js';
import type { StreamOpener } from './transports/stream.js';
import { tcpStreamOpener } from './transports/tcp-stream.js';
import { rawWrite } from './value-encoder.js';

/** The running totals a Modbus driver reports in its status `counters`. */
export interface ModbusCounters {
  /** Polls started (one per group and interval). */
  polls: number;
  /** Poll ticks skipped because the group's previous poll had not finished. */
  pollsSkipped: number;
  /** Read requests sent. */
  requests: number;
  /** Exception answers. */
  exceptions: number;
  /** Requests without an answer within timeoutMs. */
  timeouts: number;
  /** Answers that did not fit their request (function code, byte count). */
  malformed: number;
  /**
   * Bytes the framer dropped as no answer at all: an RTU frame with a wrong CRC or an unknown
   * function code, an MBAP header with a protocol id other than 0 or a length outside 2–254
   * (which also drops the connection: the stream is out of step).
   */
  malformedFrames: number;
  /**
   * Answers that matched no request in flight, dropped: late after a timeout, a wrong
   * transaction id, another unit's.
   */
  unmatchedAnswers: number;
  /** Blocks refused with "illegal data address" and since read one tag per request. */
  blocksSplit: number;
  /** Connections lost or given up after repeated timeouts. */
  disconnects: number;
  /** Connection attempts that failed (refused, timed out, no such port). */
  connectsFailed: number;
  /** Write requests sent (FC 5, 6, 15, 16, 22; a read-modify-write counts its write). */
  writeRequests: number;
  /** Writes whose outcome is unknown: sent, and not acknowledged. */
  writesUncertain: number;
}

/** Optional collaborators of {@link ModbusDriver}, for tests. */
export interface ModbusDriverOptions {
  /** Opens the byte stream instead of the transport the config describes. */
  opener?: StreamOpener;
}

/** A Modbus device polled over TCP or RTU. */
export class ModbusDriver implements Driver {
  readonly type = 'modbus';
  readonly name: string;
  private readonly counters: ModbusCounters = {
    polls: 0,
    pollsSkipped: 0,
    requests: 0,
    exceptions: 0,
    timeouts: 0,
    malformed: 0,
    malformedFrames: 0,
    unmatchedAnswers: 0,
    blocksSplit: 0,
    disconnects: 0,
    connectsFailed: 0,
    writeRequests: 0,
    writesUncertain: 0,
  };
  private readonly connectionEvents: ConnectionEvents = {
    malformedFrame: (reason) => {
      this.counters.malformedFrames++;
      this.deps.logger.debug({ reason }, 'Modbus frame dropped');
    },
    unmatchedAnswer: () => {
      this.counters.unmatchedAnswers++;
    },
  };
  private tags: ModbusTagState[] = [];
  private byId = new Map<string, ModbusTagState>();
  private groups: PollGroup[] = [];
  private connection: ModbusConnection | undefined;
  private pollTimers: TimerHandle[] = [];
  /** Groups with a poll under way on the current connection. */
  private busy = new Set<PollGroup>();
  private readonly lifecycle: ConnectionLifecycle;
  /** Aborts the connection attempt under way, if any. */
  private opening: AbortController | undefined;
  private consecutiveTimeouts = 0;
  /** Bumped whenever the tags are written Unavailable: a poll that began before is dropped. */
  private outage = 0;
  /**
   * Resolves when the last write taken may be followed: once its request is queued on the
   * connection (or once it is answered, see {@link write}).
   */
  private writing: Promise<void> = Promise.resolve();
  /** The read request of each tag (before any split of its block), for reads after writes. */
  private readOf = new Map<ModbusTagState, PlannedRequest>();
  /** Units that answered FC 22 with "illegal function": bit tags get a read-modify-write. */
  private readonly noMaskWrite = new Set<number>();
  /** Units that acknowledged an FC 22: their bit writes need no fallback. */
  private readonly maskWriteWorks = new Set<number>();
  /** Blocks with a read after a write queued and not answered yet. */
  private readonly readingBack = new Set<PlannedRequest>();
  /**
   * Per block: writes to it under way, and whether one of them was acknowledged. A burst of
   * writes to one block is read back once, when its last write is answered.
   */
  private readonly blockWrites = new Map<PlannedRequest, { pending: number; good: boolean }>();

  constructor(
    private readonly config: ModbusDriverConfig,
    private readonly deps: DriverDeps,
    private readonly options: ModbusDriverOptions = {},
  ) {
    this.name = config.name;
    this.lifecycle = new ConnectionLifecycle('Modbus', deps, config, {
      counters: () => ({ ...this.counters }),
      writeUnavailable: (message) => this.writeUnavailable(message),
    });
  }

  /** Declares the tags and starts connecting (resolves before the connection is made). */
  start(): Promise<void> {
    return this.lifecycle.start(() => this.begin());
  }

  stop(): Promise<void> {
    return this.lifecycle.stop(() => {
      this.opening?.abort();
      this.opening = undefined;
      return this.dropConnection();
    });
  }

  status(): DriverStatus {
    return this.lifecycle.status(this.tags.length);
  }

  writableTags(): WritableTag[] {
    const allowWrites = this.config.allowWrites === true;
    return this.tags
      .filter((tag) => tag.config.writable)
      .map((tag) => ({
        fullTagId: tag.fullTagId,
        allowWrites,
        ...(tag.config.writeMin !== undefined ? { writeMin: tag.config.writeMin } : {}),
        ...(tag.config.writeMax !== undefined ? { writeMax: tag.config.writeMax } : {}),
        check: (value, numberText) => {
          const raw = rawWrite(this.encodable(tag), value, numberText);
          return typeof raw === 'string' ? raw : undefined;
        },
      }));
  }

  /**
   * Writes each value once, in order, behind the writes already under way. The connection's
   * queue (shared with the polls) sends requests in the order they are queued, so a write is
   * queued as soon as the one before it is: writes from many clients go out back to back
   * without waiting for each other's acknowledgement. Two cases hold the next write until
   * this one is answered: a bit that may need a read-modify-write (its read and write must not
   * have another write of tagd's between them), and a TCP connection with
   * `maxConcurrentRequests` above 1 (requests in flight together may be applied in any order).
   */
  write(requests: readonly WriteRequest[]): Promise<WriteResult[]> {
    return Promise.all(requests.map((request) => this.enqueueWrite(request)));
  }

  private enqueueWrite(request: WriteRequest): Promise<WriteResult> {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.writing;
    this.writing = released;
    const inOrder = this.config.transport.kind === 'rtu' || this.config.maxConcurrentRequests === 1;
    const result = previous.then(() => this.writeOne(request, inOrder ? release : () => {}));
    // then(release, release): a rejected write must not leave a second, unhandled rejection.
    result.then(release, release);
    return result;
  }

  /**
   * @param queued called once the write no longer needs the writes after it to wait: its last
   *   request is in the connection's queue, or it ended without one.
   */
  private async writeOne(request: WriteRequest, queued: () => void): Promise<WriteResult> {
    const tag = this.byId.get(request.fullTagId);
    if (tag === undefined || !tag.config.writable)
      return { status: 'Bad', reason: 'NotSupported', message: 'The tag is not writable.' };
    const raw = rawWrite(this.encodable(tag), request.value);
    if (typeof raw === 'string') return { status: 'Bad', reason: 'NotSupported', message: raw };
    const connection = this.connection;
    if (connection === undefined)
      return {
        status: 'Bad',
        reason: 'Disconnected',
        message: 'The device is not connected; nothing was sent.',
      };
    // A bit of a unit not known to take FC 22 may need a read-modify-write after its refusal.
    const mayFallBack = tag.type === 'bit' && !this.maskWriteWorks.has(tag.unitId);
    const block = this.requestOf(tag);
    const burst = block && (this.blockWrites.get(block) ?? { pending: 0, good: false });
    if (block && burst) {
      burst.pending++;
      this.blockWrites.set(block, burst);
    }
    let result: WriteResult;
    try {
      result = await writeTag(
        connection,
        tag,
        raw,
        this.writeOptions(mayFallBack ? undefined : queued),
      );
    } finally {
      if (burst) burst.pending--;
    }
    if (tag.type === 'bit' && !this.noMaskWrite.has(tag.unitId) && result.status === 'Good')
      this.maskWriteWorks.add(tag.unitId);
    if (result.status === 'Uncertain') this.counters.writesUncertain++;
    if (result.reason === 'DeviceException') this.counters.exceptions++;
    if (block && burst) {
      if (result.status === 'Good') burst.good = true;
      // The last write of a burst to the block reads it back, for every Good one before it.
      if (burst.pending === 0) {
        this.blockWrites.delete(block);
        if (burst.good) this.readBack(block, connection);
      }
    }
    return result;
  }

  private writeOptions(queued?: () => void): WriteOptions {
    return {
      queued: queued ?? (() => {}),
      multiple: this.config.writeFunctions === 'multiple',
      noMaskWrite: this.noMaskWrite,
      maskWriteRefused: (unit) =>
        this.deps.logger.warn(
          { unitId: unit },
          'the device refused FC 22 (Mask Write Register) with illegal function: bit tags are ' +
            'written by read-modify-write (FC 3, then FC 6) from now on',
        ),
      sent: () => {
        this.counters.writeRequests++;
      },
    };
  }

  private encodable(tag: ModbusTagState) {
    const { order, scale, offset, length } = tag.config;
    return { type: tag.type, order, scale, offset, length };
  }

  /**
   * Reads a block at once after a Good write to it, so the value the device now holds reaches
   * the store without waiting for the next poll. Queued right behind the write (behind the
   * last of a burst of writes to the block).
   */
  private readBack(request: PlannedRequest, connection: ModbusConnection): void {
    // A read of the block queued and not answered yet comes after this write in the queue
    // (one request in flight, in queue order): it will read the new value too.
    if (this.readingBack.has(request)) return;
    this.readingBack.add(request);
    const outage = this.outage;
    const samples: Sample[] = [];
    this.execute(connection, request, samples)
      .finally(() => this.readingBack.delete(request))
      .then(() => {
        if (outage !== this.outage || samples.length === 0 || connection !== this.connection)
          return;
        this.deps.store.write(samples);
      })
      .catch((error: unknown) =>
        this.deps.logger.error({ err: error }, 'Modbus read after a write failed'),
      );
  }

  /** The read request (or, for a split block, the part) that reads `tag`. */
  private requestOf(tag: ModbusTagState): PlannedRequest | undefined {
    const request = this.readOf.get(tag);
    return request?.parts?.find((part) => part.tags.includes(tag)) ?? request;
  }

  /** The requests of each poll group, in planning order (for tests and the benchmark). */
  plannedRequests(): {
    intervalMs: number;
    requests: { table: string; start: number; count: number }[];
  }[] {
    return this.groups.map((group) => ({
      intervalMs: group.intervalMs,
      requests: group.requests.map(({ table, start, count }) => ({ table, start, count })),
    }));
  }

  private async begin(): Promise<void> {
    const { logger } = this.deps;
    this.tags = tagStates(this.config);
    this.byId = new Map(this.tags.map((tag) => [tag.fullTagId, tag]));
    this.groups = planPolls(this.config, this.tags);
    this.readOf = new Map(
      this.groups.flatMap((group) =>
        group.requests.flatMap((request) => request.tags.map((tag) => [tag, request] as const)),
      ),
    );
    const pollMs = this.declareTags();
    const run = this.lifecycle.started();
    logger.info(
      {
        transport: this.describe(),
        tags: this.tags.length,
        requestsPerPoll: this.groups.map((group) => ({
          intervalMs: group.intervalMs,
          requests: group.requests.length,
          refreshBoundMs: pollRefreshBoundMs(group.intervalMs, pollMs),
        })),
      },
      'Modbus driver started',
    );
    this.lifecycle.detached(run, () => this.connect(run));
  }

  /**
   * Declares the tags to the store with their refresh bound: a tag's poll interval plus the
   * longest a poll takes while the device answers (see `longestPollMs`), at least three
   * intervals and a second. Declared again when a block is split, as that adds requests.
   * @returns the longest poll, ms.
   */
  private declareTags(): number {
    const { staleAfterMs, pollIntervalMs, timeoutMs, transport } = this.config;
    // An RTU line carries one request at a time (its answers have no id to match them by).
    const concurrent = transport.kind === 'tcp' ? this.config.maxConcurrentRequests : 1;
    const pollMs = longestPollMs(this.groups, concurrent, timeoutMs);
    this.deps.store.define(
      this.tags.map((tag) => ({
        fullTagId: tag.fullTagId,
        metadata: tag.metadata,
        refreshBoundMs: pollRefreshBoundMs(tag.config.pollIntervalMs ?? pollIntervalMs, pollMs),
        ...(staleAfterMs !== undefined ? { staleAfterMs } : {}),
      })),
    );
    return pollMs;
  }

  private describe(): string {
    const transport = this.config.transport;
    return transport.kind === 'tcp'
      ? `tcp://${transport.host}:${transport.port}`
      : `rtu:${transport.path}@${transport.baudRate}`;
  }

  private opener(): StreamOpener {
    if (this.options.opener) return this.options.opener;
    const { clock } = this.deps;
    const { transport, timeoutMs } = this.config;
    return transport.kind === 'tcp'
      ? tcpStreamOpener({ host: transport.host, port: transport.port, timeoutMs, clock })
      : serialStreamOpener({ ...transport, timeoutMs, clock });
  }

  private framer(): ModbusFramer {
    return this.config.transport.kind === 'tcp' ? new MbapFramer() : new RtuFramer();
  }

  /** How long an RTU line must be silent after a timeout before the next request, ms. */
  private quietAfterTimeoutMs(): number {
    const transport = this.config.transport;
    if (transport.kind === 'tcp') return 0;
    return Math.max(rtuSilentInterval(transport), transport.turnaroundMs);
  }

  private async connect(run: number): Promise<void> {
    const lifecycle = this.lifecycle;
    if (!lifecycle.isCurrent(run)) return;
    lifecycle.attempt();
    let connection: ModbusConnection | undefined;
    const opening = new AbortController();
    this.opening = opening;
    try {
      connection = await ModbusConnection.open(
        this.opener(),
        this.framer(),
        {
          timeoutMs: this.config.timeoutMs,
          maxInFlight: this.config.maxConcurrentRequests,
          quietAfterTimeoutMs: this.quietAfterTimeoutMs(),
          clock: this.deps.clock,
          events: this.connectionEvents,
        },
        (error) => {
          if (
            lifecycle.isCurrent(run) &&
            connection !== undefined &&
            connection === this.connection
          )
            this.lost(error);
        },
        opening.signal,
      );
    } catch (error) {
      if (this.opening === opening) this.opening = undefined;
      if (!lifecycle.isCurrent(run)) return;
      this.counters.connectsFailed++;
      this.failed(error as Error, true);
      return;
    }
    if (this.opening === opening) this.opening = undefined;
    if (!lifecycle.isCurrent(run)) {
      await connection.close();
      return;
    }
    const { logger, clock } = this.deps;
    this.connection = connection;
    this.busy = new Set();
    this.consecutiveTimeouts = 0;
    if (lifecycle.attempts > 1) {
      logger.info(
        { transport: this.describe(), attempts: lifecycle.attempts },
        'Modbus device connected again',
      );
    } else logger.info({ transport: this.describe() }, 'Modbus device connected');
    lifecycle.setState('Running');
    for (const group of this.groups) {
      this.pollTimers.push(clock.setInterval(() => this.poll(group, connection), group.intervalMs));
    }
    for (const group of this.groups) this.poll(group, connection);
  }

  /** The connection closed on its own: tags Unavailable, reconnect. */
  private lost(error: Error): void {
    this.counters.disconnects++;
    this.lifecycle.resetAttempts();
    void this.dropConnection();
    this.failed(error, true);
  }

  /** Stops polling and closes the connection; `reason` is what the abandoned reads report. */
  private async dropConnection(reason?: string): Promise<void> {
    for (const timer of this.pollTimers) this.deps.clock.clearTimer(timer);
    this.pollTimers = [];
    const connection = this.connection;
    this.connection = undefined;
    await connection?.close(reason);
  }

  /** Waits, then connects again; `unavailable` writes the tags Unavailable meanwhile. */
  private failed(error: Error, unavailable: boolean): void {
    const message = error.message;
    if (unavailable) this.lifecycle.markUnavailable(message);
    const run = this.lifecycle.generation;
    this.lifecycle.retryLater(message, () => this.connect(run));
  }

  private poll(group: PollGroup, connection: ModbusConnection): void {
    if (connection !== this.connection) return;
    const busy = this.busy;
    if (busy.has(group)) {
      this.counters.pollsSkipped++;
      return;
    }
    busy.add(group);
    this.counters.polls++;
    const began = performance.now();
    const outage = this.outage;
    const samples: Sample[] = [];
    const requests = group.requests;
    const reads: Promise<void>[] = new Array(requests.length);
    for (let i = 0; i < requests.length; i++) {
      reads[i] = this.execute(connection, requests[i] as PlannedRequest, samples);
    }
    Promise.all(reads)
      .then(() => {
        busy.delete(group);
        this.deps.metrics?.observePollSeconds((performance.now() - began) / 1000);
        // Tags written Unavailable since the poll began stay so: the results are out of date.
        if (outage !== this.outage || samples.length === 0) return;
        this.lifecycle.markAvailable();
        this.deps.store.write(samples);
      })
      .catch((error: unknown) => {
        busy.delete(group);
        this.deps.logger.error({ err: error }, 'Modbus poll failed');
      });
  }

  private async execute(
    connection: ModbusConnection,
    request: PlannedRequest,
    samples: Sample[],
  ): Promise<void> {
    if (request.parts !== undefined) {
      await Promise.all(request.parts.map((part) => this.execute(connection, part, samples)));
      return;
    }
    this.counters.requests++;
    let data: Uint8Array;
    try {
      data = await connection.read(
        request.unitId,
        request.functionCode,
        request.start,
        request.count,
      );
    } catch (error) {
      if (!(error instanceof ModbusRequestError)) throw error;
      await this.refused(connection, request, error, samples);
      return;
    }
    // Only an answer proves the device works: one that accepts connections and then stays
    // silent keeps the wait growing.
    if (connection === this.connection) {
      this.consecutiveTimeouts = 0;
      this.lifecycle.resetBackoff();
    }
    this.decode(request, data, samples);
  }

  private async refused(
    connection: ModbusConnection,
    request: PlannedRequest,
    error: ModbusRequestError,
    samples: Sample[],
  ): Promise<void> {
    const counters = this.counters;
    switch (error.failure) {
      case 'closed':
        // The read was abandoned with the connection. When the connection was lost or the driver
        // stopped, every tag is written Unavailable anyway (and this poll's results dropped);
        // when the driver gave up after repeated timeouts, these tags would otherwise keep their
        // last Good value for as long as the earlier requests of each poll keep timing out.
        this.notRead(request.tags, 'Unavailable', 'Disconnected', error.message, samples);
        return;
      case 'exception':
        counters.exceptions++;
        if (error.exceptionCode === illegalDataAddress && request.tags.length > 1) {
          counters.blocksSplit++;
          request.parts = splitRequest(request);
          this.declareTags();
          this.deps.logger.warn(
            {
              unitId: request.unitId,
              table: request.table,
              start: request.start,
              count: request.count,
            },
            `the device refused a block of ${request.count} addresses (illegal data address); its ${request.tags.length} tags are read one by one from now on`,
          );
          await this.execute(connection, request, samples);
          return;
        }
        this.bad(request.tags, 'DeviceException', error.message, samples);
        return;
      case 'malformed':
        counters.malformed++;
        this.bad(request.tags, 'DecodeError', error.message, samples);
        return;
      case 'timeout':
        counters.timeouts++;
        this.bad(request.tags, 'Timeout', error.message, samples);
        if (connection !== this.connection) return;
        this.consecutiveTimeouts++;
        if (this.consecutiveTimeouts >= this.config.timeoutsBeforeReconnect) {
          this.counters.disconnects++;
          const message = `${this.consecutiveTimeouts} requests in a row were not answered within ${this.config.timeoutMs} ms; reconnecting`;
          this.deps.logger.warn(message);
          void this.dropConnection(`Not read: ${message}`);
          // The tags are Bad (Timeout) already; they turn Unavailable only if reconnecting fails.
          this.failed(new Error(message), false);
        }
        return;
    }
  }

  private decode(request: PlannedRequest, data: Uint8Array, samples: Sample[]): void {
    const utcTimestamp = new Date(this.deps.clock.now()).toISOString();
    const tags = request.tags;
    for (let i = 0; i < tags.length; i++) {
      const tag = tags[i] as ModbusTagState;
      const config = tag.config;
      const offset = config.address - request.start;
      let value: number | boolean | string;
      // The exact decimal of a 64-bit integer the double had to round.
      let text: string | undefined;
      if (tag.type === 'bool') value = decodeBit(data, offset);
      else {
        value = decodeRegisters(
          data,
          offset * 2,
          tag.type,
          config.order,
          config.bit,
          config.length,
        );
        if (typeof value === 'number') {
          if (config.scale !== 1 || config.offset !== 0)
            value = value * config.scale + config.offset;
          // Only an unscaled count is worth its exact digits; a scaled one is a measurement.
          else if (tag.type === 'int64' || tag.type === 'uint64')
            text = exactInteger(data, offset * 2, tag.type, config.order);
          if (!Number.isFinite(value)) {
            this.bad([tag], 'DecodeError', 'The register holds NaN or an infinity.', samples);
            continue;
          }
          if (config.deadband !== undefined) {
            const last = tag.lastReported;
            if (last !== undefined && Math.abs(value - last) <= config.deadband) {
              value = last;
              text = tag.lastReportedText;
            } else {
              tag.lastReported = value;
              tag.lastReportedText = text;
            }
          }
        }
      }
      samples.push({
        fullTagId: tag.fullTagId,
        utcTimestamp,
        quality: 'Good',
        value,
        metadata: text === undefined ? tag.metadata : { ...tag.metadata, valueText: text },
      });
    }
  }

  private bad(
    tags: readonly ModbusTagState[],
    reason: 'DeviceException' | 'Timeout' | 'DecodeError',
    message: string,
    samples: Sample[],
  ): void {
    this.notRead(tags, 'Bad', reason, message, samples);
  }

  /** Adds a sample without a value for each tag, and forgets its deadband reference. */
  private notRead(
    tags: readonly ModbusTagState[],
    quality: 'Bad' | 'Unavailable',
    reason: QualityReason,
    message: string,
    samples: Sample[],
  ): void {
    const utcTimestamp = new Date(this.deps.clock.now()).toISOString();
    for (const tag of tags) {
      tag.lastReported = undefined;
      tag.lastReportedText = undefined;
      samples.push({
        fullTagId: tag.fullTagId,
        utcTimestamp,
        quality,
        reason,
        message,
        metadata: tag.metadata,
      });
    }
  }

  /** Writes every tag Unavailable (Disconnected); the lifecycle calls it once per outage. */
  private writeUnavailable(message: string): void {
    if (this.tags.length === 0) return;
    this.outage++;
    const utcTimestamp = new Date(this.deps.clock.now()).toISOString();
    this.deps.store.write(
      this.tags.map((tag) => {
        tag.lastReported = undefined;
        tag.lastReportedText = undefined;
        return unavailableSample(tag, utcTimestamp, message);
      }),
    );
  }
}

/**
 * The RTU silent interval between frames, 3.5 character times, ms: a character is a start bit,
 * the data bits, a parity bit if any and the stop bits. Above 19200 baud the specification
 * fixes it at 1.75 ms.
 */
export function rtuSilentInterval(
  line: Pick<
    Extract<ModbusTransportConfig, { kind: 'rtu' }>,
    'baudRate' | 'parity' | 'dataBits' | 'stopBits'
  >,
): number {
  if (line.baudRate > 19_200) return 1.75;
  const bits = 1 + line.dataBits + (line.parity === 'none' ? 0 : 1) + line.stopBits;
  return (3.5 * bits * 1000) / line.baudRate;
}
