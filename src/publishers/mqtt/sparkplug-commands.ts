/**
 * Writes back from a Sparkplug host application: DCMD metrics (and NCMD ones other than
 * `Node Control/Rebirth`) addressed to this edge node. With `acceptWrites` the metrics of one
 * DCMD go to the tag writer as one request, so they pass the checks of
 * `POST /api/v2/Tags/Write` (the tag writable, its driver allowing writes, the value's type,
 * writeMin/writeMax, the write rate of the account `sparkplug:<publisher>`) and are audited with
 * the topic, the publisher and the primary host. All or nothing, as a REST request: one metric
 * refused refuses the command, and so does a command of more metrics than a request may hold. Everything else is refused: counted, and logged at most once per
 * {@link refusalLogIntervalMs} (a host repeating a bad command must not flood the log).
 *
 * Nothing is echoed: the tag's next DATA carries what the driver reads back from the device.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { TagdError, ValidationError } from '../../errors.js';
import { maxWritesPerRequest, type TagWriteItem, type TagWriter } from '../../tags/tag-writer.js';
import { decode, type SparkplugPayloads, splitTagId } from './sparkplug-payloads.js';

/** Least time between two log lines about refused commands, ms. */
export const refusalLogIntervalMs = 60_000;

/** The writer's part a command needs. */
export type CommandWriter = Pick<TagWriter, 'write'>;

/** Dependencies of {@link SparkplugCommands}. */
export interface SparkplugCommandsDeps {
  /** The daemon's tag writer; undefined: every write is refused. */
  writer: CommandWriter | undefined;
  /** The publisher's `acceptWrites`. */
  acceptWrites: boolean;
  /** The publisher's name (account and audit). */
  publisher: string;
  /** The publisher's primaryHostId, named in the audit lines when set. */
  primaryHostId: string | undefined;
  /** The births and aliases in force. */
  payloads: SparkplugPayloads;
  clock: Clock;
  log: Logger;
}

/** Commands carried out and refused, for the state and metrics. */
export interface CommandCounters {
  /** Metrics written through the tag writer (whatever the device answered). */
  written: number;
  /** Metrics refused before reaching a device. */
  refused: number;
}

/** The write commands of one running Sparkplug publisher. */
export class SparkplugCommands {
  readonly counters: CommandCounters = { written: 0, refused: 0 };
  private lastLogAt = Number.NEGATIVE_INFINITY;
  private unlogged = 0;

  constructor(private readonly deps: SparkplugCommandsDeps) {}

  /** The account writes are made and rate-limited as. */
  get account(): string {
    return `sparkplug:${this.deps.publisher}`;
  }

  /** A DCMD for one of this node's devices. Never throws. */
  async deviceCommand(topic: string, device: string, payload: Uint8Array): Promise<void> {
    let metrics: ReturnType<typeof decode>['metrics'];
    try {
      metrics = decode(payload).metrics ?? [];
    } catch {
      this.refuse(topic, 1, 'the payload is not a Sparkplug B payload');
      return;
    }
    if (metrics.length === 0) return;
    if (metrics.length > maxWritesPerRequest) {
      this.refuse(topic, metrics.length, `more than ${maxWritesPerRequest} metrics in one command`);
      return;
    }
    if (!this.deps.acceptWrites) {
      this.refuse(topic, metrics.length, 'acceptWrites is false on this publisher');
      return;
    }
    if (this.deps.writer === undefined) {
      this.refuse(topic, metrics.length, 'no tag writer in this process');
      return;
    }
    const items: TagWriteItem[] = [];
    for (const metric of metrics) {
      const fullTagId = this.tagOf(device, metric.name ?? undefined, aliasOf(metric.alias));
      if (fullTagId === undefined) {
        const named = metric.name ?? `alias ${String(aliasOf(metric.alias))}`;
        this.refuse(topic, metrics.length, `metric '${named}' is not one this node published`);
        return;
      }
      const value = writeValueOf(metric.value);
      if (value === undefined) {
        this.refuse(
          topic,
          metrics.length,
          `the value of ${fullTagId} is null or of a type tagd cannot write`,
        );
        return;
      }
      items.push({ fullTagId, ...value });
    }
    const origin = {
      via: 'sparkplug',
      publisher: this.deps.publisher,
      topic,
      ...(this.deps.primaryHostId !== undefined ? { primaryHostId: this.deps.primaryHostId } : {}),
    };
    try {
      const outcomes = await this.deps.writer.write(this.account, items, origin);
      this.counters.written += outcomes.length;
      const notGood = outcomes.filter((outcome) => outcome.status !== 'Good');
      if (notGood.length > 0) {
        this.deps.log.warn(
          { topic, outcomes: notGood },
          `Sparkplug DCMD written, not every write was acknowledged by the device.`,
        );
      }
    } catch (error) {
      const reason =
        error instanceof ValidationError
          ? error.errors.map((problem) => problem.message).join(' ')
          : error instanceof TagdError
            ? error.message
            : `the write failed (${(error as Error).message})`;
      this.refuse(topic, items.length, reason);
    }
  }

  /** An NCMD whose metrics are not Rebirth: the node has no writable metrics of its own. */
  nodeCommand(topic: string, metrics: number): void {
    this.refuse(topic, Math.max(1, metrics), 'only Node Control/Rebirth is accepted in an NCMD');
  }

  /** The tag of a DCMD metric: by name on that device, else by alias; only born tags. */
  private tagOf(
    device: string,
    name: string | undefined,
    alias: number | undefined,
  ): string | undefined {
    const payloads = this.deps.payloads;
    const tag =
      name !== undefined
        ? `${device}/${name}`
        : alias !== undefined
          ? payloads.tagOfAlias(alias)
          : undefined;
    if (tag === undefined || splitTagId(tag).device !== device) return undefined;
    return payloads.bornTypeOf(tag) === undefined ? undefined : tag;
  }

  private refuse(topic: string, metrics: number, reason: string): void {
    this.counters.refused += metrics;
    const now = this.deps.clock.now();
    if (now - this.lastLogAt < refusalLogIntervalMs) {
      this.unlogged += metrics;
      return;
    }
    this.deps.log.warn(
      { topic, reason, ...(this.unlogged > 0 ? { refusedSinceLastLine: this.unlogged } : {}) },
      `Sparkplug write command refused: ${reason}.`,
    );
    this.lastLogAt = now;
    this.unlogged = 0;
  }
}

/** A metric alias as a number (Tahu decodes a uint64 as a Long). */
function aliasOf(alias: unknown): number | undefined {
  if (typeof alias === 'number') return alias;
  if (isLong(alias)) return alias.toNumber();
  return undefined;
}

/** A DCMD value as a write: numbers, booleans and strings; a 64-bit integer with its exact text. */
function writeValueOf(value: unknown): Pick<TagWriteItem, 'value' | 'numberText'> | undefined {
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') {
    return { value };
  }
  if (isLong(value)) {
    const text = value.toString();
    const number = Number(text);
    // Beyond ±2^53 a number would round: the exact decimal goes as a string, as over REST.
    return Number.isSafeInteger(number) ? { value: number, numberText: text } : { value: text };
  }
  return undefined;
}

function isLong(value: unknown): value is { toNumber(): number; toString(): string } {
  return typeof value === 'object' && value !== null && 'low' in value && 'high' in value;
}
