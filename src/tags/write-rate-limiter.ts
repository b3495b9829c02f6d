/**
 * Limits how fast one account writes tags: a token bucket per account holding one second's
 * worth of writes, refilled continuously. Writes are counted per item, not per request, since a
 * request of 100 items moves a plant as much as 100 requests of one. A request of more items
 * than one second's worth (at most 100 per request, 20 per second by default) is let through
 * only when the bucket is full, and leaves it in debt: the account's next writes wait until the
 * average is back under the limit. So the long-run rate never exceeds the limit, and a full
 * batch is never refused forever.
 */

/** Default writes per second and account. */
export const defaultWritesPerSecond = 20;

interface Bucket {
  /** Writes available now; negative after a batch larger than the bucket. */
  tokens: number;
  /** When `tokens` was last brought up to date, epoch ms. */
  at: number;
}

/** Per-account token buckets on an injected clock. */
export class WriteRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  /**
   * @param now epoch ms now (the injected clock).
   * @param perSecond writes per second and account, also the bucket's size. Default 20.
   */
  constructor(
    private readonly now: () => number,
    private readonly perSecond = defaultWritesPerSecond,
  ) {}

  /**
   * Takes `count` writes from the account's budget, or none when the budget cannot cover them.
   * @returns 0 when taken; otherwise the whole seconds to wait (at least 1), for Retry-After.
   */
  take(account: string, count: number): number {
    const now = this.now();
    const bucket = this.refilled(account, now);
    const needed = Math.min(count, this.perSecond);
    if (bucket.tokens >= needed) {
      bucket.tokens -= count;
      return 0;
    }
    return Math.max(1, Math.ceil((needed - bucket.tokens) / this.perSecond));
  }

  private refilled(account: string, now: number): Bucket {
    let bucket = this.buckets.get(account);
    if (bucket === undefined) {
      // Forget accounts whose buckets are full again: they hold nothing worth keeping.
      if (this.buckets.size >= 10_000) {
        for (const [key, old] of this.buckets)
          if (this.level(old, now) >= this.perSecond) this.buckets.delete(key);
      }
      bucket = { tokens: this.perSecond, at: now };
      this.buckets.set(account, bucket);
      return bucket;
    }
    bucket.tokens = this.level(bucket, now);
    bucket.at = now;
    return bucket;
  }

  private level(bucket: Bucket, now: number): number {
    const elapsed = Math.max(0, now - bucket.at);
    return Math.min(this.perSecond, bucket.tokens + (elapsed * this.perSecond) / 1000);
  }
}
