/**
 * What each Logging mode puts in a batch (spec §6), for every publisher (webhook, MQTT):
 *
 * - `Snapshot`: every member's current sample, each interval.
 * - `On Change`: the latest sample of each member whose value or quality differs from what the
 *   receiver last got, coalesced (one entry per tag); nothing to send, no POST.
 * - `Everything`: every update of every member, in order, uncoalesced, from a bounded buffer
 *   that drops the oldest update beyond its bound and counts the drops.
 */
import type { Sample } from '../../tags/sample.js';
import type { TagStore, TagUpdate } from '../../tags/tag-store.js';
import type { PublisherCounters } from '../publisher.js';
import type { LoggingMode } from './logging-mode.js';
import { isPublishable } from './payload.js';
import { RingBuffer } from './ring-buffer.js';

/**
 * Picks the samples of each interval's batch. The publisher calls `select` once per tick that
 * is not skipped, then exactly one of `delivered` (the receiver got the batch, or there was
 * nothing to POST) or `dropped` (every attempt failed), before the next `select`.
 */
export interface BatchSelector {
  /** Begins collecting (Everything subscribes to the store). Idempotent. */
  start(): void;
  /** Stops collecting and forgets what was collected. Idempotent. */
  stop(): void;
  /**
   * The samples of this interval's batch, in publish order.
   * @param members the publisher's member tags now, in collection order, without duplicates.
   */
  select(members: readonly string[]): Sample[];
  /** The last selected batch reached the receiver (or needed no POST). */
  delivered(): void;
  /** The last selected batch was dropped after its last attempt failed. */
  dropped(): void;
}

/** Dependencies of the selectors. */
export interface SelectorDeps {
  store: TagStore;
  /** True when a tag is a member of the publisher now (Everything filters updates with it). */
  isMember: (fullTagId: string) => boolean;
  /** Where Everything counts dropped updates (`droppedSamples`), live. */
  counters: PublisherCounters;
  /** Everything: updates kept between publishes. */
  everythingBufferSize: number;
  /**
   * Everything: which updates the publisher can send, so the others take no room. Default:
   * {@link isPublishable} (the JSON entries: numbers, and qualities without value); Sparkplug
   * also sends booleans and strings.
   */
  accepts?: (sample: Sample) => boolean;
}

/** Makes the selector of a Logging mode. */
export function createSelector(mode: LoggingMode, deps: SelectorDeps): BatchSelector {
  switch (mode) {
    case 'Snapshot':
      return new SnapshotSelector(deps.store);
    case 'On Change':
      return new OnChangeSelector(deps.store);
    case 'Everything':
      return new EverythingSelector(deps);
  }
}

/** Snapshot: every member's current sample. */
export class SnapshotSelector implements BatchSelector {
  constructor(private readonly store: TagStore) {}

  start(): void {}

  stop(): void {}

  select(members: readonly string[]): Sample[] {
    const batch: Sample[] = [];
    for (let i = 0; i < members.length; i++) {
      const sample = this.store.get(members[i] as string);
      if (sample !== undefined) batch.push(sample);
    }
    return batch;
  }

  delivered(): void {}

  dropped(): void {}
}

/**
 * On Change: the members whose value or quality differ from the sample the receiver last got.
 * The reference moves only when a batch is delivered, so after a dropped batch the next one
 * carries the current samples of the tags the receiver has not seen (the dropped batch itself is
 * never resent). A freshly started publisher has sent nothing, so its first batch holds every
 * member: the receiver learns the starting state, then only changes.
 */
export class OnChangeSelector implements BatchSelector {
  /** What the receiver last got of each tag. Samples are immutable, so the object is kept. */
  private readonly reference = new Map<string, Sample>();
  private pending: Sample[] = [];

  constructor(private readonly store: TagStore) {}

  start(): void {}

  stop(): void {
    this.reference.clear();
    this.pending = [];
  }

  select(members: readonly string[]): Sample[] {
    const batch: Sample[] = [];
    for (let i = 0; i < members.length; i++) {
      const id = members[i] as string;
      const sample = this.store.get(id);
      if (sample === undefined) continue;
      const last = this.reference.get(id);
      if (
        last !== undefined &&
        last.quality === sample.quality &&
        Object.is(last.value, sample.value)
      )
        continue;
      batch.push(sample);
    }
    this.pending = batch;
    return batch;
  }

  delivered(): void {
    for (const sample of this.pending) this.reference.set(sample.fullTagId, sample);
    this.pending = [];
  }

  dropped(): void {
    this.pending = [];
  }
}

/**
 * Everything: every update of every member, in store order, kept in a preallocated ring between
 * publishes. Updates that could never be published (a Good text value, say) take no room.
 */
export class EverythingSelector implements BatchSelector {
  private readonly buffer: RingBuffer<Sample>;
  private unsubscribe: (() => void) | undefined;
  private readonly onUpdates = (updates: readonly TagUpdate[]): void => {
    const { isMember, counters } = this.deps;
    const accepts = this.deps.accepts ?? isPublishable;
    const buffer = this.buffer;
    for (let i = 0; i < updates.length; i++) {
      const sample = (updates[i] as TagUpdate).sample;
      if (!isMember(sample.fullTagId) || !accepts(sample)) continue;
      if (buffer.push(sample)) counters.droppedSamples++;
    }
  };

  constructor(private readonly deps: SelectorDeps) {
    this.buffer = new RingBuffer(deps.everythingBufferSize);
  }

  /** Updates waiting for the next publish. */
  get buffered(): number {
    return this.buffer.length;
  }

  start(): void {
    this.unsubscribe ??= this.deps.store.subscribe(this.onUpdates);
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.buffer.clear();
  }

  select(): Sample[] {
    return this.buffer.drain();
  }

  delivered(): void {}

  dropped(): void {}
}
