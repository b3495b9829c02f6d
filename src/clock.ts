/**
 * Time as a dependency. Components take a Clock instead of calling Date.now or setTimeout,
 * so retry waits, scan intervals and staleness can be tested without sleeping.
 */

/** Opaque handle of a scheduled timer. */
export type TimerHandle = { readonly __timer: unique symbol } | NodeJS.Timeout;

/** Wall-clock time and timers. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `callback` once after `delayMs` milliseconds. */
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  /** Runs `callback` every `intervalMs` milliseconds until cleared. */
  setInterval(callback: () => void, intervalMs: number): TimerHandle;
  /** Cancels a timer from either setTimeout or setInterval; unknown handles are ignored. */
  clearTimer(handle: TimerHandle | undefined): void;
}

/** The real clock: Date.now and Node's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  setInterval: (callback, intervalMs) => setInterval(callback, intervalMs),
  clearTimer: (handle) => {
    if (handle !== undefined) clearTimeout(handle as NodeJS.Timeout);
  },
};
