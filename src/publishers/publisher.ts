/**
 * What every publisher reports (spec §3.1): its status, its
 * last delivery and its counters, shown by the management API and mirrored in health tags.
 */
import type { FieldError } from '../errors.js';

/**
 * Spec §3.1: On (running), Off (stopped), Error (after a failed delivery; also, not running,
 * when its start failed).
 */
export type PublisherStatus = 'On' | 'Off' | 'Error';

/** The outcome of one delivery (all its attempts). */
export interface DeliveryRecord {
  /** When the delivery ended, ISO 8601 UTC. */
  at: string;
  ok: boolean;
  /** HTTP status of the last attempt, when one was received. */
  httpStatus?: number;
  /** Attempts made, 1 to 3. */
  attempts: number;
  /** From the first attempt to the end, ms. */
  durationMs: number;
  /** Samples in the batch. */
  samples: number;
  /** Why the last attempt failed (status text or network error), never a secret. */
  error?: string;
}

/** The receiver's answer to a "Send test" batch. Never holds a URL or a credential. */
export interface PublisherTestResult {
  /** True when the receiver accepted the batch (webhook: a 2xx answer; MQTT: the PUBACK). */
  ok: boolean;
  /** Webhook: HTTP status of the last answer, when the receiver answered. */
  httpStatus?: number;
  /** MQTT: the PUBACK's reason code (0: success), at QoS 1. */
  pubackReasonCode?: number;
  /** Attempts made: 1 (a test does not retry); 0 when it could not start. */
  attempts: number;
  /** From the first attempt to the answer, ms. */
  durationMs: number;
  /** Entries in the batch. */
  samples: number;
  /** When the delivery ended, ISO 8601 UTC. */
  at: string;
  /** Why it failed (status text, network or broker error), never a secret. */
  error?: string;
}

/** Running totals since the publisher was created. */
export interface PublisherCounters {
  /** Batches delivered successfully. */
  batches: number;
  /** Samples in those batches. */
  samples: number;
  /** Batches dropped after their last attempt failed. */
  failures: number;
  /** Snapshot ticks skipped because a delivery was still in flight. */
  skippedTicks: number;
  /** Everything-mode updates dropped because the buffer was full. */
  droppedSamples: number;
}

/** The counters of a publisher just created: all 0. */
export function zeroCounters(): PublisherCounters {
  return { batches: 0, samples: 0, failures: 0, skippedTicks: 0, droppedSamples: 0 };
}

/** What the management API shows of a publisher. */
export interface PublisherState {
  name: string;
  status: PublisherStatus;
  /** Why an Off publisher is off (stopped, no license, missing collection…), or why it could not start (Error). */
  reason?: string;
  lastDelivery?: DeliveryRecord;
  counters: PublisherCounters;
}

/** What waits in a publisher for delivery, for the metrics. */
export interface PublisherQueue {
  /** The publisher's name. */
  name: string;
  /** What waits for delivery: MQTT messages; webhook stored batches and Everything updates. */
  depth: number;
  /**
   * Since when the oldest of them has waited at most, epoch ms; undefined when none waits.
   */
  oldestQueuedAt?: number;
  /** The durable outbox, when the publisher keeps one (MQTT json, webhook storeAndForward). */
  outbox?: {
    /** Messages (webhook: batches) stored. */
    messages: number;
    /** Bytes of their topics and payloads. */
    bytes: number;
    /** Messages dropped since the outbox was opened because it was full. */
    dropped: number;
    /** Sparkplug store-and-forward: samples stored (a message carries many). */
    samples?: number;
    /** Sparkplug store-and-forward: samples dropped since the outbox was opened. */
    droppedSamples?: number;
  };
  /** Sparkplug: write commands; with a primaryHostId, the host's STATE and the catch-up. */
  sparkplug?: {
    catchingUp?: boolean;
    primaryHostOnline?: boolean;
    /** DCMD metrics written through the tag writer since the publisher started. */
    commandsWritten: number;
    /** Write command metrics refused since the publisher started. */
    commandsRefused: number;
  };
}

/**
 * Where a publisher reports what only it can time (metrics). Counts need no port: the metrics
 * read {@link PublisherState.counters} when scraped.
 */
export interface PublisherMetrics {
  /** A delivery ended (all its attempts): its outcome and how long it took, seconds. */
  deliveryEnded(publisher: string, outcome: 'success' | 'failure', seconds: number): void;
  /** A publisher was removed: its series go with it. */
  removed(publisher: string): void;
}

/** Fixed text of the LastDeliveryError health tag after a failed delivery (spec §2.4). */
export const deliveryFailedMessage = 'Webhook delivery failed - see log for details.';

/**
 * The running publishers of one kind (webhook, MQTT), as the management API and the daemon drive them. Conditions
 * to run (spec §3.1): the data relay feature is licensed, at least one collection is selected,
 * and every selected collection exists; a publisher that cannot run stays Off with a reason.
 */
export interface PublisherManager<Config, State extends PublisherState = PublisherState> {
  /**
   * "Send test": delivers one batch of the current values of the configuration's collections
   * now and reports the receiver's answer, leaving the running publisher (counters, health tags,
   * outbox) alone. Absent when the kind has no test.
   */
  sendTest?(config: Config): Promise<PublisherTestResult>;
  /** Every publisher's state, in configuration order. */
  list(): State[];
  /** One publisher's state, or undefined. */
  get(name: string): State | undefined;
  /**
   * Adds or replaces the publisher `config.name`. A new publisher with Auto Connect on starts
   * at once; a replaced one keeps running if it was running (with the new configuration).
   */
  put(config: Config): Promise<State>;
  /** Stops and removes a publisher. @returns whether it existed. */
  remove(name: string): Promise<boolean>;
  /**
   * Starts a publisher; when a condition fails it stays Off and `reason` says why, and when its
   * start fails (a file it names cannot be used) it is Error, not running, with a `reason`.
   */
  start(name: string): Promise<State>;
  /** Stops a publisher (Off, reason "stopped"). */
  stop(name: string): Promise<State>;
  /**
   * Reads and checks the files a configuration names (caFile, a client certificate and key) as
   * its start will, without starting anything: what the API refuses a configuration for.
   * @returns every problem, its path relative to the configuration (e.g. `caFile`).
   */
  checkFiles(config: Config): Promise<FieldError[]>;
}
