/**
 * The state of `integrate(x, unit)`: a running total of x over time (a flow in m³/h integrated
 * per hour gives m³). The value in force holds until the next one (the store's own model: a
 * sample stands until replaced), so the total grows by `value × elapsed` at each evaluation;
 * time without a value (input Bad, Unavailable, or the daemon stopped) adds nothing. The total is
 * what the caller persists across restarts.
 */
export class Totalizer {
  /** The running total, in x's unit × `unitMs`. */
  total = 0;
  private lastTime: number | undefined;
  private lastValue: number | undefined;

  /** @param unitMs the time unit x is per, ms (3,600,000 for per hour). */
  constructor(readonly unitMs: number) {}

  /** Adds the area since the previous record, then holds `value` from `now` on. */
  record(now: number, value: number | undefined): void {
    const { lastTime, lastValue } = this;
    if (lastTime !== undefined && lastValue !== undefined && now > lastTime) {
      this.total += (lastValue * (now - lastTime)) / this.unitMs;
    }
    this.lastTime = now;
    this.lastValue = value;
  }
}
