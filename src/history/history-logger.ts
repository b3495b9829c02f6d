/**
 * Decides what is logged and hands it to a history backend (docs/history.md): follows the tag
 * store, applies each `history.log[]` entry (on change with a deadband, or sampled on an
 * interval), batches appends to at most one transaction per flush period, buffers in memory
 * while the backend is slow or down (dropping the oldest beyond a bound), and runs retention.
 *
 * Never blocks a driver or the API: the store subscriber only decides and queues; appends run
 * on the clock, one at a time, each of at most `maxBatch` samples (a synchronous backend such
 * as SQLite holds the event loop for one whole append). A full transaction's worth waiting
 * (`maxBatch`, or half the bound if that is less) is appended right after the write that
 * brought it, without waiting for the flush period: waiting longer would not make transactions
 * bigger, only the buffer (100,000 tags scanned every second would otherwise wait up to a
 * second beside the next scan).
 *
 * The bound of the buffer is `bufferLimit` when the profile sets it; otherwise it follows the
 * tags being logged: {@link samplesPerLoggedTag} samples per tag, at least
 * {@link defaultBufferLimit}, so a large profile keeps several scans in reserve and a small one
 * keeps the fixed floor.
 *
 * The backend sees one operation at a time, and appends come first: a retention run deletes in
 * slices, and a flush due while a slice is under way runs as soon as that slice has committed,
 * before the next one. A stop aborts the run and never waits for it (see {@link stop}).
 *
 * A bad sample never stops logging: when the backend refuses an append for a reason other
 * than an outage (see {@link refusesSamples}), the batch is halved again and again until the
 * samples it refuses are isolated; those are dropped, counted (`rejected`) and logged once per
 * batch by tag id, and the rest is stored.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../clock.js';
import type { Collections } from '../tags/collections.js';
import type { Sample } from '../tags/sample.js';
import { compileTagPattern, type TagMatcher } from '../tags/tag-pattern.js';
import type { TagStore, TagUpdate } from '../tags/tag-store.js';
import type { HistoryBackend, LoggedSample } from './history-backend.js';
import { defaultBufferLimit, type HistoryLogEntry } from './history-config.js';
import { HistoryStoppedError, isUnreachableError } from './open-on-use-backend.js';

/** Options of {@link HistoryLogger}. */
export interface HistoryLoggerOptions {
  backend: HistoryBackend;
  store: TagStore;
  /** The running collections, for entries naming one. Absent: such entries log nothing. */
  collections?: Collections;
  entries: readonly HistoryLogEntry[];
  /** Samples older than this many days are deleted. */
  retentionDays: number;
  /**
   * Most samples buffered while the backend is slow or down; beyond, the oldest are dropped.
   * Absent: {@link samplesPerLoggedTag} per logged tag, at least {@link defaultBufferLimit}
   * (the bound grows as tags appear).
   */
  bufferLimit?: number;
  clock: Clock;
  logger: Logger;
  /** Milliseconds between appends (one transaction each). Default 1,000. */
  flushIntervalMs?: number;
  /** Milliseconds between retention runs. Default 3,600,000 (one hour). */
  retentionIntervalMs?: number;
  /** Longest wait for the backend on stop, milliseconds. Default 10,000. */
  stopTimeoutMs?: number;
  /**
   * Most samples in one append; a larger buffer goes in several appends, one right after the
   * other. Default 20,000 (about 0.1 s of SQLite work on the main thread).
   */
  maxBatch?: number;
}

/** Counters of a {@link HistoryLogger}, for tests and the log. */
export interface HistoryLoggerStats {
  /** Samples waiting in memory for the next append. */
  buffered: number;
  /** The bound of the buffer now: the configured one, or the one derived from the logged tags. */
  bufferLimit: number;
  /** Samples stored by the backend since start. */
  appended: number;
  /** Samples dropped because the buffer was full, since start. */
  dropped: number;
  /** Appends that failed (the batch was kept to retry), since start. */
  failedAppends: number;
  /** Samples the backend refused (a value or time it cannot store) and that were dropped. */
  rejected: number;
  /** Append transactions made since start. */
  transactions: number;
}

const day = 86_400_000;
/**
 * Samples per logged tag the buffer holds when the profile sets no `bufferLimit`: ten scans of
 * every tag (ten seconds at 1 s scans). What sustained logging needs is about two: the start
 * (the current value of every tag, then the first scan) and the scan arriving while the
 * previous one is appended; the rest carries the logging through a backend that stalls for a
 * few seconds (a checkpoint on a slow disk, a PostgreSQL failover) before anything is dropped.
 * A buffered sample costs about 130 bytes, so the bound of 100,000 tags (1,000,000 samples) is
 * about 130 MB, held only while the backend falls behind.
 */
export const samplesPerLoggedTag = 10;
/** Most tag ids named in one "refused samples" log line. */
const loggedTagsMax = 20;

/** What onChange logging needs to know about one tag. */
interface ChangeRule {
  /** Smallest numeric change that logs; a quality change always logs. */
  deadband: number;
}

/**
 * What the logger keeps per tag the store wrote: one map lookup per sample on the hot path
 * (100,000 tags a second), not one per question.
 */
interface TagLog {
  /** The onChange rule, or null when no onChange entry covers the tag. */
  rule: ChangeRule | null;
  /** The rules' generation `rule` was computed in: a collection change makes it stale. */
  generation: number;
  /** The last sample logged on change. */
  last: Sample | undefined;
  /**
   * Epoch ms of the newest sample of the past (Sparkplug `is_historical`) logged: an edge
   * forwards its stored samples in order, so one at or before it was logged already (a
   * catch-up resent after a lost connection).
   */
  historicalMs?: number;
  /**
   * Epoch ms of the last {@link recentLiveKept} samples with a value logged on change, oldest
   * overwritten first (`recentAt` is the next slot). A QoS 1 message the broker delivered but
   * could not acknowledge before it died is kept by the edge and sent again as a sample of the
   * past, after the births: one at any of these timestamps was logged already.
   */
  recentLive?: number[];
  recentAt?: number;
}

/** Live samples per tag whose timestamps {@link TagLog.recentLive} keeps. */
const recentLiveKept = 8;

/** The onChange and interval logger of one history section. */
export class HistoryLogger {
  private readonly flushIntervalMs: number;
  private readonly retentionIntervalMs: number;
  private readonly maxBatch: number;
  private readonly matchers: (TagMatcher | undefined)[];
  /** Per entry naming a collection: its members' matchers, compiled when the rules are. */
  private memberMatchers: (TagMatcher[] | undefined)[] = [];
  // Buffer as an array with a moving head: dropping the oldest costs no copy.
  private buffer: LoggedSample[] = [];
  private head = 0;
  /** The append drain under way (one at a time). */
  private busy: Promise<void> | undefined;
  /** The retention run under way: aborted by stop. */
  private retention: AbortController | undefined;
  /**
   * While the backend works on a retention slice: settles when the slice has committed (the
   * run pauses between slices) or the run ended. Appends wait for it, not for the whole run.
   */
  private slice: Promise<void> | undefined;
  private endSlice: (() => void) | undefined;
  /** A flush came due during a retention slice: it runs once the slice has committed. */
  private flushWanted = false;
  /** Samples in the append under way. */
  private inFlight = 0;
  /** An early flush is scheduled (right after the write that filled a transaction). */
  private earlyFlush = false;
  /** Per interval entry: the tags it sampled last time (they count toward the bound). */
  private readonly intervalTags: number[] = [];
  private unsubscribe: (() => void) | undefined;
  private unsubscribeHistorical: (() => void) | undefined;
  private timers: TimerHandle[] = [];
  /** Per tag the store wrote: its onChange rule and last logged sample. */
  private readonly tagLogs = new Map<string, TagLog>();
  /** Generation of the rules: bumped when a collection changes, so each rule is recomputed. */
  private generation = 0;
  /** Tags logged on change since start (they count toward the bound). */
  private loggedTags = 0;
  /** Collection definitions the rules were computed from; a change makes the rules stale. */
  private ruleSources: unknown[] = [];
  /** The last timestamp parsed, and its epoch ms: a driver's batch shares one timestamp. */
  private lastStamp = '';
  private lastStampMs = Number.NaN;
  private outage = false;
  /** Dropped since the warning that the buffer is full (an outage, or a backend falling behind). */
  private droppedInOutage = 0;
  private readonly counters = {
    appended: 0,
    dropped: 0,
    failedAppends: 0,
    rejected: 0,
    transactions: 0,
  };

  /** True when a log entry names a collection, whose members can change while running. */
  private readonly usesCollections: boolean;

  constructor(private readonly options: HistoryLoggerOptions) {
    this.flushIntervalMs = options.flushIntervalMs ?? 1_000;
    this.usesCollections = options.entries.some((entry) => entry.collection !== undefined);
    this.retentionIntervalMs = options.retentionIntervalMs ?? 3_600_000;
    this.maxBatch = Math.max(1, options.maxBatch ?? 20_000);
    this.matchers = options.entries.map((entry) =>
      entry.source !== undefined ? compileTagPattern(entry.source) : undefined,
    );
  }

  /** Follows the store and starts the flush, interval and retention timers. Idempotent. */
  async start(): Promise<void> {
    if (this.unsubscribe) return;
    const { clock, store, collections } = this.options;
    for (const entry of this.options.entries) {
      if (entry.collection !== undefined && !collections?.has(entry.collection)) {
        this.options.logger.warn(
          { collection: entry.collection },
          `history: collection '${entry.collection}' does not exist; its entry logs nothing ` +
            'until it does',
        );
      }
    }
    this.unsubscribe = store.subscribe((updates) => this.onUpdates(updates));
    this.unsubscribeHistorical = store.onHistorical((samples) => this.onHistorical(samples));
    this.timers.push(clock.setInterval(() => this.flushSoon(), this.flushIntervalMs));
    this.options.entries.forEach((entry, index) => {
      if (entry.mode !== 'interval' || entry.intervalSeconds === undefined) return;
      this.timers.push(clock.setInterval(() => this.sample(index), entry.intervalSeconds * 1000));
    });
    this.timers.push(clock.setInterval(() => this.retainSoon(), this.retentionIntervalMs));
    // Tags already in the store: onChange logs their current sample as the first one.
    const current: TagUpdate[] = [];
    for (const id of store.ids()) {
      const sample = store.get(id);
      if (sample) current.push({ sample, previous: undefined, changed: true });
    }
    this.onUpdates(current);
    this.retainSoon();
  }

  /**
   * Stops following the store, aborts a retention run (without waiting for it: it ends at its
   * next slice boundary, and a slice still under way in an asynchronous backend is left to
   * finish beside the final append), waits for the append in flight, then appends what is still
   * buffered (one attempt; what fails is counted and logged as lost). Idempotent.
   */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.unsubscribeHistorical?.();
    this.unsubscribeHistorical = undefined;
    const { clock } = this.options;
    for (const timer of this.timers) clock.clearTimer(timer);
    this.timers = [];
    this.retention?.abort();
    // A hung backend (a database that stopped answering) must not hold the daemon's stop.
    let timer: TimerHandle | undefined;
    const gaveUp = await Promise.race([
      this.flushAppends().then(() => false),
      new Promise<boolean>((resolve) => {
        timer = clock.setTimeout(() => resolve(true), this.options.stopTimeoutMs ?? 10_000);
      }),
    ]);
    clock.clearTimer(timer);
    if (gaveUp) {
      this.options.logger.warn(
        { inFlight: this.inFlight },
        `history: the backend did not finish its append on stop; ${this.inFlight} samples may ` +
          'be lost',
      );
    }
    const lost = this.buffered;
    if (lost > 0) {
      this.options.logger.warn(
        { lost },
        `history: ${lost} samples could not be stored before stopping and are lost`,
      );
      this.buffer = [];
      this.head = 0;
    }
  }

  /**
   * Appends everything buffered now, after the append or retention slice under way, if any
   * (not after the whole retention run).
   */
  async flush(): Promise<void> {
    for (;;) {
      if (this.busy) await this.busy;
      else if (this.slice) await this.slice;
      else break;
    }
    if (this.buffered === 0) return;
    await this.drainSoon();
  }

  /** As {@link flush}, but without waiting for a retention slice (stop: the run is aborted). */
  private async flushAppends(): Promise<void> {
    while (this.busy) await this.busy;
    if (this.buffered === 0) return;
    await this.drainSoon();
  }

  /** Current counters. */
  stats(): HistoryLoggerStats {
    return { buffered: this.buffered, bufferLimit: this.bufferLimit(), ...this.counters };
  }

  /** Whether the backend's last append failed as a whole (an outage, retried every flush). */
  get inOutage(): boolean {
    return this.outage;
  }

  private get buffered(): number {
    return this.buffer.length - this.head;
  }

  /**
   * The bound now: the configured one, or {@link samplesPerLoggedTag} per logged tag (every tag
   * logged on change since start, plus the tags each interval entry sampled last), at least
   * {@link defaultBufferLimit}. A collection change (which recomputes the rules) does not
   * shrink it: the tags logged on change since start still count.
   */
  private bufferLimit(): number {
    if (this.options.bufferLimit !== undefined) return this.options.bufferLimit;
    let tags = this.loggedTags;
    for (const count of this.intervalTags) tags += count ?? 0;
    return Math.max(defaultBufferLimit, samplesPerLoggedTag * tags);
  }

  /** Buffered samples from which a flush is due at once: a full transaction, or half the bound. */
  private highWater(): number {
    return Math.min(this.maxBatch, Math.ceil(this.bufferLimit() / 2));
  }

  private onUpdates(updates: readonly TagUpdate[]): void {
    if (updates.length === 0) return;
    this.refreshRules();
    let queued = false;
    for (const { sample } of updates) {
      const log = this.tagLog(sample.fullTagId);
      const rule = log.rule;
      if (rule === null) continue;
      const last = log.last;
      if (last === undefined) this.loggedTags++;
      else if (!changedBeyond(last, sample, rule.deadband)) continue;
      const epochMs = this.epochMsOf(sample.utcTimestamp);
      if (last !== undefined && sample.value !== undefined && restated(log, last, epochMs))
        continue;
      log.last = sample;
      if (sample.value !== undefined) rememberLive(log, epochMs);
      this.push(toLogged(sample, epochMs));
      queued = true;
    }
    if (queued) this.queued();
  }

  /**
   * Samples of the past (Sparkplug `is_historical`): each one of a tag that an entry logs is
   * stored at its own timestamp, whatever the deadband (it is not a change of the current
   * value) and without becoming the last logged sample the on-change rule compares with. One
   * at the timestamp of the tag's last live logged sample or of one of its recent ones with a
   * value, or at or before the newest sample of the past logged or skipped so, was logged
   * already and is skipped.
   */
  private onHistorical(samples: readonly Sample[]): void {
    this.refreshRules();
    let queued = false;
    for (const sample of samples) {
      if (!this.logs(sample.fullTagId)) continue;
      const epochMs = Date.parse(sample.utcTimestamp);
      // Never twice at one timestamp: the edge's births carry its current value, which is also
      // the last sample it stored (so logged live already), and a catch-up cut off by a lost
      // connection is sent again from its start.
      const log = this.tagLog(sample.fullTagId);
      if (log.historicalMs !== undefined && epochMs <= log.historicalMs) continue;
      log.historicalMs = epochMs;
      // Seen all the same: sent again later (its acknowledgement lost with the broker, while
      // the tag's last live sample has moved on to Unavailable), it is still skipped above.
      if (log.last !== undefined && log.last.utcTimestamp === sample.utcTimestamp) continue;
      if (log.recentLive?.includes(epochMs)) continue;
      this.push(toLogged(sample, epochMs));
      queued = true;
    }
    if (queued) this.queued();
  }

  /** Whether any entry (on change or interval) covers the tag. */
  private logs(fullTagId: string): boolean {
    if (this.tagLog(fullTagId).rule !== null) return true;
    return this.options.entries.some(
      (entry, index) => entry.mode === 'interval' && this.covers(entry, index, fullTagId),
    );
  }

  /** The tag's log entry, its rule computed (again, after a collection change) when needed. */
  private tagLog(fullTagId: string): TagLog {
    const known = this.tagLogs.get(fullTagId);
    if (known === undefined) {
      const log = { rule: this.ruleOf(fullTagId), generation: this.generation, last: undefined };
      this.tagLogs.set(fullTagId, log);
      return log;
    }
    if (known.generation !== this.generation) {
      known.rule = this.ruleOf(fullTagId);
      known.generation = this.generation;
    }
    return known;
  }

  private epochMsOf(utcTimestamp: string): number {
    if (utcTimestamp !== this.lastStamp) {
      this.lastStamp = utcTimestamp;
      this.lastStampMs = Date.parse(utcTimestamp);
    }
    return this.lastStampMs;
  }

  /** Interval entry: the current sample of every tag it covers, stamped with the sampling time. */
  private sample(index: number): void {
    const entry = this.options.entries[index] as HistoryLogEntry;
    const { store } = this.options;
    const now = this.options.clock.now();
    let count = 0;
    for (const id of this.tagsOf(entry, index)) {
      const current = store.get(id);
      if (current) {
        this.push(toLogged(current, now));
        count++;
      }
    }
    this.intervalTags[index] = count;
    this.queued();
  }

  private tagsOf(entry: HistoryLogEntry, index: number): Iterable<string> {
    if (entry.collection !== undefined) {
      const collections = this.options.collections;
      return collections?.has(entry.collection) ? collections.members(entry.collection) : [];
    }
    const matches = this.matchers[index] as TagMatcher;
    return [...this.options.store.ids()].filter(matches);
  }

  // Collections can be replaced through the API: recompute the per-tag rules when one changed.
  private refreshRules(): void {
    // Runs on every store write: without a collection entry the rules never change.
    if (!this.usesCollections) return;
    const collections = this.options.collections;
    const sources = this.options.entries.map((entry) =>
      entry.collection !== undefined && collections?.has(entry.collection)
        ? collections.definition(entry.collection)
        : undefined,
    );
    if (sources.some((source, i) => source !== this.ruleSources[i])) {
      this.ruleSources = sources;
      this.generation++;
      this.memberMatchers = sources.map((source) =>
        source?.members.map((member) => compileTagPattern(member)),
      );
    }
  }

  /** The onChange rule of a tag under the entries and collections now. */
  private ruleOf(fullTagId: string): ChangeRule | null {
    let rule: ChangeRule | null = null;
    for (const [index, entry] of this.options.entries.entries()) {
      if (entry.mode !== 'onChange' || !this.covers(entry, index, fullTagId)) continue;
      // Several entries cover the tag: the finest deadband wins.
      const deadband = entry.deadband ?? 0;
      if (rule === null || deadband < rule.deadband) rule = { deadband };
    }
    return rule;
  }

  private covers(entry: HistoryLogEntry, index: number, fullTagId: string): boolean {
    if (entry.collection === undefined) return (this.matchers[index] as TagMatcher)(fullTagId);
    // Compiled by refreshRules (which runs before any rule is computed), not once per tag.
    return this.memberMatchers[index]?.some((matches) => matches(fullTagId)) ?? false;
  }

  private push(sample: LoggedSample): void {
    this.buffer.push(sample);
  }

  /**
   * After samples were queued: keeps the bound, and schedules an early flush when a full
   * transaction waits. The flush runs right after the write that brought the samples, not
   * inside it (a synchronous backend would hold the driver's write and the other subscribers
   * for a whole append). Not during an outage: the flush period paces the retries.
   */
  private queued(): void {
    this.trim();
    if (this.earlyFlush || this.outage || this.busy || this.buffered < this.highWater()) return;
    this.earlyFlush = true;
    setImmediate(() => {
      this.earlyFlush = false;
      // Stopped meanwhile: stop() appends what is left itself.
      if (this.unsubscribe) this.flushSoon();
    });
  }

  /**
   * Drops the oldest samples beyond the bound; one warning per outage (or per spell of a
   * backend slower than the samples arrive), then a summary.
   */
  private trim(): void {
    const limit = this.bufferLimit();
    const excess = this.buffered - limit;
    if (excess <= 0) return;
    this.head += excess;
    this.counters.dropped += excess;
    if (this.droppedInOutage === 0) {
      this.options.logger.warn(
        { bufferLimit: limit },
        `history buffer full (${limit} samples): the backend is down or slower than the ` +
          'samples arrive; dropping the oldest',
      );
    }
    this.droppedInOutage += excess;
    // Compact once the dropped head is the larger part, so memory stays near the bound.
    if (this.head > this.buffer.length / 2) {
      this.buffer = this.buffer.slice(this.head);
      this.head = 0;
    }
  }

  private flushSoon(): void {
    if (this.busy || this.buffered === 0) return;
    if (this.slice) {
      this.flushWanted = true;
      return;
    }
    this.flushWanted = false;
    void this.drainSoon();
  }

  /** Starts {@link drain} as the one backend operation under way. */
  private drainSoon(): Promise<void> {
    const run: Promise<void> = this.drain().finally(() => {
      if (this.busy === run) this.busy = undefined;
    });
    this.busy = run;
    return run;
  }

  /**
   * Appends the buffer in batches of at most `maxBatch`, one after the other (yielding to the
   * event loop between them), until a batch fails, or the buffer held no more than one batch
   * and what arrived meanwhile is less than a full one (the flush period takes that).
   */
  private async drain(): Promise<void> {
    for (;;) {
      const more = this.buffered > this.maxBatch;
      if (!(await this.append()) || this.buffered === 0) return;
      if (!more && this.buffered < this.highWater()) return;
      await yieldToEventLoop();
    }
  }

  /**
   * One batch: the oldest `maxBatch` buffered samples. What the backend refuses sample by
   * sample is isolated and dropped; on an outage the unstored part goes back to the front.
   * @returns false when the backend failed as a whole (the next flush retries).
   */
  private async append(): Promise<boolean> {
    const count = Math.min(this.buffered, this.maxBatch);
    const batch = this.buffer.slice(this.head, this.head + count);
    this.head += count;
    if (this.head === this.buffer.length || this.head > this.buffer.length / 2) {
      this.buffer = this.buffer.slice(this.head);
      this.head = 0;
    }
    this.inFlight = batch.length;
    const rejected: LoggedSample[] = [];
    let firstRefusal: unknown;
    // Parts still to store, oldest first: a refused part is replaced by its two halves.
    const parts: LoggedSample[][] = [batch];
    try {
      for (let part = parts.shift(); part !== undefined; part = parts.shift()) {
        try {
          await this.options.backend.append(part);
        } catch (error) {
          if (!refusesSamples(error)) {
            // Samples that arrived meanwhile are newer: the unstored ones go before them.
            this.buffer = [part, ...parts].flat().concat(this.buffer.slice(this.head));
            this.head = 0;
            this.failed(error);
            return false;
          }
          firstRefusal ??= error;
          if (part.length === 1) rejected.push(part[0] as LoggedSample);
          else {
            const half = Math.ceil(part.length / 2);
            parts.unshift(part.slice(0, half), part.slice(half));
          }
          // Halving a big batch takes many appends: let drivers and the API run in between.
          await yieldToEventLoop();
          continue;
        }
        this.counters.transactions++;
        this.counters.appended += part.length;
        this.recovered();
      }
    } finally {
      this.inFlight = 0;
      if (rejected.length > 0) this.reject(rejected, firstRefusal);
    }
    return true;
  }

  /** The backend accepted an append: ends an outage (with its summary). */
  private recovered(): void {
    if (!this.outage) {
      // Dropped without an outage (samples came faster than the backend stored them): the
      // spell ends once the backlog is stored, and the next one warns again.
      if (this.droppedInOutage > 0 && this.buffered === 0) {
        this.options.logger.info(
          { dropped: this.droppedInOutage },
          `history backend caught up; ${this.droppedInOutage} samples were dropped while it ` +
            'fell behind',
        );
        this.droppedInOutage = 0;
      }
      return;
    }
    this.outage = false;
    this.options.logger.info(
      { dropped: this.droppedInOutage },
      `history backend accepts appends again; ${this.droppedInOutage} samples were dropped ` +
        'while it did not',
    );
    this.droppedInOutage = 0;
  }

  /** The backend failed as a whole: one warning per outage; the buffer stays bounded. */
  private failed(error: unknown): void {
    this.counters.failedAppends++;
    if (!this.outage) {
      this.outage = true;
      this.options.logger.warn(
        { err: error, buffered: this.buffered },
        'history backend refused an append; buffering in memory and retrying every flush',
      );
    }
    this.trim();
  }

  /** Counts and logs (once per batch, by tag id, without values) the samples refused. */
  private reject(samples: readonly LoggedSample[], error: unknown): void {
    this.counters.rejected += samples.length;
    const tags = [...new Set(samples.map((sample) => sample.fullTagId))];
    this.options.logger.warn(
      {
        rejected: samples.length,
        tags: tags.slice(0, loggedTagsMax),
        ...(tags.length > loggedTagsMax ? { moreTags: tags.length - loggedTagsMax } : {}),
        reason: error instanceof Error ? error.message : String(error),
      },
      `history backend refused ${samples.length} samples (a value or time it cannot store); ` +
        'they are dropped, the rest of the batch is stored',
    );
  }

  /** Starts a retention run unless one is still under way (it is then left to finish). */
  private retainSoon(): void {
    if (this.retention !== undefined) return;
    const controller = new AbortController();
    this.retention = controller;
    const before = this.options.clock.now() - this.options.retentionDays * day;
    void this.retain(before, controller.signal).finally(() => {
      if (this.retention === controller) this.retention = undefined;
    });
  }

  /** One retention run, slice by slice, with the appends that came due run between slices. */
  private async retain(before: number, signal: AbortSignal): Promise<void> {
    // Never together with an append: the run starts after the one under way.
    while (this.busy) await this.busy;
    if (signal.aborted) return;
    this.beginSlice();
    try {
      const deleted = await this.options.backend.deleteBefore(before, {
        signal,
        betweenSlices: () => this.betweenSlices(signal),
      });
      if (deleted) {
        this.options.logger.info(
          { deleted, before: new Date(before).toISOString(), ended: signal.aborted || undefined },
          'history retention deleted old samples',
        );
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, 'history retention failed');
    } finally {
      this.endSliceNow();
    }
    // A flush that came due during the last slice.
    if (this.flushWanted && !signal.aborted) this.flushSoon();
  }

  /**
   * Awaited by the backend between two retention slices: runs the appends that came due during
   * the slice, lets timers and I/O run, and resumes only once no append is under way.
   */
  private async betweenSlices(signal: AbortSignal): Promise<void> {
    this.endSliceNow();
    if (this.flushWanted && !signal.aborted) this.flushSoon();
    await yieldToEventLoop();
    // A drain started meanwhile (by this pause, the flush timer, flush() or stop()) goes first.
    while (this.busy) await this.busy;
    // Aborted: the backend ends the run when this returns; no slice follows.
    if (!signal.aborted) this.beginSlice();
  }

  private beginSlice(): void {
    this.slice = new Promise((resolve) => {
      this.endSlice = resolve;
    });
  }

  private endSliceNow(): void {
    this.endSlice?.();
    this.slice = undefined;
    this.endSlice = undefined;
  }
}

/**
 * True when an append error says the backend refused something in the batch (a value, a
 * time), so storing the batch in parts can isolate it: a value the driver cannot bind, an
 * SQLite constraint/mismatch/too-big/range error, or a PostgreSQL data exception (SQLSTATE
 * class 22), integrity violation (23) or program limit (54000). Every other error is a failure
 * of the backend itself, whatever the batch, and keeps the batch to retry.
 */
export function refusesSamples(error: unknown): boolean {
  if (isUnreachableError(error) || error instanceof HistoryStoppedError) return false;
  // A value the database driver cannot bind (better-sqlite3 throws these for it).
  if (error instanceof TypeError || error instanceof RangeError) return true;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return false;
  if (sampleSqliteCode.test(code)) return true;
  return /^[0-9A-Z]{5}$/.test(code) && sampleSqlStates.test(code);
}

// Only errors about the data itself isolate samples. Anything else (a lost connection, a wrong
// password, a pool that timed out, a full disk, a TLS failure, an error without a code) is a
// problem of the whole backend: bisecting it would drop every buffered sample one by one and
// hammer the database with attempts, so the batch is kept for the next flush instead.
const sampleSqliteCode = /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/;
// SQLSTATE classes 22 (data exception) and 23 (integrity constraint), and 54000 (a value over a
// program limit).
const sampleSqlStates = /^(22|23)...$|^54000$/;

/** Lets timers and I/O run (a synchronous backend holds the event loop while it works). */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** True when `next` should be logged after `last` under `deadband`. */
function changedBeyond(last: Sample, next: Sample, deadband: number): boolean {
  if (last.quality !== next.quality) return true;
  if (typeof last.value === 'number' && typeof next.value === 'number') {
    return deadband > 0
      ? Math.abs(next.value - last.value) > deadband
      : !Object.is(next.value, last.value);
  }
  return !Object.is(last.value, next.value);
}

function toLogged(sample: Sample, epochMs: number): LoggedSample {
  const logged: LoggedSample = { fullTagId: sample.fullTagId, epochMs, quality: sample.quality };
  if (sample.value !== undefined && sample.quality !== 'Bad' && sample.quality !== 'Unavailable') {
    logged.value = sample.value;
  }
  if (sample.reason !== undefined) logged.reason = sample.reason;
  return logged;
}

/**
 * Whether a live sample with a value, older than the last one logged, re-states a reading
 * logged already: one at a recent live timestamp, or at or before the newest sample of the
 * past. A Sparkplug rebirth does that (the host asked for it before it had read the births that
 * answered its online STATE, or after a `seq` gap): its NBIRTH turns the device's tags
 * Unavailable now, its DBIRTHs carry the readings they carried before, at their timestamps. Its
 * row would sort before the last logged one anyway; it is not logged twice, and not made the
 * last logged sample, so the next reading logs as a change. One at the last logged sample's own
 * timestamp (a Stale mark of that reading) still logs.
 */
function restated(log: TagLog, last: Sample, epochMs: number): boolean {
  const logged =
    log.recentLive?.includes(epochMs) === true || epochMs <= (log.historicalMs ?? -Infinity);
  return logged && epochMs < Date.parse(last.utcTimestamp);
}

/** Keeps the timestamp of a live sample logged on change (see {@link TagLog.recentLive}). */
function rememberLive(log: TagLog, epochMs: number): void {
  const recent = log.recentLive;
  if (recent === undefined) {
    log.recentLive = [epochMs];
    return;
  }
  if (recent.length < recentLiveKept) {
    recent.push(epochMs);
    return;
  }
  const at = log.recentAt ?? 0;
  recent[at] = epochMs;
  log.recentAt = (at + 1) % recentLiveKept;
}
