/**
 * Notices an OPC UA subscription that has gone silent. A server owes every subscription a
 * message at least once per keep-alive window (revised publishing interval × revised
 * maxKeepAliveCount): a notification, or an empty keep-alive when nothing changed. A
 * subscription that sends nothing for longer than its {@link silenceBoundMs} has stopped
 * publishing (the server no longer answers Publish requests, has dropped the subscription or
 * hangs), and its values can no longer be vouched for.
 *
 * One timer on the injected clock serves every watched subscription: a message only stamps the
 * time (the hot path does no timer work), and the timer, due at the earliest deadline, checks
 * and moves on to the next one.
 */
import type { Clock, TimerHandle } from '../../src/clock.js';

/**
 * Slack on top of the keep-alive window before a subscription counts as silent, ms, besides one
 * publishing interval (a server sends on its publishing ticks, so a message may come up to one
 * interval after the window): network latency and a busy event loop on either side.
 */
export const silenceMarginMs = 2000;

/** What the bound of a subscription is computed from, as the server revised it. */
export interface SilenceBoundInput {
  /** Revised publishing interval, ms. */
  publishingIntervalMs: number;
  /** Revised maxKeepAliveCount: publishing intervals the server may go without a message. */
  maxKeepAliveCount: number;
  /**
   * Revised sampling interval of the subscription's heartbeat item (the server's CurrentTime),
   * ms, when the server monitors it: a change at least this often.
   */
  heartbeatIntervalMs?: number;
}

/**
 * Longest a healthy subscription goes without a message, ms: max(publishing interval ×
 * maxKeepAliveCount, heartbeat interval) + one publishing interval + {@link silenceMarginMs}.
 * With tagd's defaults (1000 ms publishing, 10 s keep-alive) 13,000 ms.
 */
export function silenceBoundMs(input: SilenceBoundInput): number {
  const window = input.publishingIntervalMs * input.maxKeepAliveCount;
  return (
    Math.max(window, input.heartbeatIntervalMs ?? 0) + input.publishingIntervalMs + silenceMarginMs
  );
}

interface Watch {
  boundMs: number;
  /** When the subscription was last heard from, epoch ms of the injected clock. */
  lastHeard: number;
}

/**
 * Watches subscriptions (any key: the driver passes its own record of each) and calls
 * `onSilent(key, silentMs)` once for one that is not heard from within its bound; the key is
 * then no longer watched.
 */
export class SubscriptionWatchdog<K> {
  private readonly watches = new Map<K, Watch>();
  private timer: TimerHandle | undefined;
  /** When the timer is due, epoch ms; Infinity when none is set. */
  private dueAt = Number.POSITIVE_INFINITY;
  private paused = false;

  constructor(
    private readonly clock: Clock,
    private readonly onSilent: (key: K, silentMs: number) => void,
  ) {}

  /** Starts watching `key` (or sets its bound anew), counting from now. */
  watch(key: K, boundMs: number): void {
    this.watches.set(key, { boundMs, lastHeard: this.clock.now() });
    this.schedule();
  }

  /** A message of `key` came: its silence starts over. Unwatched keys are ignored. */
  heard(key: K): void {
    const watch = this.watches.get(key);
    if (watch !== undefined) watch.lastHeard = this.clock.now();
  }

  /** Stops watching `key`. */
  forget(key: K): void {
    this.watches.delete(key);
    if (this.watches.size === 0) this.clearTimer();
  }

  /** True while `key` is watched. */
  has(key: K): boolean {
    return this.watches.has(key);
  }

  /**
   * Suspends every deadline (the connection is down and being restored: a subscription cannot
   * be heard meanwhile, and the tags say so already).
   */
  pause(): void {
    this.paused = true;
    this.clearTimer();
  }

  /** Resumes after {@link pause}: every watched subscription's silence starts from now. */
  resume(): void {
    this.paused = false;
    const now = this.clock.now();
    for (const watch of this.watches.values()) watch.lastHeard = now;
    this.schedule();
  }

  /** Forgets every subscription and clears the timer. */
  clear(): void {
    this.watches.clear();
    this.paused = false;
    this.clearTimer();
  }

  private clearTimer(): void {
    this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.dueAt = Number.POSITIVE_INFINITY;
  }

  /** Sets the timer for the earliest deadline, unless one is already due by then. */
  private schedule(): void {
    if (this.paused) return;
    let next = Number.POSITIVE_INFINITY;
    for (const watch of this.watches.values()) {
      next = Math.min(next, watch.lastHeard + watch.boundMs);
    }
    if (next === Number.POSITIVE_INFINITY || next >= this.dueAt) return;
    this.clearTimer();
    this.dueAt = next;
    this.timer = this.clock.setTimeout(() => this.check(), next - this.clock.now());
  }

  private check(): void {
    this.timer = undefined;
    this.dueAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    const silent: [K, number][] = [];
    for (const [key, watch] of this.watches) {
      const silentMs = now - watch.lastHeard;
      if (silentMs >= watch.boundMs) silent.push([key, silentMs]);
    }
    for (const [key] of silent) this.watches.delete(key);
    this.schedule();
    for (const [key, silentMs] of silent) this.onSilent(key, silentMs);
  }
}
