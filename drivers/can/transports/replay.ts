/**
 * Replay transport: plays a `candump -L` log as if the bus were live, keeping the logged spacing
 * between frames (divided by a speed factor) and optionally starting over at the end. Waits use
 * the injected Clock, so a manual clock plays a log without sleeping. The file is read in chunks
 * ahead of playback, so a log of millions of frames is never held in memory at once; a small log
 * (the usual demo) is read once and looped from memory.
 */
import type { FileHandle } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../../src/clock.js';
import { openProfileFile } from '../../../src/profile/profile-file.js';
import type { CanFrame } from '../frame.js';
import { parseCandumpLine } from './candump-log.js';
import { type CanTransport, CanTransportError, type TransportHandlers } from './transport.js';

/** Options of {@link ReplayTransport}. */
export interface ReplayTransportOptions {
  /** Path of the `candump -L` log. */
  file: string;
  /** Playback speed factor: 2 plays twice as fast as recorded. Default: 1. */
  speed?: number;
  /** Start over after the last frame. Default: false (tags keep their last values). */
  loop?: boolean;
  /** Play only the frames logged on this interface (the log's second column). Default: all. */
  channel?: string;
  /** Frames parsed ahead of playback; logs up to this size are looped from memory. Default: 50,000. */
  readAheadFrames?: number;
  clock: Clock;
  logger: Logger;
}

/** A parsed frame with its logged time. */
interface Recorded {
  /** Logged time, epoch ms. */
  time: number;
  frame: CanFrame;
}

/** Bytes read from the log per read call. */
const chunkBytes = 256 * 1024;
/** Most frames handed over in one batch, so that a very fast replay still yields to I/O. */
const maxBatch = 1000;

/** Plays a candump log file. */
export class ReplayTransport implements CanTransport {
  readonly description: string;
  private readonly speed: number;
  private readonly readAhead: number;
  private handlers: TransportHandlers | undefined;
  private handle: FileHandle | undefined;
  /** Bumped by open and close: a read finishing for an earlier open is ignored. */
  private generation = 0;
  private queue: Recorded[] = [];
  private head = 0;
  private position = 0;
  private carry = '';
  private eof = false;
  private reading: Promise<void> | undefined;
  private timer: TimerHandle | undefined;
  /** Every frame of the log, kept when it all fit in the read-ahead: loops replay it from memory. */
  private whole: Recorded[] | undefined;
  /** Playback time (clock ms) of logged time `firstTime`, for the current pass. */
  private base = 0;
  private firstTime: number | undefined;
  private lastTime = 0;
  private lastDue = 0;
  private framesThisPass = 0;
  private readonly decoder = new TextDecoder('latin1');

  constructor(private readonly options: ReplayTransportOptions) {
    this.speed = options.speed ?? 1;
    this.readAhead = options.readAheadFrames ?? 50_000;
    if (!(this.speed > 0 && Number.isFinite(this.speed))) {
      throw new RangeError(`The replay speed must be a positive number, not ${this.speed}.`);
    }
    this.description = `replay ${options.file}`;
  }

  async open(handlers: TransportHandlers): Promise<void> {
    if (this.handle !== undefined) throw new Error(`${this.description} is already open.`);
    const generation = ++this.generation;
    this.resetReader();
    this.whole = undefined;
    this.firstTime = undefined;
    this.framesThisPass = 0;
    let handle: FileHandle;
    try {
      // Through the profile-file check at every (re)connect, not only at start-up: a FIFO or
      // device swapped in for the log later is refused at once instead of hanging this open.
      handle = await openProfileFile(this.options.file, 'the replay log');
    } catch (error) {
      throw new CanTransportError('bad-source', (error as Error).message, { cause: error });
    }
    if (generation !== this.generation) {
      await handle.close();
      throw new CanTransportError('connection', `${this.description}: closed while opening.`);
    }
    this.handle = handle;
    this.handlers = handlers;
    try {
      // Read ahead before playing: a small log is then read whole and loops from memory.
      while (!this.eof && this.available() < this.readAhead) await this.fill(generation);
    } catch (error) {
      await this.close();
      throw error;
    }
    if (this.available() === 0) {
      await this.close();
      throw new CanTransportError(
        'bad-source',
        `The replay log ${this.options.file} holds no CAN frame${
          this.options.channel ? ` of interface '${this.options.channel}'` : ''
        } (expected candump -L lines like '(1436509052.249713) can0 123#DEADBEEF').`,
      );
    }
    if (this.eof) this.whole = this.queue.slice();
    const first = this.queue[this.head] as Recorded;
    this.firstTime = first.time;
    this.base = this.options.clock.now();
    this.pump();
  }

  async close(): Promise<void> {
    this.generation++;
    this.options.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.handlers = undefined;
    this.resetReader();
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  private resetReader(): void {
    this.queue = [];
    this.head = 0;
    this.position = 0;
    this.carry = '';
    this.eof = false;
    this.reading = undefined;
  }

  private available(): number {
    return this.queue.length - this.head;
  }

  /** Plays every frame that is due, then waits on the clock (or on the reader) for the next. */
  private pump(): void {
    this.timer = undefined;
    const handlers = this.handlers;
    if (handlers === undefined) return;
    const generation = this.generation;
    const clock = this.options.clock;
    for (;;) {
      if (this.available() === 0) {
        if (!this.eof) {
          this.readMore(generation, true);
          return;
        }
        if (!this.options.loop) {
          this.handlers = undefined;
          handlers.onEnd({ kind: 'finished' });
          return;
        }
        this.restart();
        if (this.available() === 0) {
          this.readMore(generation, true);
          return;
        }
      }
      const now = clock.now();
      const nextDue = this.due(this.queue[this.head] as Recorded);
      if (nextDue > now) {
        this.timer = clock.setTimeout(() => this.pump(), nextDue - now);
        if (this.available() < this.readAhead / 2) this.readMore(generation, false);
        return;
      }
      const batch: CanFrame[] = [];
      while (this.available() > 0 && batch.length < maxBatch) {
        const recorded = this.queue[this.head] as Recorded;
        const due = this.due(recorded);
        if (due > now) break;
        this.head++;
        this.lastTime = recorded.time;
        this.lastDue = due;
        this.framesThisPass++;
        // Played frames carry the playback time: a replayed bus looks live.
        recorded.frame.timestamp = due;
        batch.push(recorded.frame);
      }
      if (this.head > 4096 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      handlers.onFrames(batch);
      // A handler may have closed the transport.
      if (generation !== this.generation || this.handlers === undefined) return;
    }
  }

  /** Clock time at which a recorded frame plays in the current pass. */
  private due(recorded: Recorded): number {
    return this.base + (recorded.time - (this.firstTime ?? recorded.time)) / this.speed;
  }

  /**
   * Starts the next pass: the first frame plays one average frame interval after the last one,
   * so a log recorded over one cycle of the bus loops without a visible gap or burst.
   */
  private restart(): void {
    const first = this.firstTime ?? 0;
    const span = this.lastTime - first;
    const gap = this.framesThisPass > 1 ? span / (this.framesThisPass - 1) : 1000;
    this.base = this.lastDue + gap / this.speed;
    this.framesThisPass = 0;
    if (this.whole !== undefined) {
      this.queue = this.whole.slice();
      this.head = 0;
      return;
    }
    this.resetReader();
  }

  private readMore(generation: number, resume: boolean): void {
    if (this.reading === undefined) {
      this.reading = this.fill(generation).finally(() => {
        if (generation === this.generation) this.reading = undefined;
      });
    }
    const reading = this.reading;
    reading.then(
      () => {
        if (resume && generation === this.generation && this.timer === undefined) this.pump();
      },
      (error: Error) => {
        if (generation !== this.generation) return;
        const handlers = this.handlers;
        void this.close();
        handlers?.onEnd({
          kind: 'lost',
          error: new CanTransportError('bad-source', `${this.description}: ${error.message}`, {
            cause: error,
          }),
        });
      },
    );
  }

  /** Reads the next chunk of the log and queues its frames. */
  private async fill(generation: number): Promise<void> {
    const handle = this.handle;
    if (handle === undefined || this.eof) return;
    const buffer = Buffer.allocUnsafe(chunkBytes);
    const { bytesRead } = await handle.read(buffer, 0, chunkBytes, this.position);
    if (generation !== this.generation) return;
    this.position += bytesRead;
    let text = this.carry + this.decoder.decode(buffer.subarray(0, bytesRead));
    if (bytesRead === 0) {
      this.eof = true;
      text += '\n';
    }
    let start = 0;
    let malformed = 0;
    const channel = this.options.channel;
    for (;;) {
      const end = text.indexOf('\n', start);
      if (end < 0) break;
      const parsed = parseCandumpLine(text.slice(start, end));
      start = end + 1;
      if (parsed === undefined) malformed++;
      else if (parsed.kind === 'frame' && (channel === undefined || parsed.channel === channel)) {
        this.queue.push({ time: parsed.time, frame: parsed.frame });
      }
    }
    this.carry = text.slice(start);
    if (this.carry.length > 65_536) {
      // A "line" this long is not a candump line; drop it rather than grow without bound.
      this.carry = '';
      malformed++;
    }
    if (malformed > 0) this.handlers?.onMalformed?.(malformed);
  }
}
