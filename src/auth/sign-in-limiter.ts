/**
 * Limits failed sign-ins per account and per client address, so a password cannot be guessed
 * quickly from one host or against one account from many. Windows slide; the clock is injected.
 * An account is counted by its name in any case (names are case-insensitive): changing the case
 * buys no new guesses.
 */
import { nameKey } from './user-store.js';

/** Limits of {@link SignInLimiter}. */
export interface SignInLimits {
  /** Failures allowed per account within the window. Default 5. */
  perAccount: number;
  /** Failures allowed per address within the window. Default 20. */
  perAddress: number;
  /** Window length, ms. Default 15 minutes. */
  windowMs: number;
}

/** Default sign-in limits. */
export const defaultSignInLimits: SignInLimits = {
  perAccount: 5,
  perAddress: 20,
  windowMs: 15 * 60_000,
};

/** Where the limiter counts failures and lockouts (metrics); never told names or addresses. */
export interface SignInMetrics {
  /** A sign-in, two-factor or password-change attempt failed. */
  failed(): void;
  /** An account or a client address reached its limit: further attempts answer 429. */
  lockedOut(scope: 'account' | 'address'): void;
}

export class SignInLimiter {
  private readonly failures = new Map<string, number[]>();

  /**
   * @param metrics counts failures and lockouts. Default: not counted.
   */
  constructor(
    private readonly now: () => number,
    private readonly limits: SignInLimits = defaultSignInLimits,
    private readonly metrics?: SignInMetrics,
  ) {}

  /** Seconds until another attempt is allowed, or 0 when it is allowed now. */
  retryAfterSeconds(username: string, address: string): number {
    const waits = [
      this.wait(`account:${nameKey(username)}`, this.limits.perAccount),
      this.wait(`address:${address}`, this.limits.perAddress),
    ];
    return Math.ceil(Math.max(...waits) / 1000);
  }

  /** Counts a failed attempt. */
  recordFailure(username: string, address: string): void {
    const now = this.now();
    this.metrics?.failed();
    for (const scope of ['account', 'address'] as const) {
      const key = scope === 'account' ? `account:${nameKey(username)}` : `address:${address}`;
      const times = this.recent(key, now);
      times.push(now);
      this.failures.set(key, times);
      // Exactly at the limit: this failure is the one that locks (later ones find it locked).
      const limit = scope === 'account' ? this.limits.perAccount : this.limits.perAddress;
      if (times.length === limit) this.metrics?.lockedOut(scope);
    }
    // Bound memory under a spray of names: forget keys whose failures all expired.
    if (this.failures.size > 10_000) {
      for (const key of this.failures.keys())
        if (this.recent(key, now).length === 0) this.failures.delete(key);
    }
  }

  /** Clears an account's failures after a successful sign-in. */
  recordSuccess(username: string): void {
    this.clearAccount(username);
  }

  /**
   * Forgets an account's failures (`tagd users unlock`). Failures counted against client
   * addresses stay: they limit guessing from one host across every account.
   * @returns whether the account had failures on record.
   */
  clearAccount(username: string): boolean {
    return this.failures.delete(`account:${nameKey(username)}`);
  }

  private wait(key: string, limit: number): number {
    const now = this.now();
    const times = this.recent(key, now);
    if (times.length < limit) return 0;
    // Allowed again when the oldest failure that keeps the count at the limit leaves the window.
    return (times[times.length - limit] as number) + this.limits.windowMs - now;
  }

  private recent(key: string, now: number): number[] {
    const times = (this.failures.get(key) ?? []).filter(
      (time) => time > now - this.limits.windowMs,
    );
    if (times.length === 0) this.failures.delete(key);
    else this.failures.set(key, times);
    return times;
  }
}
