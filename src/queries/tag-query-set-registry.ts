/**
 * Tag query sets: who owns each set, how long it lives,
 * how many an account may hold, and what each set's client has already seen, so that a Delta
 * poll returns only what changed, within a bounded memory (the Delta bookkeeping is counted
 * per account and in all). Holds no timers: expiry is checked when a set is used.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, RequestError, TooManyRequestsError } from '../errors.js';
import type { Sample } from '../tags/sample.js';
import type { LoggedCursor } from './logged-reads.js';
import type { QueryLimits } from './query-limits.js';
import type { TagQueryBinding } from './tag-query-binding.js';

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

/**
 * The changes of a set's Local bindings (see {@link TagQuerySet.changes}), not yet remembered:
 * nothing counts as reported before {@link LocalChanges.commit}.
 */
export interface LocalChanges {
  /** Per binding index, the changed samples in store order (empty for Logged bindings). */
  samples: readonly (readonly Sample[])[];
  /** Values these changes answer: every sample once for each binding that shares its source. */
  count: number;
  /** True when `limit` stopped the scan: some changed samples remain for the next poll. */
  truncated: boolean;
  /** Delta bookkeeping entries the commit adds (tags a source reports for the first time). */
  added: number;
  /** Remembers these samples as reported. */
  commit(): void;
}

/**
 * One query set: its owner, bindings, last use, and per distinct Local source the last sample
 * its client was given for each tag (the Delta bookkeeping, one entry per tag and source).
 */
export class TagQuerySet {
  /** Random, unguessable identifier. */
  readonly id: string;
  /** Account id of the owner; nobody else can see the set. */
  readonly ownerId: string;
  private currentBindings: readonly TagQueryBinding[];
  /** Epoch ms of the last create, replace or poll. */
  lastUsedAt: number;
  // Per distinct Local source: fullTagId → the sample last reported. Bindings sharing a source
  // see the same samples at the same polls, so they share one map: a source repeated by 1,000
  // bindings costs one map, not 1,000. Samples in the store are never mutated (a write replaces
  // the object), so keeping the reference is safe and costs no copy.
  private seen = new Map<string, Map<string, Sample>>();
  /** Per Logged binding index: where its client stands in the history log. */
  private cursors = new Map<number, LoggedCursor>();

  constructor(id: string, ownerId: string, bindings: readonly TagQueryBinding[], now: number) {
    this.id = id;
    this.ownerId = ownerId;
    this.currentBindings = bindings;
    this.lastUsedAt = now;
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

  /** Delta bookkeeping entries held: one per tag reported, per distinct Local source. */
  get entries(): number {
    let entries = 0;
    for (const seen of this.seen.values()) entries += seen.size;
    return entries;
  }

  /** Replaces the bindings; everything seen so far is forgotten. */
  replaceBindings(bindings: readonly TagQueryBinding[]): void {
    this.currentBindings = bindings;
    this.seen = new Map();
    this.cursors = new Map();
  }

  /**
   * Compares the current samples of each distinct Local source with what its client was last
   * given. A sample counts as changed when its value, quality or timestamp differ, or when the
   * tag was not reported for this source before (a tag that newly matches a pattern). Each
   * changed sample is answered once for every binding of its source, all or none of them, and
   * at most `limit` values in all: the changes beyond stay unreported (and unseen) for the next
   * call. Sources are taken in the order of their first binding.
   * @param current distinct Local source → its current samples, in store order.
   * @param limit most values to answer. Default: no limit.
   */
  changes(current: ReadonlyMap<string, readonly Sample[]>, limit = Infinity): LocalChanges {
    const groups = new Map<string, number[]>();
    this.currentBindings.forEach((binding, index) => {
      if (binding.store !== 'Local') return;
      const group = groups.get(binding.source);
      if (group) group.push(index);
      else groups.set(binding.source, [index]);
    });
    const samples: Sample[][] = this.currentBindings.map(() => []);
    const pending: [string, Sample][] = [];
    let count = 0;
    let added = 0;
    let truncated = false;
    for (const [source, indices] of groups) {
      const seen = this.seen.get(source);
      const changed: Sample[] = [];
      for (const sample of current.get(source) ?? []) {
        const last = seen?.get(sample.fullTagId);
        if (last !== undefined && !differs(last, sample)) continue;
        if (count + (changed.length + 1) * indices.length > limit) {
          truncated = true;
          break;
        }
        changed.push(sample);
        if (last === undefined) added++;
      }
      for (const index of indices) samples[index] = changed;
      for (const sample of changed) pending.push([source, sample]);
      count += changed.length * indices.length;
      if (truncated) break;
    }
    return {
      samples,
      count,
      truncated,
      added,
      commit: () => {
        for (const [source, sample] of pending) {
          let seen = this.seen.get(source);
          if (seen === undefined) {
            seen = new Map();
            this.seen.set(source, seen);
          }
          seen.set(sample.fullTagId, sample);
        }
      },
    };
  }
}

function differs(a: Sample, b: Sample): boolean {
  if (a === b) return false;
  return (
    a.utcTimestamp !== b.utcTimestamp || a.quality !== b.quality || !Object.is(a.value, b.value)
  );
}

/** The bounds of the Delta bookkeeping (see {@link QueryLimits}). */
export type EntryLimits = Pick<QueryLimits, 'maxDeltaEntries' | 'maxDeltaEntriesPerAccount'>;

/**
 * Every live query set. A set lives until `ttlMs` after its last use (create, replace or
 * poll); an expired set is gone, exactly as one that never existed, and stops counting
 * against its owner's limits. Another account's set is reported as not found, so set ids
 * reveal nothing.
 *
 * The registry also keeps the account of the Delta bookkeeping: how many entries each set holds
 * (as of its last {@link account}), per account and in all, so that a set may grow only within
 * the limits ({@link admit}).
 */
export class TagQuerySetRegistry {
  private readonly sets = new Map<string, TagQuerySet>();
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly maxSetsPerAccount: number;
  private readonly createId: () => string;
  /** Per set id: the entries accounted for it. */
  private readonly accounted = new Map<string, number>();
  /** Per owner: the entries of all its sets. */
  private readonly byOwner = new Map<string, number>();
  private total = 0;

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
   * Delta bookkeeping entries the live sets hold, as last {@link account accounted}: of one
   * account, or of all when `ownerId` is absent.
   */
  entriesOf(ownerId?: string): number {
    this.sweep(this.now());
    return ownerId === undefined ? this.total : (this.byOwner.get(ownerId) ?? 0);
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

  /**
   * Checks that a set of `ownerId` may hold `entries` Delta bookkeeping entries: `set` when it
   * exists (its own entries are replaced, not added), or one about to be created. Call it, then
   * change the set and {@link account} it, without awaiting in between.
   * @throws RequestError 413 `query-too-large` when the set alone is over a limit (retrying
   *   cannot help: the bindings must be narrowed).
   * @throws TooManyRequestsError 429 `query-capacity-reached` when the account's sets, or all
   *   sets, would be over their limit; Retry-After is the time until the first of the sets
   *   that hold the entries may expire.
   */
  admit(ownerId: string, set: TagQuerySet | undefined, entries: number, limits: EntryLimits): void {
    const now = this.now();
    this.sweep(now);
    const own = set === undefined ? 0 : (this.accounted.get(set.id) ?? 0);
    const accountLimit = Math.min(limits.maxDeltaEntriesPerAccount, limits.maxDeltaEntries);
    if (entries > accountLimit) {
      const setting =
        accountLimit === limits.maxDeltaEntries ? 'maxDeltaEntries' : 'maxDeltaEntriesPerAccount';
      throw new RequestError(
        'query-too-large',
        413,
        `This query set would hold ${number(entries)} Delta entries (one per tag that each ` +
          `distinct Local source matches); the query sets of one account hold at most ` +
          `${number(accountLimit)} (profile queries.${setting}). Use fewer or narrower sources.`,
      );
    }
    const expiry = (mine: boolean) => this.retryAfterSeconds(now, set, mine ? ownerId : undefined);
    const account = (this.byOwner.get(ownerId) ?? 0) - own + entries;
    if (account > limits.maxDeltaEntriesPerAccount) {
      throw new TooManyRequestsError(
        `The query sets of this account would hold ${number(account)} Delta entries (one per ` +
          `tag that each distinct Local source of a set matches); an account holds at most ` +
          `${number(limits.maxDeltaEntriesPerAccount)} (profile ` +
          'queries.maxDeltaEntriesPerAccount). Use fewer or narrower sources, reuse a set by ' +
          `sending its srcSetId, or retry once unused sets expire (${this.ttlMs / 60_000} ` +
          'minutes after their last poll).',
        expiry(true),
        'query-capacity-reached',
      );
    }
    if (this.total - own + entries > limits.maxDeltaEntries) {
      // Other accounts' usage is not disclosed, only that the whole is full.
      throw new TooManyRequestsError(
        `The query sets of all accounts together hold the most Delta entries the gateway ` +
          `allows (${number(limits.maxDeltaEntries)}, profile queries.maxDeltaEntries); this ` +
          `set would need ${number(entries)}. Retry once unused sets expire ` +
          `(${this.ttlMs / 60_000} minutes after their last poll), or use fewer or narrower ` +
          'sources.',
        expiry(false),
        'query-capacity-reached',
      );
    }
  }

  /** Records the entries `set` holds now; a set no longer live is not counted. */
  account(set: TagQuerySet): void {
    if (this.sets.get(set.id) !== set) return;
    this.charge(set, set.entries);
  }

  /** Seconds until the first set (of `ownerId`, or of anyone) other than `except` may expire. */
  private retryAfterSeconds(now: number, except: TagQuerySet | undefined, ownerId?: string) {
    let first = now + this.ttlMs;
    for (const set of this.sets.values()) {
      if (set === except || (ownerId !== undefined && set.ownerId !== ownerId)) continue;
      if (!this.accounted.get(set.id)) continue;
      first = Math.min(first, set.lastUsedAt + this.ttlMs);
    }
    return Math.max(1, Math.ceil((first - now) / 1000));
  }

  private charge(set: TagQuerySet, entries: number): void {
    const change = entries - (this.accounted.get(set.id) ?? 0);
    if (entries === 0) this.accounted.delete(set.id);
    else this.accounted.set(set.id, entries);
    const owner = (this.byOwner.get(set.ownerId) ?? 0) + change;
    if (owner === 0) this.byOwner.delete(set.ownerId);
    else this.byOwner.set(set.ownerId, owner);
    this.total += change;
  }

  /** Drops expired sets and their entries. Cheap: at most `maxSetsPerAccount` per account. */
  private sweep(now: number): void {
    for (const [id, set] of this.sets) {
      if (now - set.lastUsedAt < this.ttlMs) continue;
      this.charge(set, 0);
      this.sets.delete(id);
    }
  }
}

function number(value: number): string {
  return value.toLocaleString('en');
}
