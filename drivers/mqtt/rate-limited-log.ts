/**
 * Log lines about things that can happen thousands of times a second (a publisher sending bad
 * payloads, a topic storm): the first of each kind is logged at once, later ones at most once per
 * interval as one line with the count since. Nothing is kept per topic, so the memory is bounded
 * by the number of kinds.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../src/clock.js';

/** Least time between two log lines of one kind, ms. */
export const logIntervalMs = 60_000;

interface KindState {
  loggedAt: number;
  suppressed: number;
}

/** Rate-limited warnings, one budget per kind. */
export class RateLimitedLog {
  private readonly kinds = new Map<string, KindState>();

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  /**
   * Logs `message` (with `fields`) now if no line of `kind` was logged within
   * {@link logIntervalMs}, adding how many were suppressed since; otherwise counts it.
   */
  warn(kind: string, fields: Record<string, unknown>, message: string): void {
    const now = this.clock.now();
    const state = this.kinds.get(kind);
    if (state !== undefined && now - state.loggedAt < logIntervalMs) {
      state.suppressed++;
      return;
    }
    const suppressed = state?.suppressed ?? 0;
    this.kinds.set(kind, { loggedAt: now, suppressed: 0 });
    this.logger.warn(
      { kind, ...fields, ...(suppressed > 0 ? { suppressedSinceLastLine: suppressed } : {}) },
      suppressed > 0 ? `${message} (${suppressed} more of this kind not logged since)` : message,
    );
  }
}
