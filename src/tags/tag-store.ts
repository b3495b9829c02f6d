import type { Logger } from 'pino';
import { type Clock, systemClock, type TimerHandle } from '../clock.js';
import { TagNotFoundError } from '../errors.js';
import { callSafely } from './call-safely.js';
import type { Sample, SampleMetadata } from './sample.js';
import { assertTagPath } from './tag-path.js';
import { compileTagPattern } from './tag-pattern.js';

/** A tag a driver announces before its first reading. */
export interface TagDefinition {
  fullTagId: string;
  /**
   * A Good tag not updated for this many milliseconds turns Stale (reason NoUpdate); set by the
   * profile. Default: never stale (unless {@link refreshBoundMs} is set).
   */
  staleAfterMs?: number;
  /**
   * The longest a working driver takes between two updates of this tag, ms: declared by drivers
   * that poll (e.g. max(1000, 3 × poll interval, poll interval + longest poll), see
   * `pollRefreshBoundMs` in drivers/driver.ts). A Good tag not updated within it turns Stale
   * (NoUpdate) even when the profile sets no `staleAfterMs`, so a driver that stops refreshing
   * a tag, whatever the reason, cannot leave it Good. When both are set the smaller applies: `staleAfterMs` can
   * tighten the guard, never loosen it. Default: none (drivers whose sources report only
   * changes, such as OPC UA subscriptions, declare none).
   */
  refreshBoundMs?: number;
  /** Metadata carried by the NeverRead placeholder sample. */
  metadata?: SampleMetadata;
}

/** One write of one tag, as handed to subscribers. */
export interface TagUpdate {
  readonly sample: Sample;
  /** The sample this one replaced; undefined for a tag seen for the first time. */
  readonly previous: Sample | undefined;
  /** True when value or quality differ from `previous` (or the tag is new). */
  readonly changed: boolean;
}

/** Receives every update of one write batch, synchronously, in batch order. */
export type UpdateListener = (updates: readonly TagUpdate[]) => void;
/** Receives the ids of tags that appeared in the store. */
export type TagsAddedListener = (fullTagIds: readonly string[]) => void;
/**
 * Receives samples of the past that a driver relays (Sparkplug metrics flagged `is_historical`):
 * for history only, never the tags' current samples.
 */
export type HistoricalListener = (samples: readonly Sample[]) => void;
/** Called with the fullTagIds removed from the store (a driver removed or reconfigured). */
export type TagsRemovedListener = (fullTagIds: readonly string[]) => void;

/** Options of {@link TagStore}. */
export interface TagStoreOptions {
  /** Time source for staleness. Default: the system clock. */
  clock?: Clock;
  /** How often the staleness sweep runs, in milliseconds. Default: 250. */
  staleSweepIntervalMs?: number;
  /** Where a throwing subscriber is reported. Default: errors are rethrown asynchronously. */
  logger?: Logger;
}

interface Entry {
  sample: Sample;
  /** Clock time of the last write, ms. */
  updatedAt: number;
  /** The smaller of the definition's staleAfterMs and refreshBoundMs, ms; undefined: never. */
  staleLimitMs: number | undefined;
  /** True when {@link staleLimitMs} is the driver's refresh bound, not the profile's setting. */
  bound: boolean;
}

/**
 * The latest Sample of every tag. Drivers write batches; subscribers are told synchronously
 * about every update with a `changed` flag, so both change-driven and every-update consumers
 * can be served from one stream. A sweep marks Good tags Stale when no update came within their
 * `staleAfterMs` or the refresh bound their driver declared, whichever is smaller.
 */
export class TagStore {
  private readonly entries = new Map<string, Entry>();
  private readonly updateListeners = new Set<UpdateListener>();
  private readonly addedListeners = new Set<TagsAddedListener>();
  private readonly removedListeners = new Set<TagsRemovedListener>();
  private readonly historicalListeners = new Set<HistoricalListener>();
  private readonly clock: Clock;
  private readonly sweepIntervalMs: number;
  private readonly logger: Logger | undefined;
  private sweepTimer: TimerHandle | undefined;
  // Reused between writes so that a batch costs no allocation beyond its updates.
  private scratch: (Entry | undefined)[] = [];
  // A plain number, read by the metrics when scraped: a batch pays one addition, no metric call.
  private updatesTotal = 0;

  constructor(options: TagStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.sweepIntervalMs = options.staleSweepIntervalMs ?? 250;
    this.logger = options.logger;
  }

  /** Starts the staleness sweep. Idempotent. */
  async start(): Promise<void> {
    if (this.sweepTimer !== undefined) return;
    this.sweepTimer = this.clock.setInterval(() => this.sweepStale(), this.sweepIntervalMs);
  }

  /** Stops the staleness sweep. Idempotent; the samples stay readable. */
  async stop(): Promise<void> {
    this.clock.clearTimer(this.sweepTimer);
    this.sweepTimer = undefined;
  }

  /** Number of tags in the store. */
  get size(): number {
    return this.entries.size;
  }

  /** Samples stored since the store was created (writes, placeholders and Stale marks). */
  get updates(): number {
    return this.updatesTotal;
  }

  /**
   * Announces tags. A tag not yet in the store gets an `Unavailable` sample with reason
   * `NeverRead`; a known tag keeps its sample and takes the new staleness setting.
   * @throws InvalidTagPathError before changing anything when a path is invalid.
   */
  define(definitions: readonly TagDefinition[]): void {
    for (const definition of definitions) assertTagPath(definition.fullTagId);
    const now = this.clock.now();
    const placeholders: Sample[] = [];
    for (const definition of definitions) {
      if (this.entries.has(definition.fullTagId)) continue;
      placeholders.push({
        fullTagId: definition.fullTagId,
        utcTimestamp: new Date(now).toISOString(),
        quality: 'Unavailable',
        reason: 'NeverRead',
        message: 'No value has been read yet.',
        ...(definition.metadata ? { metadata: definition.metadata } : {}),
      });
    }
    if (placeholders.length > 0) this.write(placeholders);
    for (const definition of definitions) {
      const entry = this.entries.get(definition.fullTagId);
      if (entry === undefined) continue;
      const { staleAfterMs, refreshBoundMs } = definition;
      entry.bound =
        refreshBoundMs !== undefined &&
        (staleAfterMs === undefined || refreshBoundMs < staleAfterMs);
      entry.staleLimitMs = entry.bound ? refreshBoundMs : staleAfterMs;
    }
  }

  /**
   * Stores a batch of samples and notifies subscribers once with all of them.
   * @throws InvalidTagPathError before storing anything when a new tag's path is invalid.
   */
  write(samples: readonly Sample[]): void {
    this.apply(samples, true);
  }

  // `touch` false keeps each tag's update time: a Stale mark is not an update.
  private apply(samples: readonly Sample[], touch: boolean): void {
    const count = samples.length;
    if (count === 0) return;
    if (this.scratch.length < count) this.scratch = new Array(count);
    const scratch = this.scratch;
    let added: string[] | undefined;
    for (let i = 0; i < count; i++) {
      const sample = samples[i] as Sample;
      const entry = this.entries.get(sample.fullTagId);
      if (entry === undefined) assertTagPath(sample.fullTagId);
      scratch[i] = entry;
    }
    const now = this.clock.now();
    const notify = this.updateListeners.size > 0;
    const updates: TagUpdate[] | undefined = notify ? new Array(count) : undefined;
    for (let i = 0; i < count; i++) {
      const sample = samples[i] as Sample;
      let entry = scratch[i];
      scratch[i] = undefined;
      // A tag may appear twice in one batch; the first occurrence created it.
      if (entry === undefined) entry = this.entries.get(sample.fullTagId);
      let previous: Sample | undefined;
      if (entry === undefined) {
        this.entries.set(sample.fullTagId, {
          sample,
          updatedAt: now,
          staleLimitMs: undefined,
          bound: false,
        });
        if (added === undefined) added = [];
        added.push(sample.fullTagId);
      } else {
        previous = entry.sample;
        entry.sample = sample;
        if (touch) entry.updatedAt = now;
      }
      if (updates !== undefined) {
        const changed =
          previous === undefined ||
          previous.quality !== sample.quality ||
          !Object.is(previous.value, sample.value);
        updates[i] = { sample, previous, changed };
      }
    }
    this.updatesTotal += count;
    if (added !== undefined) this.emitAdded(added);
    if (updates !== undefined) this.emitUpdates(updates);
  }

  /**
   * Hands samples of the past to history (the {@link onHistorical} listeners), each at its own
   * timestamp: a tag's current sample is left as it is, so a sample that arrives late (a
   * Sparkplug edge forwarding what it stored during an outage) never overwrites a newer live
   * value. Samples of tags the store does not hold are dropped.
   */
  writeHistorical(samples: readonly Sample[]): void {
    const known = samples.filter((sample) => this.entries.has(sample.fullTagId));
    if (known.length === 0) return;
    for (const listener of this.historicalListeners) {
      callSafely(() => listener(known), this.logger, 'tag store subscriber failed');
    }
  }

  /** Subscribes to samples of the past ({@link writeHistorical}). Returns the unsubscriber. */
  onHistorical(listener: HistoricalListener): () => void {
    this.historicalListeners.add(listener);
    return () => this.historicalListeners.delete(listener);
  }

  /** The latest sample of a tag, or undefined. */
  get(fullTagId: string): Sample | undefined {
    return this.entries.get(fullTagId)?.sample;
  }

  /**
   * The latest sample of a tag.
   * @throws TagNotFoundError when the tag does not exist.
   */
  require(fullTagId: string): Sample {
    const entry = this.entries.get(fullTagId);
    if (entry === undefined) throw new TagNotFoundError(fullTagId);
    return entry.sample;
  }

  /** True when the tag exists. */
  has(fullTagId: string): boolean {
    return this.entries.has(fullTagId);
  }

  /** Every fullTagId, in insertion order. */
  ids(): IterableIterator<string> {
    return this.entries.keys();
  }

  /**
   * The ids of tags a path or pattern (`*`, `**`) matches, in insertion order.
   * @throws InvalidTagPathError for an invalid pattern.
   */
  match(source: string): string[] {
    const matches = compileTagPattern(source);
    const result: string[] = [];
    for (const id of this.entries.keys()) if (matches(id)) result.push(id);
    return result;
  }

  /**
   * How long the tag may go without an update before it turns Stale, ms: the smaller of its
   * `staleAfterMs` and `refreshBoundMs`; undefined when it never turns Stale or is unknown.
   */
  staleLimitMs(fullTagId: string): number | undefined {
    return this.entries.get(fullTagId)?.staleLimitMs;
  }

  /** Subscribes to every write. Returns the function that unsubscribes. */
  subscribe(listener: UpdateListener): () => void {
    this.updateListeners.add(listener);
    return () => this.updateListeners.delete(listener);
  }

  /** Subscribes to tags appearing. Returns the function that unsubscribes. */
  onTagsAdded(listener: TagsAddedListener): () => void {
    this.addedListeners.add(listener);
    return () => this.addedListeners.delete(listener);
  }

  /**
   * Removes tags from the store, for a driver that was removed or restarted with another
   * configuration (its tags are defined anew). Unknown ids are skipped. Removal notifies no
   * update listener (there is no new sample); {@link onTagsRemoved} listeners hear of it.
   * @returns the ids that were removed.
   */
  remove(fullTagIds: Iterable<string>): string[] {
    const removed: string[] = [];
    for (const id of fullTagIds) if (this.entries.delete(id)) removed.push(id);
    if (removed.length > 0) {
      for (const listener of this.removedListeners) {
        callSafely(() => listener(removed), this.logger, 'tag store subscriber failed');
      }
    }
    return removed;
  }

  /** Subscribes to tags being removed. Returns the function that unsubscribes. */
  onTagsRemoved(listener: TagsRemovedListener): () => void {
    this.removedListeners.add(listener);
    return () => this.removedListeners.delete(listener);
  }

  /**
   * Marks Good tags Stale whose last update is older than their limit (the smaller of
   * `staleAfterMs` and `refreshBoundMs`).
   */
  sweepStale(): void {
    const now = this.clock.now();
    const stale: Sample[] = [];
    for (const entry of this.entries.values()) {
      const limit = entry.staleLimitMs;
      if (limit === undefined || entry.sample.quality !== 'Good') continue;
      if (now - entry.updatedAt < limit) continue;
      stale.push({
        ...entry.sample,
        quality: 'Stale',
        reason: 'NoUpdate',
        message: entry.bound
          ? `No update for ${limit} ms, longer than its driver takes to refresh it while the device answers.`
          : `No update for ${limit} ms.`,
      });
    }
    if (stale.length > 0) this.apply(stale, false);
  }

  private emitUpdates(updates: readonly TagUpdate[]): void {
    for (const listener of this.updateListeners) {
      callSafely(() => listener(updates), this.logger, 'tag store subscriber failed');
    }
  }

  private emitAdded(ids: readonly string[]): void {
    for (const listener of this.addedListeners) {
      callSafely(() => listener(ids), this.logger, 'tag store subscriber failed');
    }
  }
}
