/**
 * Every open event stream of the API (tag streams, and streams of other sources such as alarm
 * transitions, under the same caps): admits a new one within the per-account and global caps
 * (each stream holds a socket and a subscription for as long as the client likes), and closes
 * them all when the daemon stops, so the listeners can close at once instead of waiting out
 * their drain time for answers that never finish by themselves.
 */
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { AccountService, Principal } from '../../auth/account-service.js';
import { type Clock, systemClock } from '../../clock.js';
import { TooManyRequestsError } from '../../errors.js';
import type { Sample } from '../../tags/sample.js';
import { comparePaths } from '../../tags/tag-browse.js';
import { compileTagPattern } from '../../tags/tag-pattern.js';
import type { TagStore } from '../../tags/tag-store.js';
import { TagStreamConnection, type TagStreamConnectionOptions } from './tag-stream-connection.js';

/** What a stream of another source than the tag store sends (see {@link TagStreamHub.openEventStream}). */
export type EventStreamSource<Item> = Pick<
  TagStreamConnectionOptions<Item>,
  'initial' | 'subscribe' | 'coalesceKey' | 'maxWaiting'
>;

/** Caps and timings of tag streams. */
export interface TagStreamLimits {
  /** Streams one account may hold open at once. Default 8. */
  maxPerAccount: number;
  /** Streams open at once over all accounts. Default 64. */
  maxTotal: number;
  /** Interval of the heartbeat comments, ms. Default 15000. */
  heartbeatMs: number;
  /**
   * A client whose socket accepted nothing for this long is disconnected (its slot freed), ms.
   * Default 60000.
   */
  stallTimeoutMs: number;
  /** `Retry-After` of a refused stream, seconds. Default 10. */
  retryAfterSeconds: number;
}

/** The defaults of {@link TagStreamLimits}. */
export const defaultTagStreamLimits: TagStreamLimits = {
  maxPerAccount: 8,
  maxTotal: 64,
  heartbeatMs: 15_000,
  stallTimeoutMs: 60_000,
  retryAfterSeconds: 10,
};

/** What a {@link TagStreamHub} needs. */
export interface TagStreamHubOptions {
  store: TagStore;
  accounts: AccountService;
  /** Timers for heartbeats and token expiry. Default: the system clock. */
  clock?: Clock;
  limits?: Partial<TagStreamLimits>;
  logger?: Logger;
}

/** The open tag streams; see the module comment. */
export class TagStreamHub {
  /** The caps and timings in force. */
  readonly limits: TagStreamLimits;
  private readonly clock: Clock;
  private readonly open = new Set<TagStreamConnection<unknown>>();
  private readonly perAccount = new Map<string, number>();

  constructor(private readonly options: TagStreamHubOptions) {
    this.clock = options.clock ?? systemClock;
    this.limits = { ...defaultTagStreamLimits, ...options.limits };
  }

  /** Streams open now. */
  get size(): number {
    return this.open.size;
  }

  /** Streams whose client reads slower than the tags change (their changes are coalesced). */
  backlogged(): number {
    let count = 0;
    for (const connection of this.open) if (connection.blocked) count += 1;
    return count;
  }

  /**
   * Starts a tag stream on the request's response.
   * @param pattern a validated tag path or pattern.
   * @throws TooManyRequestsError `stream-capacity-reached` over a cap (nothing written yet).
   */
  openStream(context: Context, principal: Principal, pattern: string): void {
    const { store } = this.options;
    const matches = cachedMatcher(pattern);
    this.openEventStream<Sample>(
      context,
      principal,
      { message: 'tag stream ended', pattern },
      {
        initial: () =>
          store
            .match(pattern)
            .sort(comparePaths)
            .map((id) => store.get(id))
            .filter((sample) => sample !== undefined),
        subscribe: (listener) =>
          store.subscribe((updates) => {
            const samples: Sample[] = [];
            for (const update of updates) {
              if (matches(update.sample.fullTagId)) samples.push(update.sample);
            }
            listener(samples);
          }),
        coalesceKey: (sample) => sample.fullTagId,
      },
    );
  }

  /**
   * Starts a stream of another source on the request's response, under the same caps, session
   * checks, heartbeats and stall handling as tag streams.
   * @param ended the log line when it ends: its message, and fields naming the stream (the
   *   account and the reason are added).
   * @throws TooManyRequestsError `stream-capacity-reached` over a cap (nothing written yet).
   */
  openEventStream<Item>(
    context: Context,
    principal: Principal,
    ended: { message: string } & Record<string, unknown>,
    source: EventStreamSource<Item>,
  ): void {
    const { limits } = this;
    const account = principal.user.id;
    const held = this.perAccount.get(account) ?? 0;
    if (held >= limits.maxPerAccount || this.open.size >= limits.maxTotal) {
      const which =
        held >= limits.maxPerAccount
          ? `this account already has ${held} streams open (at most ${limits.maxPerAccount})`
          : `the gateway already has ${this.open.size} streams open (at most ${limits.maxTotal})`;
      throw new TooManyRequestsError(
        `Refused: ${which}. Close one, or retry later.`,
        limits.retryAfterSeconds,
        'stream-capacity-reached',
      );
    }
    if (context.method === 'HEAD') {
      // koa-router answers HEAD with the GET route: the head of a stream, and no stream.
      context.status = 200;
      context.type = 'text/event-stream';
      return;
    }
    const { accounts } = this.options;
    // koa must neither buffer nor answer: the socket is written directly from here on.
    context.status = 200;
    context.respond = false;
    const connection: TagStreamConnection<Item> = new TagStreamConnection<Item>({
      response: context.res,
      ...source,
      onAccountsChange: (listener) => accounts.onAccountsChange(listener),
      stillValid: () => accounts.stillValid(principal),
      expiresAt: principal.claims.exp === undefined ? undefined : principal.claims.exp * 1000,
      clock: this.clock,
      heartbeatMs: limits.heartbeatMs,
      stallTimeoutMs: limits.stallTimeoutMs,
      onEnd: (reason) => {
        this.open.delete(connection as TagStreamConnection<unknown>);
        const count = (this.perAccount.get(account) ?? 1) - 1;
        if (count > 0) this.perAccount.set(account, count);
        else this.perAccount.delete(account);
        const { message, ...fields } = ended;
        this.options.logger?.debug(
          { username: principal.user.username, ...fields, reason },
          message,
        );
      },
    });
    this.open.add(connection as TagStreamConnection<unknown>);
    this.perAccount.set(account, held + 1);
    connection.start();
  }

  /** Ends every open stream (daemon stop). */
  closeAll(): void {
    for (const connection of [...this.open]) connection.close();
  }
}

// Tags keep their paths, so each tag is matched once per stream; `**` needs no matching at all.
function cachedMatcher(pattern: string): (fullTagId: string) => boolean {
  if (pattern === '**') return () => true;
  const matches = compileTagPattern(pattern);
  const known = new Map<string, boolean>();
  return (fullTagId) => {
    let result = known.get(fullTagId);
    if (result === undefined) {
      result = matches(fullTagId);
      known.set(fullTagId, result);
    }
    return result;
  };
}
