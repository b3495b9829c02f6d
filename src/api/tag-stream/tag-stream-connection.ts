/**
 * One open `GET /api/v2/Tags/Stream` answer: Server-Sent Events written straight to the
 * socket (koa's buffering bypassed). First an event with the matching samples, then one event
 * per store batch holding that batch's matching samples, in order. While the socket is
 * backpressured (the client reads slower than the tags change) nothing more is written: the
 * samples wait in a map keyed by fullTagId, where a newer sample replaces the older one, and go
 * out as one event once the socket drains. So a slow client gets the latest values, and what
 * waits is bounded by the number of tags the pattern matches, however long the client dawdles.
 */
import type { ServerResponse } from 'node:http';
import type { Clock, TimerHandle } from '../../clock.js';
import type { Sample } from '../../tags/sample.js';
import type { TagUpdate } from '../../tags/tag-store.js';

/** Why a stream ended, for the log. */
export type StreamEndReason =
  | 'client-closed'
  | 'session-ended'
  | 'stalled'
  | 'shutdown'
  | 'write-failed';

/** What a connection needs. */
export interface TagStreamConnectionOptions {
  response: ServerResponse;
  /** Whether a tag belongs to the stream (its pattern). */
  matches: (fullTagId: string) => boolean;
  /**
   * The matching samples at the start, in the order they are sent; called once, so the stream
   * does not hold them for its lifetime.
   */
  initial: () => readonly Sample[];
  /** Subscribes to store batches; returns the function that unsubscribes. */
  subscribe: (listener: (updates: readonly TagUpdate[]) => void) => () => void;
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

/** The wire form of one event: a JSON array of samples on one `data:` line. */
export function sseEvent(samples: readonly Sample[]): string {
  // JSON.stringify escapes line breaks inside strings, so the array is a single line.
  return `data: ${JSON.stringify(samples)}\n\n`;
}

/** Heartbeat comment: ignored by EventSource, keeps proxies and NAT from dropping the socket. */
export const heartbeatComment = ': heartbeat\n\n';

/** A live SSE answer; see the module comment. */
export class TagStreamConnection {
  private readonly options: TagStreamConnectionOptions;
  // Latest waiting sample per tag while the socket is backpressured; Map keeps first-seen order.
  private readonly pending = new Map<string, Sample>();
  private blockedSince: number | undefined;
  private ended = false;
  private readonly cleanups: (() => void)[] = [];

  constructor(options: TagStreamConnectionOptions) {
    this.options = options;
  }

  /** True while the socket is backpressured and changes are being coalesced. */
  get blocked(): boolean {
    return this.blockedSince !== undefined;
  }

  /** Number of tags waiting for the socket to drain (0 while the client keeps up). */
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
    this.cleanups.push(this.options.subscribe((updates) => this.onBatch(updates)));
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

  private onBatch(updates: readonly TagUpdate[]): void {
    if (this.ended || !this.checkSession()) return;
    const { matches } = this.options;
    if (this.blockedSince !== undefined) {
      for (const update of updates) {
        const sample = update.sample;
        if (matches(sample.fullTagId)) this.pending.set(sample.fullTagId, sample);
      }
      return;
    }
    const samples: Sample[] = [];
    for (const update of updates) if (matches(update.sample.fullTagId)) samples.push(update.sample);
    if (samples.length > 0) this.write(sseEvent(samples));
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
    const samples = [...this.pending.values()];
    this.pending.clear();
    this.write(sseEvent(samples));
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
    if (this.blockedSince !== undefined || reason === 'stalled') response.destroy();
    else if (!response.writableEnded) response.end();
    this.options.onEnd(reason);
  }
}
