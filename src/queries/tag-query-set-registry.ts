/**
 * Tag query sets (DESIGN.md §4 "TagQuerySet", "Delta"): who owns each set, how long it lives,
 * how many an account may hold, and what each set's client has already seen, so that a Delta
 * poll returns only what changed. Holds no timers: expiry is checked when a set is used.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Sample } from '../tags/sample.js';
import type { LoggedCursor } from './logged-reads.js';

/** Where a binding reads: realtime values, or the history store. */
export type BindingStore = 'Local' | 'Logged';
/** Raw samples, or one value per aggregation window. */
export type SeriesMode = 'Raw' | 'Aggregated';
/** How the samples of one aggregation window become one value. */
export type AggregationFunction = 'Avg' | 'Min' | 'Max' | 'Sum' | 'Count' | 'First' | 'Last';

/** One binding of a query set, as the client sent it (already validated). */
export interface TagQueryBinding {
  /** Tag path or pattern (`*` one segment, `**` any depth). */
  source: string;
  store: BindingStore;
  /** Range start (`now`, `now-<n><s|m|h|d>`, ISO 8601); Logged bindings only. */
  timeRangeStart?: string;
  /** Range stop; Logged bindings only. */
  timeRangeStop?: string;
  /** Default Raw. */
  seriesMode?: SeriesMode;
  /** `10s`, `5m`, `1h`, `1d` or an ISO 8601 duration; Aggregated only. */
  aggregationWindow?: string;
  aggregationFunction?: AggregationFunction;
}

/** Options of {@link TagQuerySetRegistry}. */
export interface TagQuerySetRegistryOptions {
  /** Epoch ms now. Default Date.now. */
  now?: () => number;
  /** A set expires this many milliseconds after its last use. Default 600,000 (10 minutes). */
  ttlMs?: number;
  /** Most live sets one account may hold. Default 100. */
  maxSetsPerAccount?: number;
  /** Creates set ids. Default crypto.randomUUID (122 random bits: not guessable). */
  createId?: () => string;
}

/** Default lifetime of a set after its last use: 10 minutes, in milliseconds. */
export const defaultQuerySetTtlMs = 10 * 60 * 1000;
/** Default number of live sets per account. */
export const defaultMaxSetsPerAccount = 100;

/** Result of {@link TagQuerySet.observe}: the samples to report and whether some were held back. */
export interface Observation {
  /** Samples changed since last seen (or all of them, for a first look), in input order. */
  samples: Sample[];
  /** True when `limit` stopped the scan: some changed samples remain unreported (and unseen). */
  truncated: boolean;
}

/**
 * One query set: its owner, bindings, last use, and per binding the last sample its client
 * was given for each tag.
 */
export class TagQuerySet {
  /** Random, unguessable identifier. */
  readonly id: string;
  /** Account id of the owner; nobody else can see the set. */
  readonly ownerId: string;
  private currentBindings: readonly TagQueryBinding[];
  /** Epoch ms of the last create, replace or poll. */
  lastUsedAt: number;
  // Per binding index: fullTagId → the sample last reported. Samples in the store are never
  // mutated (a write replaces the object), so keeping the reference is safe and costs no copy.
  private seen: Map<string, Sample>[];
  /** Per Logged binding index: where its client stands in the history log. */
  private cursors = new Map<number, LoggedCursor>();

  constructor(id: string, ownerId: string, bindings: readonly TagQueryBinding[], now: number) {
    this.id = id;
    this.ownerId = ownerId;
    this.currentBindings = bindings;
    this.lastUsedAt = now;
    this.seen = bindings.map(() => new Map());
  }

  /** Where a Logged binding's client stands in the history log; undefined before its first read. */
  loggedCursor(bindingIndex: number): LoggedCursor | undefined {
    return this.cursors.get(bindingIndex);
  }

  /** Records what a Logged binding's client has been given. */
  setLoggedCursor(bindingIndex: number, cursor: LoggedCursor): void {
    this.cursors.set(bindingIndex, cursor);
  }

  /** The bindings, in the order the client sent them (QueryValue.binding indexes them). */
  get bindings(): readonly TagQueryBinding[] {
    return this.currentBindings;
  }

  /** Replaces the bindings; everything seen so far is forgotten. */
  replaceBindings(bindings: readonly TagQueryBinding[]): void {
    this.currentBindings = bindings;
    this.seen = bindings.map(() => new Map());
    this.cursors = new Map();
  }

  /**
   * Compares the current samples of one binding with what its client was last given, remembers
   * the reported ones, and returns them. A sample counts as changed when its value, quality or
   * timestamp differ, or when the tag was not reported for this binding before (a tag that
   * newly matches a pattern). At most `limit` samples are returned; changed samples beyond it
   * are not remembered, so the next call reports them.
   * @param bindingIndex index into {@link bindings}.
   * @param current the binding's current samples.
   * @param limit most samples to return. Default: no limit.
   */
  observe(bindingIndex: number, current: Iterable<Sample>, limit = Infinity): Observation {
    const seen = this.seen[bindingIndex];
    if (seen === undefined) throw new RangeError(`No binding ${bindingIndex} in this set.`);
    const samples: Sample[] = [];
    for (const sample of current) {
      const last = seen.get(sample.fullTagId);
      if (last !== undefined && !differs(last, sample)) continue;
      if (samples.length >= limit) return { samples, truncated: true };
      samples.push(sample);
      seen.set(sample.fullTagId, sample);
    }
    return { samples, truncated: false };
  }
}

function differs(a: Sample, b: Sample): boolean {
  if (a === b) return false;
  return (
    a.utcTimestamp !== b.utcTimestamp || a.quality !== b.quality || !Object.is(a.value, b.value)
  );
}

/**
 * Every live query set. A set lives until `ttlMs` after its last use (create, replace or
 * poll); an expired set is gone, exactly as one that never existed, and stops counting
 * against its owner's limit. Another account's set is reported as not found, so set ids
 * reveal nothing.
 */
export class TagQuerySetRegistry {
  private readonly sets = new Map<string, TagQuerySet>();
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly maxSetsPerAccount: number;
  private readonly createId: () => string;

  constructor(options: TagQuerySetRegistryOptions = {}) {
    this.now = options.now ?? Date.now;
    this.ttlMs = options.ttlMs ?? defaultQuerySetTtlMs;
    this.maxSetsPerAccount = options.maxSetsPerAccount ?? defaultMaxSetsPerAccount;
    this.createId = options.createId ?? randomUUID;
  }

  /** Number of live sets (all accounts). */
  get size(): number {
    this.sweep(this.now());
    return this.sets.size;
  }

  /** Number of live sets an account holds. */
  countOf(ownerId: string): number {
    this.sweep(this.now());
    let count = 0;
    for (const set of this.sets.values()) if (set.ownerId === ownerId) count++;
    return count;
  }

  /**
   * Creates a set owned by `ownerId`.
   * @throws ConflictError `limit-reached` when the account already holds the most live sets.
   */
  create(ownerId: string, bindings: readonly TagQueryBinding[]): TagQuerySet {
    const now = this.now();
    if (this.countOf(ownerId) >= this.maxSetsPerAccount) {
      throw new ConflictError(
        'limit-reached',
        `This account already holds ${this.maxSetsPerAccount} query sets, the most allowed. ` +
          `Reuse one by sending its srcSetId, or let unused ones expire (${this.ttlMs / 60_000} ` +
          'minutes after their last poll).',
      );
    }
    const set = new TagQuerySet(this.createId(), ownerId, bindings, now);
    this.sets.set(set.id, set);
    return set;
  }

  /**
   * The live set with this id owned by `ownerId`, its life extended (a use counts as a poll).
   * @throws NotFoundError when no such set exists, it expired, or another account owns it.
   */
  use(ownerId: string, id: string): TagQuerySet {
    const now = this.now();
    this.sweep(now);
    const set = this.sets.get(id);
    if (set === undefined || set.ownerId !== ownerId) {
      // The same answer for "foreign" and "absent": an id must not confirm that a set exists.
      throw new NotFoundError(
        `Query set '${id.slice(0, 100)}' does not exist or has expired ` +
          `(a set expires ${this.ttlMs / 60_000} minutes after its last poll).`,
      );
    }
    set.lastUsedAt = now;
    return set;
  }

  /** Drops expired sets. Cheap: there are at most `maxSetsPerAccount` per account. */
  private sweep(now: number): void {
    for (const [id, set] of this.sets) {
      if (now - set.lastUsedAt >= this.ttlMs) this.sets.delete(id);
    }
  }
}
