/**
 * The CAN driver: one bus, decoded with one DBC file. Every signal of the DBC is the tag
 * `<component>/<message>/<signal>`; every received frame of a known message is decoded by that
 * message's compiled decoder and written as one batch with the other frames received with it.
 * A lost adapter, socket or bus (bus-off) turns every signal Unavailable and the driver
 * reconnects with a doubling, capped wait on the injected clock.
 */
import { resolve } from 'node:path';
import { dbcCatalogEntries } from '../../src/dbc/catalog-entries.js';
import { compileMessageDecoder, type MessageDecoder } from '../../src/dbc/decode.js';
import type { DbcDatabase, DbcMessage, DbcSignal } from '../../src/dbc/model.js';
import { parseDbc } from '../../src/dbc/parse-dbc.js';
import { profileFileLimits, readProfileFile } from '../../src/profile/profile-file.js';
import type { Sample, SampleMetadata } from '../../src/tags/sample.js';
import type { TagDefinition } from '../../src/tags/tag-store.js';
import { ConnectionLifecycle } from '../connection-lifecycle.js';
import { type Driver, type DriverDeps, type DriverStatus, driverTagId } from '../driver.js';
import { unavailableSample } from '../unavailable-sample.js';
import type { CanFrame } from './frame.js';
import type { CanDriverConfig } from './schema.js';
import { signalStaleAfterMs } from './stale-bounds.js';
import { createTransport } from './transports/create-transport.js';
import {
  type CanTransport,
  CanTransportError,
  type TransportEnd,
  type TransportHandlers,
} from './transports/transport.js';

/**
 * Sample metadata of a CAN signal: the DBC's unit, comment and value label, and the raw value.
 * `valueText` is the VAL_ label of the raw value; for an unlabelled integer signal whose value is
 * beyond ±2^53 (a double only approximates it) and whose factor and offset are integers, it is
 * the value's exact decimal instead, as the Modbus driver gives for 64-bit registers.
 */
export interface CanSampleMetadata extends SampleMetadata {
  /**
   * Raw value before scaling. A number even for signals over 53 bits: beyond ±2^53 it is the
   * nearest double, and `rawText` holds the exact integer.
   */
  raw?: number;
  /** The exact decimal of the raw value when it is beyond ±2^53 (absent otherwise). */
  rawText?: string;
}

/** 2^53: up to this magnitude doubles hold every integer; beyond it they skip some. */
const exactLimit = 2n ** 53n;

/** The running totals a CAN driver reports in its status `counters`. */
export interface CanCounters {
  /** Frames received, of every kind. */
  framesReceived: number;
  /** Frames of a message of the DBC, decoded. */
  framesDecoded: number;
  /** Frames whose identifier the DBC does not define: counted, never logged one by one. */
  framesUnknown: number;
  /** Remote frames (no payload to decode). */
  framesRemote: number;
  /** Signals written Bad because the frame was too short for them (DecodeError). */
  signalsTruncated: number;
  /** Lines or records the transport could not parse. */
  malformed: number;
  /** Connections lost (adapter gone, socket closed, bus-off). */
  disconnects: number;
}

/** What the driver knows of one signal's tag. */
interface SignalTag {
  fullTagId: string;
  unit: string | undefined;
  description: string | undefined;
  /** Metadata of samples without a value (no raw, no label). */
  metadata: SampleMetadata | undefined;
}

/** A message of the DBC, ready to decode. */
interface MessageEntry {
  decoder: MessageDecoder;
  message: DbcMessage;
  /** One per signal, in the order of the decoder's result. */
  tags: SignalTag[];
}

/** Longest DBC comment carried as a tag's description. */
const maxDescription = 256;

/** Optional collaborators of {@link CanDriver}, for tests. */
export interface CanDriverOptions {
  /** Transport to use instead of the one the config describes. */
  transport?: CanTransport;
}

/** A CAN bus decoded with a DBC file. */
export class CanDriver implements Driver {
  readonly type = 'can';
  readonly name: string;
  private readonly counters: CanCounters = {
    framesReceived: 0,
    framesDecoded: 0,
    framesUnknown: 0,
    framesRemote: 0,
    signalsTruncated: 0,
    malformed: 0,
    disconnects: 0,
  };
  private standard = new Map<number, MessageEntry>();
  private extended = new Map<number, MessageEntry>();
  private tags: SignalTag[] = [];
  private transport: CanTransport | undefined;
  private readonly lifecycle: ConnectionLifecycle;
  private unknownLogged = false;

  constructor(
    private readonly config: CanDriverConfig,
    private readonly deps: DriverDeps,
    private readonly options: CanDriverOptions = {},
  ) {
    this.name = config.name;
    this.lifecycle = new ConnectionLifecycle('CAN', deps, config, {
      counters: () => ({ ...this.counters }),
      writeUnavailable: (message) => this.writeUnavailable(message),
    });
  }

  /**
   * Reads and parses the DBC, registers it in the DBC catalog, declares one tag per signal and
   * starts connecting (resolves before the connection is made).
   * @throws Error when the DBC file cannot be read, DbcParseError (`dbc-invalid`) when it is
   *   malformed, ValidationError when a message or signal name cannot be a tag path segment.
   */
  start(): Promise<void> {
    return this.lifecycle.start(() => this.begin());
  }

  stop(): Promise<void> {
    return this.lifecycle.stop(async () => {
      const transport = this.transport;
      this.transport = undefined;
      await transport?.close();
      this.deps.dbc?.unregister(this.name);
    });
  }

  status(): DriverStatus {
    return this.lifecycle.status(this.tags.length);
  }

  private async begin(): Promise<void> {
    const { store, logger, dbc } = this.deps;
    const baseDir = this.deps.profileDir ?? process.cwd();
    const dbcPath = resolve(baseDir, this.config.dbcFile);
    let bytes: Uint8Array;
    try {
      // A regular file of bounded size only: a FIFO or device must not hang the start-up.
      bytes = await readProfileFile(dbcPath, 'the DBC file', profileFileLimits.dbc);
    } catch (error) {
      this.lifecycle.setState('Error', `Cannot read the DBC file ${dbcPath}.`);
      throw error;
    }
    let database: DbcDatabase;
    try {
      database = parseDbc(bytes, dbcPath);
      dbc?.register(this.name, dbcCatalogEntries(database));
      try {
        this.compile(database);
        store.define(this.definitions(database));
      } catch (error) {
        // A name too long for a tag path: the DBC must not stay registered without its tags.
        dbc?.unregister(this.name);
        throw error;
      }
    } catch (error) {
      this.lifecycle.setState('Error', (error as Error).message);
      throw error;
    }
    this.transport =
      this.options.transport ??
      createTransport(this.config.transport, {
        clock: this.deps.clock,
        logger,
        baseDir,
      });
    const run = this.lifecycle.started();
    logger.info(
      {
        dbc: dbcPath,
        messages: database.messages.length,
        signals: this.tags.length,
        transport: this.transport.description,
      },
      'CAN driver started',
    );
    this.lifecycle.detached(run, () => this.connect(run));
  }

  private compile(database: DbcDatabase): void {
    this.standard = new Map();
    this.extended = new Map();
    this.tags = [];
    for (const message of database.messages) {
      const tags = message.signals.map((signal) => this.signalTag(message, signal));
      this.tags.push(...tags);
      const entry: MessageEntry = { decoder: compileMessageDecoder(message), message, tags };
      (message.extended ? this.extended : this.standard).set(message.id, entry);
    }
  }

  private signalTag(message: DbcMessage, signal: DbcSignal): SignalTag {
    const unit = signal.unit === '' ? undefined : signal.unit;
    const comment = signal.comment?.trim();
    const description =
      comment === undefined || comment === ''
        ? undefined
        : comment.length > maxDescription
          ? `${comment.slice(0, maxDescription - 1)}…`
          : comment;
    const metadata: SampleMetadata | undefined =
      unit === undefined && description === undefined
        ? undefined
        : {
            ...(unit !== undefined ? { unit } : {}),
            ...(description !== undefined ? { description } : {}),
          };
    return {
      fullTagId: driverTagId(this.name, `${message.name}/${signal.name}`),
      unit,
      description,
      metadata,
    };
  }

  /**
   * Staleness (stale-bounds.ts): 3 × GenMsgCycleTime for a cyclic message, scaled for a
   * multiplexed signal by the switch values the DBC defines (it comes once per round of them);
   * the configured fallback for messages without a cycle time.
   */
  private definitions(database: DbcDatabase): TagDefinition[] {
    const definitions: TagDefinition[] = [];
    const fallback = this.config.staleAfterMs;
    for (const message of database.messages) {
      const entry = (message.extended ? this.extended : this.standard).get(message.id);
      message.signals.forEach((signal, index) => {
        const tag = entry?.tags[index] as SignalTag;
        const staleAfterMs = signalStaleAfterMs(message, signal, fallback);
        definitions.push({
          fullTagId: tag.fullTagId,
          ...(staleAfterMs !== undefined ? { staleAfterMs } : {}),
          ...(tag.metadata ? { metadata: tag.metadata } : {}),
        });
      });
    }
    return definitions;
  }

  private async connect(run: number): Promise<void> {
    const transport = this.transport;
    const lifecycle = this.lifecycle;
    if (transport === undefined || !lifecycle.isCurrent(run)) return;
    lifecycle.attempt();
    let ended = false;
    const handlers: TransportHandlers = {
      onFrames: (frames) => {
        if (lifecycle.isCurrent(run)) this.receive(frames);
      },
      onEnd: (end) => {
        ended = true;
        if (lifecycle.isCurrent(run)) this.ended(end, run);
      },
      onMalformed: (count) => {
        if (lifecycle.isCurrent(run)) this.counters.malformed += count;
      },
    };
    try {
      await transport.open(handlers);
    } catch (error) {
      if (!lifecycle.isCurrent(run)) return;
      this.failed(error as Error, run);
      return;
    }
    if (!lifecycle.isCurrent(run)) {
      await transport.close();
      return;
    }
    // Lost (or finished) before open() returned: ended() has dealt with it.
    if (ended) return;
    const { logger } = this.deps;
    if (lifecycle.attempts > 1) {
      logger.info(
        { transport: transport.description, attempts: lifecycle.attempts },
        'CAN bus connected again',
      );
    } else logger.info({ transport: transport.description }, 'CAN bus connected');
    lifecycle.resetBackoff();
    lifecycle.setState('Running');
  }

  private ended(end: TransportEnd, run: number): void {
    if (end.kind === 'finished') {
      this.lifecycle.setState(
        'Running',
        'The replay log has ended; the signals keep their last values.',
      );
      this.deps.logger.info('replay log finished');
      void this.transport?.close();
      return;
    }
    this.counters.disconnects++;
    this.deps.logger.warn({ err: end.error }, `CAN bus lost: ${end.error.message}`);
    this.lifecycle.resetAttempts();
    this.failed(end.error, run);
  }

  /** A failed or lost connection: signals Unavailable, then retry unless retrying cannot help. */
  private failed(error: Error, run: number): void {
    const transport = this.transport;
    void transport?.close();
    const message = error.message;
    this.lifecycle.markUnavailable(message);
    if (error instanceof CanTransportError && !error.retryable) {
      this.lifecycle.setState('Error', message);
      this.deps.logger.error({ err: error }, `CAN driver cannot run: ${message}`);
      return;
    }
    this.lifecycle.retryLater(message, () => this.connect(run));
  }

  /** Decodes a batch of frames into one store write. */
  private receive(frames: readonly CanFrame[]): void {
    const counters = this.counters;
    const samples: Sample[] = [];
    let isoTime = 0;
    let iso = '';
    for (let f = 0; f < frames.length; f++) {
      const frame = frames[f] as CanFrame;
      counters.framesReceived++;
      if (frame.remote) {
        counters.framesRemote++;
        continue;
      }
      const entry = (frame.extended ? this.extended : this.standard).get(frame.id);
      if (entry === undefined) {
        counters.framesUnknown++;
        if (!this.unknownLogged) this.logUnknown(frame);
        continue;
      }
      counters.framesDecoded++;
      if (frame.timestamp !== isoTime || iso === '') {
        isoTime = frame.timestamp;
        iso = new Date(frame.timestamp).toISOString();
      }
      const slots = entry.decoder.decode(frame.data, frame.length);
      const tags = entry.tags;
      for (let s = 0; s < slots.length; s++) {
        const slot = slots[s] as (typeof slots)[number];
        const tag = tags[s] as SignalTag;
        if (slot.status === 'inactive') continue;
        if (slot.status === 'truncated' || !Number.isFinite(slot.value)) {
          if (slot.status === 'truncated') counters.signalsTruncated++;
          samples.push(this.bad(tag, iso, frame, entry, slot.status === 'truncated'));
          continue;
        }
        const exactRaw = slot.raw;
        const raw = typeof exactRaw === 'bigint' ? Number(exactRaw) : exactRaw;
        const metadata: CanSampleMetadata =
          tag.unit !== undefined ? { unit: tag.unit, raw } : { raw };
        // Only signals over 53 bits decode to a BigInt, and only those can be beyond 2^53.
        if (typeof exactRaw === 'bigint' && (exactRaw > exactLimit || exactRaw < -exactLimit)) {
          metadata.rawText = exactRaw.toString();
        }
        if (tag.description !== undefined) metadata.description = tag.description;
        // A label names the value; without one, the exact digits of a value a double rounds.
        const text = slot.valueText ?? slot.exactValue;
        if (text !== undefined) metadata.valueText = text;
        samples.push({
          fullTagId: tag.fullTagId,
          utcTimestamp: iso,
          quality: 'Good',
          value: slot.value,
          metadata,
        });
      }
    }
    if (samples.length === 0) return;
    this.lifecycle.markAvailable();
    this.deps.store.write(samples);
  }

  private bad(
    tag: SignalTag,
    utcTimestamp: string,
    frame: CanFrame,
    entry: MessageEntry,
    truncated: boolean,
  ): Sample {
    const sample: Sample = {
      fullTagId: tag.fullTagId,
      utcTimestamp,
      quality: 'Bad',
      reason: 'DecodeError',
      message: truncated
        ? `The frame of ${entry.message.name} carried ${frame.length} of its ${entry.message.length} bytes, too few for this signal.`
        : 'The signal holds NaN or an infinity.',
    };
    if (tag.metadata) sample.metadata = tag.metadata;
    return sample;
  }

  private logUnknown(frame: CanFrame): void {
    this.unknownLogged = true;
    const id = `0x${frame.id.toString(16).toUpperCase()}`;
    this.deps.logger.info(
      { id, extended: frame.extended },
      `frame ${id} is not in the DBC; such frames are counted (status counters.framesUnknown), not logged`,
    );
  }

  /** Writes every signal Unavailable (Disconnected); the lifecycle calls it once per outage. */
  private writeUnavailable(message: string): void {
    if (this.tags.length === 0) return;
    const utcTimestamp = new Date(this.deps.clock.now()).toISOString();
    this.deps.store.write(this.tags.map((tag) => unavailableSample(tag, utcTimestamp, message)));
  }
}
