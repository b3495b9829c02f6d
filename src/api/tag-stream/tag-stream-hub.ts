/**
 * Every open tag stream of the API: admits a new one within the per-account and global caps
 * (each stream holds a socket and a store subscription for as long as the client likes), and
 * closes them all when the daemon stops, so the listeners can close at once instead of waiting
 * out their drain time for answers that never finish by themselves.
 */
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { AccountService, Principal } from '../../auth/account-service.js';
import { type Clock, systemClock } from '../../clock.js';
import { TooManyRequestsError } from '../../errors.js';
import { comparePaths } from '../../tags/tag-browse.js';
import { compileTagPattern } from '../../tags/tag-pattern.js';
import type { TagStore } from '../../tags/tag-store.js';
import { TagStreamConnection } from './tag-stream-connection.js';

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
  private readonly open = new Set<TagStreamConnection>();
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
   * Starts a stream on the request's response.
   * @param pattern a validated tag path or pattern.
   * @throws TooManyRequestsError `stream-capacity-reached` over a cap (nothing written yet).
   */
  openStream(context: Context, principal: Principal, pattern: string): void {
    const { limits } = this;
    const account = principal.user.id;
    const held = this.perAccount.get(account) ?? 0;
    if (held >= limits.maxPerAccount || this.open.size >= limits.maxTotal) {
      const which =
        held >= limits.maxPerAccount
          ? `this account already has ${held} tag streams open (at most ${limits.maxPerAccount})`
          : `the gateway already has ${this.open.size} tag streams open (at most ${limits.maxTotal})`;
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
    const { store, accounts } = this.options;
    const matches = cachedMatcher(pattern);
    // koa must neither buffer nor answer: the socket is written directly from here on.
    context.status = 200;
    context.respond = false;
    const connection = new TagStreamConnection({
      response: context.res,
      matches,
      initial: () =>
        store
          .match(pattern)
          .sort(comparePaths)
          .map((id) => store.get(id))
          .filter((sample) => sample !== undefined),
      subscribe: (listener) => store.subscribe(listener),
      onAccountsChange: (listener) => accounts.onAccountsChange(listener),
      stillValid: () => accounts.stillValid(principal),
      expiresAt: principal.claims.exp === undefined ? undefined : principal.claims.exp * 1000,
      clock: this.clock,
      heartbeatMs: limits.heartbeatMs,
      stallTimeoutMs: limits.stallTimeoutMs,
      onEnd: (reason) => {
        this.open.delete(connection);
        const count = (this.perAccount.get(account) ?? 1) - 1;
        if (count > 0) this.perAccount.set(account, count);
        else this.perAccount.delete(account);
        this.options.logger?.debug(
          { username: principal.user.username, pattern, reason },
          'tag stream ended',
        );
      },
    });
    this.open.add(connection);
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
