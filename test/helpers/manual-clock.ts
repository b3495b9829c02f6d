import type { Clock, TimerHandle } from '../../src/clock.js';

interface Timer {
  id: number;
  due: number;
  intervalMs: number | undefined;
  callback: () => void;
}

/**
 * A clock that moves only when told: `advance(ms)` runs every timer that falls due, in time
 * order, so interval and timeout logic is tested without sleeping.
 */
export class ManualClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();

  /** @param start epoch milliseconds the clock starts at. Default: 2026-01-01T00:00:00Z. */
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    return this.add(callback, delayMs, undefined);
  }

  setInterval(callback: () => void, intervalMs: number): TimerHandle {
    return this.add(callback, intervalMs, intervalMs);
  }

  clearTimer(handle: TimerHandle | undefined): void {
    if (handle !== undefined) this.timers.delete(handle as unknown as number);
  }

  /** Number of timers still scheduled (a stopped component should leave none). */
  pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, running due timers in order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      let next: Timer | undefined;
      for (const timer of this.timers.values()) {
        if (timer.due <= target && (next === undefined || timer.due < next.due)) next = timer;
      }
      if (next === undefined) break;
      this.current = next.due;
      if (next.intervalMs === undefined) this.timers.delete(next.id);
      else next.due += Math.max(1, next.intervalMs);
      next.callback();
    }
    this.current = target;
  }

  private add(callback: () => void, delayMs: number, intervalMs: number | undefined): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { id, due: this.current + Math.max(0, delayMs), intervalMs, callback });
    return id as unknown as TimerHandle;
  }
}
