/**
 * How many TagQuerySet requests (create, replace, Delta) may be in progress at once, per account
 * and in all. An answer is matched, then serialized in pieces with turns given back to the event
 * loop (see queryResponseJson), so parallel requests overlap: without a cap, one Viewer sending
 * 25 creates of 100,000 values at once would hold some 25 answers of 11 MB (and their pieces)
 * together, about 0.6 GB. With it, at most {@link defaultMaxConcurrentQueries} answers are being
 * built or written at any time, whoever sends them.
 */
import type { Writable } from 'node:stream';
import { finished } from 'node:stream';
import { TooManyRequestsError } from '../errors.js';

/** Default {@link QueryAdmissionLimits.perAccount}: 2 requests of one account at once. */
export const defaultMaxConcurrentQueriesPerAccount = 2;
/** Default {@link QueryAdmissionLimits.total}: 4 requests of all accounts at once. */
export const defaultMaxConcurrentQueries = 4;
/** Retry-After of a refused request, in seconds: a slot frees once an answer is written. */
export const queryAdmissionRetryAfterSeconds = 1;

/** Most TagQuerySet requests in progress at once. */
export interface QueryAdmissionLimits {
  /** Per account. Default 2. */
  perAccount: number;
  /** All accounts together. Default 4. */
  total: number;
}

/** Frees a slot; calling it again does nothing. */
export type ReleaseSlot = () => void;

/** Counts the TagQuerySet requests in progress and refuses those over the limits. */
export class QueryAdmission {
  private inProgress = 0;
  private readonly byAccount = new Map<string, number>();

  constructor(
    private readonly limits: QueryAdmissionLimits = {
      perAccount: defaultMaxConcurrentQueriesPerAccount,
      total: defaultMaxConcurrentQueries,
    },
  ) {}

  /**
   * Takes a slot for a request of `accountId`, or throws a 429 `query-capacity-reached`
   * {@link TooManyRequestsError} (Retry-After 1 s) naming the limit that is reached.
   */
  enter(accountId: string): ReleaseSlot {
    const mine = this.byAccount.get(accountId) ?? 0;
    // The account's own limit first: it is the one its client can do something about.
    if (mine >= this.limits.perAccount) {
      throw new TooManyRequestsError(
        `This account has ${mine} TagQuerySet requests in progress, the most one account may ` +
          `have at once (${this.limits.perAccount}); send the next one once an answer has ` +
          'arrived.',
        queryAdmissionRetryAfterSeconds,
        'query-capacity-reached',
      );
    }
    if (this.inProgress >= this.limits.total) {
      throw new TooManyRequestsError(
        `The gateway is answering ${this.inProgress} TagQuerySet requests, the most it runs at ` +
          `once (${this.limits.total} for all accounts together); retry shortly.`,
        queryAdmissionRetryAfterSeconds,
        'query-capacity-reached',
      );
    }
    this.inProgress++;
    this.byAccount.set(accountId, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inProgress--;
      const left = (this.byAccount.get(accountId) ?? 1) - 1;
      if (left > 0) this.byAccount.set(accountId, left);
      else this.byAccount.delete(accountId);
    };
  }

  /**
   * Runs `work` in a slot of `accountId` (or throws the 429 of {@link enter}). The slot is held
   * until `work` has settled and `response` has been fully written or closed (client gone):
   * the answer's text lives until then. An aborted request keeps its slot until its work ends,
   * so aborting cannot start more work than the limits allow.
   */
  async run<T>(accountId: string, response: Writable, work: () => Promise<T>): Promise<T> {
    const release = this.enter(accountId);
    try {
      return await work();
    } finally {
      // Called at once when the response has already ended or been destroyed.
      finished(response, () => release());
    }
  }

  /** Requests in progress, all accounts together (for tests and diagnostics). */
  get size(): number {
    return this.inProgress;
  }
}
