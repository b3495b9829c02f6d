/**
 * How many chat messages an account may send: at most {@link chatMessagesPerMinute} in any
 * 60 s (a sliding window). Each message can run several model requests and tool calls, so one
 * account must not keep the model (often a single local GPU) busy for everyone.
 */
import { TooManyRequestsError } from '../../errors.js';

/** Messages per account per minute. */
export const chatMessagesPerMinute = 10;
const windowMs = 60_000;

/** See the module comment. */
export class ChatRateLimit {
  private readonly sent = new Map<string, number[]>();

  /** @param now epoch ms now. */
  constructor(
    private readonly now: () => number,
    private readonly limit = chatMessagesPerMinute,
  ) {}

  /**
   * Counts one message of `accountId`.
   * @throws TooManyRequestsError (429, Retry-After: when the oldest message leaves the window)
   */
  take(accountId: string, account: string): void {
    const now = this.now();
    const times = (this.sent.get(accountId) ?? []).filter((time) => time > now - windowMs);
    if (times.length >= this.limit) {
      const retryAfter = Math.max(1, Math.ceil(((times[0] as number) + windowMs - now) / 1000));
      this.sent.set(accountId, times);
      throw new TooManyRequestsError(
        `Account ${account} sent ${this.limit} chat messages in the last minute (at most ${this.limit}); retry in ${retryAfter} s.`,
        retryAfter,
      );
    }
    times.push(now);
    this.sent.set(accountId, times);
  }
}
