/**
 * One webhook publisher (spec §3.1, §6, §7): every Update
 * Interval it selects a batch by its Logging mode and delivers it as one POST, one delivery in
 * flight at a time, keeping its status, last delivery, counters and health tags.
 */

import { X509Certificate } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { type AlarmFeed, alarmFilterTakes } from '../../alarms/alarm-filter.js';
import type { AlarmTransition } from '../../alarms/alarm-state.js';
import type { Clock, TimerHandle } from '../../clock.js';
import type { Outbox } from '../../outbox/outbox.js';
import { profileFileLimits, readProfileFile } from '../../profile/profile-file.js';
import type { Collections } from '../../tags/collections.js';
import type { Sample } from '../../tags/sample.js';
import type { TagStore } from '../../tags/tag-store.js';
import { deliveryHealthDefinitions, deliveryHealthTagIds } from '../delivery-health.js';
import {
  type DeliveryRecord,
  deliveryFailedMessage,
  type PublisherCounters,
  type PublisherMetrics,
  type PublisherQueue,
  type PublisherState,
  type PublisherStatus,
  zeroCounters,
} from '../publisher.js';
import { openPublisherOutbox, outboxUnusableReason } from '../publisher-outbox.js';
import { DropWarnings } from '../trigger/drop-warnings.js';
import { buildPayload, type PayloadEntry } from '../trigger/payload.js';
import { type BatchSelector, createSelector, EverythingSelector } from '../trigger/selection.js';
import { type AlarmDocument, alarmDocument, maxTransitionsPerDocument } from './alarm-document.js';
import { type DeliveryOutcome, WebhookDelivery } from './delivery.js';
import { OutageLog } from './outage-log.js';
import type { WebhookConfig } from './schema.js';

/** Dependencies of a {@link WebhookPublisher}. */
export interface WebhookPublisherDeps {
  /** Where members are read and health tags written. */
  store: TagStore;
  /** The collections members come from, re-read every tick. */
  collections: Collections;
  /** Runs the interval and the retry waits. */
  clock: Clock;
  /** The daemon's logger; the publisher logs through a child naming it. */
  logger: Logger;
  /** tagd's version, for the User-Agent. */
  version: string;
  /** Folder a relative `caFile` is resolved against (the profile's). Default: the working directory. */
  baseDir?: string;
  /** The state directory, where `storeAndForward` keeps its outbox. Required for it. */
  stateDir?: string;
  /** Delivery durations for the metrics. Default: not measured. */
  metrics?: PublisherMetrics;
  /** The running alarms, for a publisher with `alarms`. Absent: no alarm events are sent. */
  alarms?: AlarmFeed;
}

/**
 * Most alarm transitions waiting for their POST (the receiver is slow or away); beyond, the
 * oldest are dropped, logged and counted as failures. With storeAndForward a failed document
 * goes to the outbox instead, bounded by bufferLimitMB.
 */
export const maxQueuedAlarmTransitions = 10_000;

/** What one delivery carries: a batch of samples, or an alarm document. */
interface Outgoing {
  /** The outbox topic it is kept under. */
  topic: 'batch' | 'alarms';
  body: PayloadEntry[] | AlarmDocument;
  /** Samples it carries (0 for an alarm document), for the last delivery and counters. */
  samples: number;
  /** True when there is nothing to send (stored batches may still be forwarded). */
  empty: boolean;
  /** The receiver has it, or the outbox keeps it. */
  delivered(): void;
  /** It is lost. */
  dropped(): void;
}

/** The reason a publisher gives (Error, not running) when its caFile cannot be used; the log says why. */
export const caFileUnusableReason =
  'The CA file (caFile) could not be used; the gateway log says why.';

/** The reason an Off publisher gives after Stop (PublisherManager contract). */
export const stoppedReason = 'stopped';

/** The ids of a webhook publisher's health tags (spec §2.4). */
export const healthTagIds = deliveryHealthTagIds;

/**
 * A webhook publisher. It does not check its run conditions (license, collections): the
 * manager does, then calls {@link start}. Counters and the last delivery survive stop, start
 * and reconfiguration.
 */
export class WebhookPublisher {
  private current: WebhookConfig;
  private status: PublisherStatus = 'Off';
  private reason: string | undefined;
  private lastDelivery: DeliveryRecord | undefined;
  private readonly counters: PublisherCounters = zeroCounters();
  private readonly log: Logger;
  /** What is logged about failed deliveries: state changes and summaries, not every attempt. */
  private readonly outageLog: OutageLog;
  private readonly health: ReturnType<typeof healthTagIds>;
  // Set while running.
  private timer: TimerHandle | undefined;
  private selector: BatchSelector | undefined;
  private delivery: WebhookDelivery | undefined;
  private abort: AbortController | undefined;
  private stopMembersAdded: (() => void) | undefined;
  private inFlight: Promise<void> | undefined;
  /** storeAndForward: the batches whose delivery failed, oldest first. */
  private outbox: Outbox | undefined;
  private members: string[] = [];
  /** Everything mode only: the members as a set, for filtering updates. */
  private memberSet = new Set<string>();
  private readonly dropWarnings: DropWarnings;
  /** When the Everything buffer was last drained (start or tick), clock ms. */
  private drainedAt = 0;
  private missingWarned = new Set<string>();
  /** `alarms`: transitions waiting for their POST, oldest first. */
  private alarmQueue: (AlarmTransition & { seq?: number })[] = [];
  private stopAlarms: (() => void) | undefined;

  constructor(
    config: WebhookConfig,
    private readonly deps: WebhookPublisherDeps,
  ) {
    this.current = config;
    this.log = deps.logger.child({ component: 'webhook', publisher: config.name });
    this.dropWarnings = new DropWarnings(this.counters, this.log);
    this.outageLog = new OutageLog(config.name, this.log);
    this.health = healthTagIds(config.name);
    deps.store.define(deliveryHealthDefinitions(this.health, 'webhook', config.name));
    this.writeHealth(this.health.status, 'Off');
  }

  /** The publisher's name. */
  get name(): string {
    return this.current.name;
  }

  /** The configuration in force. */
  get config(): WebhookConfig {
    return this.current;
  }

  /** True while On or Error (the timer runs). */
  get running(): boolean {
    return this.timer !== undefined;
  }

  /** Status, reason, last delivery and counters, as the management API shows them. */
  state(): PublisherState {
    return {
      name: this.current.name,
      status: this.status,
      ...(this.status !== 'On' && this.reason !== undefined ? { reason: this.reason } : {}),
      ...(this.lastDelivery ? { lastDelivery: { ...this.lastDelivery } } : {}),
      counters: { ...this.counters },
    };
  }

  /**
   * What waits for delivery (metrics): the batches stored in the storeAndForward outbox, and
   * the updates in the Everything buffer (Snapshot and On Change pick their batch at the tick
   * and keep nothing). The buffer is drained at every tick, so its oldest update has waited at
   * most since the last one.
   */
  queue(): PublisherQueue {
    const selector = this.selector;
    const buffered = selector instanceof EverythingSelector ? selector.buffered : 0;
    const outbox = this.outbox;
    const stored = outbox?.depth ?? 0;
    let oldest = buffered > 0 ? this.drainedAt : undefined;
    const storedAt = stored > 0 ? outbox?.oldestQueuedAt() : undefined;
    if (storedAt !== undefined && (oldest === undefined || storedAt < oldest)) oldest = storedAt;
    return {
      name: this.current.name,
      depth: buffered + stored,
      ...(oldest !== undefined ? { oldestQueuedAt: oldest } : {}),
      ...(outbox !== undefined
        ? { outbox: { messages: stored, bytes: outbox.sizeBytes, dropped: outbox.dropped } }
        : {}),
    };
  }

  /**
   * Starts publishing: status On, a tick every Update Interval. Reads `caFile` first; when it
   * cannot be read or holds no usable certificate (or the outbox cannot be opened) the publisher
   * does not run and is Error with that reason, so monitoring flags it. Idempotent.
   */
  async start(): Promise<void> {
    if (this.running) return;
    let extraCa: string | undefined;
    if (this.current.caFile !== undefined) {
      const caFile = resolve(this.deps.baseDir ?? process.cwd(), this.current.caFile);
      try {
        extraCa = await readCaFile(caFile);
      } catch (error) {
        // The reason is shown to every PublisherView account, and caFile may be set over the
        // API to any path: it must not tell whether a file exists or what it holds. The log
        // (operators only) has the detail.
        this.setError(caFileUnusableReason);
        this.log.error(
          `Webhook publisher '${this.name}' cannot start: ${(error as Error).message}`,
        );
        return;
      }
      if (this.running) return; // started meanwhile by a concurrent call
    }
    const config = this.current;
    const outboxFile = this.outboxFile;
    if (config.storeAndForward && outboxFile !== undefined) {
      const outbox = openPublisherOutbox(
        {
          file: outboxFile,
          limitBytes: (config.bufferLimitMB ?? 64) * 1024 * 1024,
          now: () => this.deps.clock.now(),
        },
        this.log,
        `Webhook publisher '${this.name}'`,
      );
      if (outbox === undefined) {
        this.setError(outboxUnusableReason);
        return;
      }
      this.outbox = outbox;
    }
    this.delivery = new WebhookDelivery(config, {
      clock: this.deps.clock,
      version: this.deps.version,
      ...(extraCa !== undefined ? { extraCa } : {}),
    });
    this.abort = new AbortController();
    this.refreshMembers();
    if (config.loggingMode === 'Everything') {
      // Everything filters every update by membership, so tags joining a collection between
      // ticks join at once (the store announces a new tag before its first update).
      this.stopMembersAdded = this.deps.collections.onMembersAdded((collection, ids) => {
        if (!this.current.collections.includes(collection)) return;
        for (const id of ids) {
          if (this.memberSet.has(id)) continue;
          this.memberSet.add(id);
          this.members.push(id);
        }
      });
    }
    this.selector = createSelector(config.loggingMode, {
      store: this.deps.store,
      isMember: (id) => this.memberSet.has(id),
      counters: this.counters,
      everythingBufferSize: config.everythingBufferSize,
    });
    this.selector.start();
    this.followAlarms();
    // A (re)start begins with status On: an outage of the previous run is not continued.
    this.outageLog.reset();
    this.dropWarnings.restart();
    this.drainedAt = this.deps.clock.now();
    this.timer = this.deps.clock.setInterval(
      () => this.tick(),
      config.updateIntervalSeconds * 1000,
    );
    this.setStatus('On');
    this.log.info(
      `Webhook publisher '${this.name}' started: ${config.loggingMode} every ` +
        `${config.updateIntervalSeconds} s to the destination.`,
    );
  }

  /**
   * Stops publishing: cancels a delivery in flight (its batch is neither counted as delivered
   * nor as failed), then status Off with `reason`. Idempotent.
   * @param reason why it is Off. Default: "stopped".
   */
  async stop(reason: string = stoppedReason): Promise<void> {
    if (this.running) {
      await this.teardown();
      const outage = this.outageLog.reset();
      this.log.info(
        `Webhook publisher '${this.name}' stopped (${reason})` +
          (outage === undefined ? '.' : `; it was failing: ${outage}.`),
      );
    }
    this.setOff(reason);
  }

  /** The file of this publisher's storeAndForward outbox; undefined without a state directory. */
  get outboxFile(): string | undefined {
    const stateDir = this.deps.stateDir;
    return stateDir === undefined
      ? undefined
      : join(stateDir, 'outbox', `webhook-${this.current.name}.db`);
  }

  /** Records why a publisher that does not run is Off (the manager's run conditions). */
  setOff(reason: string): void {
    this.reason = reason;
    this.setStatus('Off');
  }

  /** Records why a publisher that does not run could not start: status Error. */
  setError(reason: string): void {
    this.setStatus('Error');
    this.reason = reason;
  }

  /**
   * Takes a new configuration (same name). A running publisher is stopped and started again
   * with it; the caller decides whether a stopped one starts.
   */
  async reconfigure(config: WebhookConfig): Promise<void> {
    const wasRunning = this.running;
    // No stop(): the status stays On (or Error) across the swap instead of flickering Off.
    if (wasRunning) await this.teardown();
    this.current = config;
    this.missingWarned.clear();
    if (wasRunning) await this.start();
  }

  /** Resolves when no delivery is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  /** Cancels the timer, the selection and a delivery in flight; leaves the status alone. */
  private async teardown(): Promise<void> {
    this.deps.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.stopAlarms?.();
    this.stopAlarms = undefined;
    this.stopMembersAdded?.();
    this.stopMembersAdded = undefined;
    this.selector?.stop();
    this.abort?.abort();
    await this.idle();
    // Alarm transitions not yet sent: kept with storeAndForward, else lost (and said so).
    if (this.alarmQueue.length > 0) {
      const waiting = this.alarmQueue;
      this.alarmQueue = [];
      const outbox = this.outbox;
      const kept = outbox !== undefined && this.keep(outbox, this.alarmOutgoing(waiting));
      if (!kept) {
        this.log.warn(
          { transitions: waiting.length },
          `Webhook publisher '${this.name}' stopped with alarm transitions not yet sent; they are not sent.`,
        );
      }
    }
    this.delivery?.close();
    this.selector = undefined;
    this.delivery = undefined;
    this.abort = undefined;
    this.outbox?.close();
    this.outbox = undefined;
  }

  private tick(): void {
    const selector = this.selector;
    const delivery = this.delivery;
    if (selector === undefined || delivery === undefined) return;
    this.dropWarnings.tick(this.current.everythingBufferSize);
    if (this.inFlight !== undefined) {
      // On Change and Everything keep accumulating and send at the next tick; a Snapshot tick
      // would only repeat the sample set, so it is skipped and counted.
      if (this.current.loggingMode === 'Snapshot') {
        this.counters.skippedTicks++;
        this.log.debug('Snapshot tick skipped: the previous delivery is still in flight.');
      }
      return;
    }
    this.refreshMembers();
    this.drainedAt = this.deps.clock.now();
    const samples = selector.select(this.members);
    const entries = buildPayload(samples);
    if (entries.length === 0) {
      selector.delivered();
      // Nothing new, but stored batches (storeAndForward) still wait for the receiver.
      if (this.outbox === undefined || this.outbox.depth === 0) return;
    }
    const outgoing: Outgoing = {
      topic: 'batch',
      body: entries,
      samples: entries.length,
      empty: entries.length === 0,
      delivered: () => selector.delivered(),
      dropped: () => selector.dropped(),
    };
    this.launch(delivery, outgoing);
  }

  /**
   * `alarms`: hears the alarm transitions while running; those the filter takes wait in the
   * alarm queue and are POSTed at once, one delivery in flight at a time.
   */
  private followAlarms(): void {
    const filter = this.current.alarms;
    const feed = this.deps.alarms;
    if (filter === undefined || feed === undefined) return;
    this.stopAlarms = feed.subscribe((transitions) => {
      const taken = transitions.filter((transition) => alarmFilterTakes(filter, transition));
      if (taken.length === 0) return;
      this.alarmQueue.push(...taken);
      const excess = this.alarmQueue.length - maxQueuedAlarmTransitions;
      if (excess > 0) {
        this.alarmQueue.splice(0, excess);
        this.counters.failures++;
        this.log.warn(
          { dropped: excess },
          `Webhook publisher '${this.name}': ${excess} alarm transitions were dropped, the oldest, while the receiver was behind.`,
        );
      }
      this.sendAlarms();
    });
  }

  /** POSTs the waiting alarm transitions unless a delivery is in flight (it follows that one). */
  private sendAlarms(): void {
    const delivery = this.delivery;
    if (delivery === undefined || this.inFlight !== undefined || this.alarmQueue.length === 0) {
      return;
    }
    const transitions = this.alarmQueue.splice(0, maxTransitionsPerDocument);
    this.launch(delivery, this.alarmOutgoing(transitions));
  }

  private alarmOutgoing(transitions: readonly (AlarmTransition & { seq?: number })[]): Outgoing {
    return {
      topic: 'alarms',
      body: alarmDocument(this.current.name, transitions),
      samples: 0,
      empty: false,
      delivered: () => undefined,
      dropped: () => undefined,
    };
  }

  /** Starts a delivery; when it ends, alarm transitions that came meanwhile follow. */
  private launch(delivery: WebhookDelivery, outgoing: Outgoing): void {
    const signal = (this.abort as AbortController).signal;
    const flight = this.deliver(delivery, outgoing, signal)
      .catch((error: unknown) => {
        // The outbox's SQLite calls throw synchronously (a full disk: SQLITE_FULL); a tick must
        // never turn that into an unhandled rejection, which would stop the whole daemon.
        this.log.error({ err: error }, `Webhook publisher '${this.name}': the delivery failed.`);
        this.setStatus('Error');
      })
      .finally(() => {
        if (this.inFlight !== flight) return;
        this.inFlight = undefined;
        if (this.running) this.sendAlarms();
      });
    this.inFlight = flight;
  }

  private async deliver(
    delivery: WebhookDelivery,
    outgoing: Outgoing,
    signal: AbortSignal,
  ): Promise<void> {
    const outbox = this.outbox;
    if (outbox !== undefined && outbox.depth > 0) {
      // Stored batches go first, in order; while the oldest still fails, the new batch joins them.
      const drained = await this.forward(delivery, outbox, signal);
      if (signal.aborted) {
        // Stopped meanwhile: the new batch joins the stored ones instead of being lost.
        if (!outgoing.empty && this.keep(outbox, outgoing)) outgoing.delivered();
        return;
      }
      if (!drained) {
        if (!outgoing.empty) this.keep(outbox, outgoing);
        outgoing.delivered();
        return;
      }
    }
    if (outgoing.empty) return;
    let outcome: DeliveryOutcome;
    try {
      outcome = await delivery.send(outgoing.body, {
        signal,
        onRetry: (attempt, failure, waitMs) =>
          this.outageLog.retrying(attempt, failure.error, failure.httpStatus, waitMs),
      });
    } catch (error) {
      // send() reports failures in its outcome; this is a bug, not a delivery failure.
      this.log.error({ err: error }, 'Webhook delivery failed unexpectedly.');
      return;
    }
    if (outcome.aborted) {
      // Stopped before the receiver answered: stored, the batch is sent after the next start.
      if (outbox !== undefined && this.keep(outbox, outgoing)) outgoing.delivered();
      else if (outgoing.topic === 'alarms') {
        this.log.warn(
          `Webhook publisher '${this.name}' stopped while sending alarm transitions; they may not have arrived.`,
        );
      }
      return;
    }
    const record: DeliveryRecord = {
      at: new Date(outcome.endedAt).toISOString(),
      ok: outcome.ok,
      ...(outcome.httpStatus !== undefined ? { httpStatus: outcome.httpStatus } : {}),
      attempts: outcome.attempts,
      durationMs: outcome.endedAt - outcome.startedAt,
      samples: outgoing.samples,
    };
    this.reportDelivery(record);
    if (outcome.ok) {
      outgoing.delivered();
      this.deliverySucceeded(record, outcome);
      return;
    }
    this.counters.failures++;
    const kept = outbox !== undefined && this.keep(outbox, outgoing);
    if (kept) outgoing.delivered();
    else outgoing.dropped();
    this.deliveryFailed(record, outcome, outgoing.samples, kept);
  }

  /** A delivery the receiver took: counted, healthy, status On, an outage logged as over. */
  private deliverySucceeded(record: DeliveryRecord, outcome: DeliveryOutcome): void {
    this.lastDelivery = record;
    this.counters.batches++;
    this.counters.samples += record.samples;
    this.writeHealth(this.health.lastDeliverySuccess, true);
    this.writeHealth(this.health.lastDeliveryError, '');
    this.setStatus('On');
    this.outageLog.recovered(outcome.httpStatus);
  }

  /**
   * A delivery whose every attempt failed: the last delivery, the health tags, status Error and
   * the outage log say so.
   * @param samples how many samples the batch carried
   * @param kept whether the batch stays in the outbox for a later attempt
   */
  private deliveryFailed(
    record: DeliveryRecord,
    outcome: DeliveryOutcome,
    samples: number,
    kept: boolean,
  ): void {
    const last = outcome.failures[outcome.failures.length - 1];
    const error = last?.error ?? 'unknown error';
    this.lastDelivery = { ...record, error };
    this.writeHealth(this.health.lastDeliverySuccess, false);
    this.writeHealth(this.health.lastDeliveryError, deliveryFailedMessage);
    this.setStatus('Error');
    this.outageLog.failed({
      at: outcome.endedAt,
      attempts: outcome.attempts,
      error,
      ...(last?.httpStatus !== undefined ? { httpStatus: last.httpStatus } : {}),
      errors: outcome.failures.map((failure) => failure.error),
      samples,
      batchId: outcome.batchId,
      kept,
    });
  }

  private reportDelivery(record: DeliveryRecord): void {
    this.deps.metrics?.deliveryEnded(
      this.current.name,
      record.ok ? 'success' : 'failure',
      record.durationMs / 1000,
    );
  }

  /**
   * storeAndForward: appends a failed batch to the outbox (the oldest beyond the bound go).
   * @returns false when the outbox could not be written (a full or failing disk): the batch is
   *   then lost like one without storeAndForward, and the failure is logged.
   */
  private keep(outbox: Outbox, outgoing: Outgoing): boolean {
    let dropped: number;
    try {
      dropped = outbox.append([{ topic: outgoing.topic, payload: JSON.stringify(outgoing.body) }]);
    } catch (error) {
      this.log.error(
        { err: error, samples: outgoing.samples },
        `Webhook publisher '${this.name}': the outbox could not be written; this batch is lost.`,
      );
      return false;
    }
    if (dropped > 0) {
      this.log.warn(
        { dropped, bufferLimitMB: this.current.bufferLimitMB ?? 64 },
        `Webhook publisher '${this.name}': the outbox is full; its ${dropped} oldest batches were dropped.`,
      );
    }
    return true;
  }

  /**
   * storeAndForward: delivers the stored batches oldest first, each with the usual attempts,
   * removing each once the receiver accepted it.
   * @returns true when the outbox is empty, false when a batch failed again (it stays first).
   */
  private async forward(
    delivery: WebhookDelivery,
    outbox: Outbox,
    signal: AbortSignal,
  ): Promise<boolean> {
    while (outbox.depth > 0) {
      const [stored] = outbox.peek(1);
      if (stored === undefined) return true;
      // A stored alarm document (topic `alarms`) is sent as it was; a batch is an array.
      const body = JSON.parse(stored.payload.toString('utf8')) as PayloadEntry[] | AlarmDocument;
      const samples = Array.isArray(body) ? body.length : 0;
      const outcome = await delivery.send(body, { signal });
      if (outcome.aborted) return false;
      const record: DeliveryRecord = {
        at: new Date(outcome.endedAt).toISOString(),
        ok: outcome.ok,
        ...(outcome.httpStatus !== undefined ? { httpStatus: outcome.httpStatus } : {}),
        attempts: outcome.attempts,
        durationMs: outcome.endedAt - outcome.startedAt,
        samples,
      };
      this.reportDelivery(record);
      if (!outcome.ok) {
        this.deliveryFailed(record, outcome, samples, true);
        return false;
      }
      outbox.remove([stored.id]);
      this.deliverySucceeded(record, outcome);
    }
    return true;
  }

  /** Re-reads the union of the collections' members, in collection order. */
  private refreshMembers(): void {
    const collections = this.deps.collections;
    const present: string[] = [];
    for (const name of this.current.collections) {
      if (collections.has(name)) {
        this.missingWarned.delete(name);
        if (!present.includes(name)) present.push(name);
      } else if (!this.missingWarned.has(name)) {
        this.missingWarned.add(name);
        this.log.warn(
          `Collection '${name}' of webhook publisher '${this.name}' no longer exists; ` +
            'its tags are not published.',
        );
      }
    }
    const everything = this.current.loggingMode === 'Everything';
    // The common case: one collection, whose member list has no duplicates; only Everything
    // needs the set (it filters updates between ticks). Saves a 10,000-entry set per tick.
    if (present.length === 1 && !everything) {
      // members() hands out a fresh array, so it is ours to keep.
      this.members = collections.members(present[0] as string) as string[];
      return;
    }
    const members: string[] = [];
    const seen = new Set<string>();
    for (const name of present) {
      for (const id of collections.members(name)) {
        if (seen.has(id)) continue;
        seen.add(id);
        members.push(id);
      }
    }
    this.members = members;
    this.memberSet = seen;
  }

  /** Sets the status; On and a delivery's Error clear the reason (the last delivery says why). */
  private setStatus(status: PublisherStatus): void {
    if (status !== 'Off') this.reason = undefined;
    if (this.status === status) return;
    this.status = status;
    this.writeHealth(this.health.status, status);
  }

  private writeHealth(fullTagId: string, value: string | boolean): void {
    const sample: Sample = {
      fullTagId,
      utcTimestamp: new Date(this.deps.clock.now()).toISOString(),
      quality: 'Good',
      value,
    };
    this.deps.store.write([sample]);
  }
}

const pemCertificate = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * Reads a `caFile` (a regular file of at most 1 MiB, opened without blocking on a FIFO or
 * device) and checks its contents with {@link checkCaFile}.
 * @returns the PEM text.
 * @throws Error naming the file and what is wrong (ProfileFileError for file problems).
 */
export async function readCaFile(file: string): Promise<string> {
  const text = (await readProfileFile(file, 'the CA file', profileFileLimits.pem)).toString('utf8');
  try {
    return checkCaFile(text);
  } catch (error) {
    throw new Error(`The CA file ${file} cannot be used: ${(error as Error).message}.`);
  }
}

/**
 * Checks the contents of a `caFile`: at least one PEM certificate, every one of them parsable.
 * @returns the contents unchanged.
 * @throws Error saying what is wrong.
 */
export function checkCaFile(text: string): string {
  const blocks = text.match(pemCertificate) ?? [];
  if (blocks.length === 0) throw new Error('it holds no PEM certificate');
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch {
      throw new Error('a certificate in it cannot be parsed');
    }
  }
  return text;
}
