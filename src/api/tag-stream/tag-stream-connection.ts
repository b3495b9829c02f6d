/**
 * One open Server-Sent Events answer (`GET /api/v2/Tags/Stream`, `GET /api/v2/Alerts/Stream`),
 * written straight to the socket (koa's buffering bypassed). First an event with the initial
 * items, then one event per batch of its source, in order. While the socket is backpressured
 * (the client reads slower than the source changes) nothing more is written: the items wait in
 * a map by their coalescing key, where a newer item replaces an older one of the same key, and
 * go out as one event once the socket drains. Tags are keyed by fullTagId, so a slow client gets
 * the latest values and what waits is bounded by the number of tags the pattern matches; alarm
 * transitions are each their own key (none may be lost), so they are bounded by `maxWaiting`
 * instead: beyond, the stream ends and the client reads the gap from the journal.
 */
import type { ServerResponse } from 'node:http';
import type { Clock, TimerHandle } from '../../clock.js';

/** Why a stream ended, for the log. */
export type StreamEndReason =
  | 'client-closed'
  | 'session-ended'
  | 'stalled'
  | 'shutdown'
  | 'write-failed'
  /** More than `maxWaiting` items waited for a backpressured client. */
  | 'overflow';

/** What a connection needs. */
export interface TagStreamConnectionOptions<Item> {
  response: ServerResponse;
  /**
   * The items at the start, in the order they are sent; called once, so the stream does not
   * hold them for its lifetime.
   */
  initial: () => readonly Item[];
  /**
   * Subscribes to the source's batches, each holding only the items of this stream (possibly
   * none); returns the function that unsubscribes.
   */
  subscribe: (listener: (items: readonly Item[]) => void) => () => void;
  /** The key under which a waiting item replaces an older one (see the module comment). */
  coalesceKey: (item: Item) => string | number;
  /** Most items that may wait for a backpressured client; beyond, the stream ends. Default: no bound. */
  maxWaiting?: number;
  /** Subscribes to account changes (sign-out, disable, …); returns the unsubscribe function. */
  onAccountsChange: (listener: () => void) => () => void;
  /** Whether the caller's sign-in still holds; asked on each batch, heartbeat and account change. */
  stillValid: () => boolean;
  /** Epoch ms when the caller's token expires; undefined for service tokens (never). */
  expiresAt: number | undefined;
  clock: Clock;
  /** Interval of the `:` heartbeat comments, ms. */
  heartbeatMs: number;
  /** A client whose socket accepted nothing for this long is disconnected, ms. */
  stallTimeoutMs: number;
  /** Called once when the stream has ended, whatever the reason. */
  onEnd: (reason: StreamEndReason) => void;
}

/** The wire form of one event: a JSON array of items on one `data:` line. */
export function sseEvent(items: readonly unknown[]): string {
  // JSON.stringify escapes line breaks inside strings, so the array is a single line.
  return `data: ${JSON.stringify(items)}\n\n`;
}

/** Heartbeat comment: ignored by EventSource, keeps proxies and NAT from dropping the socket. */
export const heartbeatComment = ': heartbeat\n\n';

/** A live SSE answer; see the module comment. */
export class TagStreamConnection<Item> {
  private readonly options: TagStreamConnectionOptions<Item>;
  // Latest waiting item per key while the socket is backpressured; Map keeps first-seen order.
  private readonly pending = new Map<string | number, Item>();
  private blockedSince: number | undefined;
  private ended = false;
  private readonly cleanups: (() => void)[] = [];

  constructor(options: TagStreamConnectionOptions<Item>) {
    this.options = options;
  }

  /** True while the socket is backpressured and changes are being coalesced. */
  get blocked(): boolean {
    return this.blockedSince !== undefined;
  }

  /** Number of items waiting for the socket to drain (0 while the client keeps up). */
  get waiting(): number {
    return this.pending.size;
  }

  /** Sends the head and the first event, and starts following the store. */
  start(): void {
    const { response, clock } = this.options;
    response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      // nginx and similar reverse proxies would otherwise hold events back in their buffers.
      'X-Accel-Buffering': 'no',
    });
    response.on('close', () => this.end('client-closed'));
    response.on('drain', () => this.flush());
    // Subscribed before the first event is written and in the same tick as the snapshot was
    // taken, so no batch falls between the two and none is sent twice.
    this.cleanups.push(this.options.subscribe((items) => this.onBatch(items)));
    this.cleanups.push(this.options.onAccountsChange(() => this.checkSession()));
    const heartbeat = clock.setInterval(() => this.onHeartbeat(), this.options.heartbeatMs);
    this.cleanups.push(() => clock.clearTimer(heartbeat));
    const { expiresAt } = this.options;
    if (expiresAt !== undefined) {
      const timer: TimerHandle = clock.setTimeout(
        () => this.checkSession(),
        Math.max(0, expiresAt - clock.now()) + 1,
      );
      this.cleanups.push(() => clock.clearTimer(timer));
    }
    this.write(sseEvent(this.options.initial()));
  }

  /** Ends the stream (daemon stop): the client's EventSource reconnects once tagd is back. */
  close(): void {
    this.end('shutdown');
  }

  private onBatch(items: readonly Item[]): void {
    // Every batch checks the session, even one with nothing for this stream.
    if (this.ended || !this.checkSession() || items.length === 0) return;
    if (this.blockedSince !== undefined) {
      const { coalesceKey, maxWaiting } = this.options;
      for (const item of items) this.pending.set(coalesceKey(item), item);
      if (maxWaiting !== undefined && this.pending.size > maxWaiting) this.end('overflow');
      return;
    }
    this.write(sseEvent(items));
  }

  private onHeartbeat(): void {
    if (this.ended || !this.checkSession()) return;
    const { blockedSince } = this;
    if (blockedSince === undefined) {
      this.write(heartbeatComment);
    } else if (this.options.clock.now() - blockedSince >= this.options.stallTimeoutMs) {
      this.end('stalled');
    }
  }

  private flush(): void {
    if (this.ended) return;
    this.blockedSince = undefined;
    if (this.pending.size === 0) return;
    const items = [...this.pending.values()];
    this.pending.clear();
    this.write(sseEvent(items));
  }

  private write(text: string): void {
    const { response } = this.options;
    if (response.destroyed || response.writableEnded) {
      this.end('write-failed');
      return;
    }
    if (!response.write(text)) this.blockedSince ??= this.options.clock.now();
  }

  /** True while the caller may go on; otherwise ends the stream. */
  private checkSession(): boolean {
    if (this.ended) return false;
    if (this.options.stillValid()) return true;
    this.end('session-ended');
    return false;
  }

  private end(reason: StreamEndReason): void {
    if (this.ended) return;
    this.ended = true;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.pending.clear();
    const { response } = this.options;
    // A client that stopped reading would keep a graceful end waiting forever in its buffer.
    if (this.blockedSince !== undefined || reason === 'stalled' || reason === 'overflow') {
      response.destroy();
    } else if (!response.writableEnded) response.end();
    this.options.onEnd(reason);
  }
}
