/**
 * The history a window function (`avg`, `min`, `max`, `sum`, `count`, `stddev`, `rate`,
 * `delta`, `onTime`, `changes`) keeps of its argument, in bounded memory whatever the update
 * rate: the window is cut into segments of at least 1/256 of its length, each holding running
 * aggregates (time-weighted area and squared area, time covered by a value, extremes, sample
 * count and sum, counter increase, value changes), so a window holds at most about 258
 * segments.
 *
 * The argument is a step function: a value holds from the time it was recorded until the next
 * one. Time without a value (its input Bad or Unavailable) counts for nothing: an average is
 * over the time the argument had a value. Results are exact except in the one segment that
 * straddles the window's start when that segment holds more than one value: there its area is
 * prorated and its extremes, samples and changes are taken or left whole (an error of at most
 * 1/256 of the window in time). The window is half-open, (now − window, now]: a sample or an
 * increase recorded exactly at its start has left it, so a rate over 10 s counts the increases
 * of 10 s, not 10 s and one more.
 */

/** How one window function is set up. */
export interface WindowConfig {
  /** Length of the window, ms. */
  windowMs: number;
  /**
   * For `rate` and `delta` of a counter: the counter's modulus (65536 for a 16-bit counter). A
   * value lower than the previous one is a rollover, an increase of `value + modulus − previous`.
   * Without it a lower value is a reset, an increase of `value` (counted from 0).
   */
  modulus?: number;
}

/** Aggregates of the window at one time. */
export interface WindowAggregate {
  /** ∫ value dt over the window where the argument had a value, value·ms. */
  area: number;
  /** ∫ value² dt, value²·ms. */
  area2: number;
  /** Time within the window the argument had a value, ms. */
  covered: number;
  /** Time from the window's start (or the first record, if later) to now, ms. */
  span: number;
  /** Least value in force within the window; +Infinity when none. */
  min: number;
  /** Greatest value in force within the window; −Infinity when none. */
  max: number;
  /** Samples taken within the window. */
  count: number;
  /** Sum of the samples taken within the window. */
  sum: number;
  /** Counter increase within the window (rollover or reset handled, see {@link WindowConfig}). */
  increase: number;
  /** Changes of the value within the window. */
  changes: number;
}

interface Segment {
  start: number;
  /** The value in force at {@link start}; undefined: none. */
  first: number | undefined;
  /** The value in force at {@link until}. */
  last: number | undefined;
  /** Whether the value changed after {@link start}. */
  varied: boolean;
  /** Time up to which area and covered are accumulated. */
  until: number;
  area: number;
  area2: number;
  covered: number;
  min: number;
  max: number;
  count: number;
  sum: number;
  increase: number;
  changes: number;
  /** What the record that opened the segment (at {@link start}) added to the four above. */
  opening: { count: number; sum: number; increase: number; changes: number };
}

/** Segments per window: the resolution is 1/resolutionParts of its length. */
export const resolutionParts = 256;

/** The recorded history of one window function's argument; see the module comment. */
export class TimeWindow {
  private segments: Segment[] = [];
  private head = 0;
  private readonly resolutionMs: number;
  /** The last value recorded (undefined: none, or the argument had none). */
  private current: number | undefined;
  /** The last defined value recorded, for changes and counter increases. */
  private lastDefined: number | undefined;
  private lastTime: number | undefined;

  constructor(readonly config: WindowConfig) {
    this.resolutionMs = config.windowMs / resolutionParts;
  }

  /** Segments held now (for the memory bound's test). */
  get segmentCount(): number {
    return this.segments.length - this.head;
  }

  /**
   * Records the argument's value at time `now` (epoch ms). `sampling` false (only time moved)
   * advances the step function without counting a sample.
   */
  record(now: number, value: number | undefined, sampling: boolean): void {
    if (this.lastTime !== undefined && now < this.lastTime) this.clear();
    this.lastTime = now;
    let segment = this.segments[this.segments.length - 1];
    if (segment === undefined || now - segment.start >= this.resolutionMs) {
      if (segment !== undefined) advance(segment, now);
      segment = newSegment(now, value);
      this.segments.push(segment);
      this.evict(now);
    } else {
      advance(segment, now);
      if (value !== segment.last) {
        segment.varied = true;
        segment.last = value;
        if (value !== undefined) {
          if (value < segment.min) segment.min = value;
          if (value > segment.max) segment.max = value;
        }
      }
    }
    this.current = value;
    if (value === undefined) return;
    const opening = segment.start === now ? segment.opening : undefined;
    const previous = this.lastDefined;
    if (previous !== undefined && value !== previous) {
      const increase = this.increase(previous, value);
      segment.changes++;
      segment.increase += increase;
      if (opening) {
        opening.changes++;
        opening.increase += increase;
      }
    }
    this.lastDefined = value;
    if (sampling) {
      segment.count++;
      segment.sum += value;
      if (opening) {
        opening.count++;
        opening.sum += value;
      }
    }
  }

  /** The aggregates of the window ending at `now` (call after {@link record} at `now`). */
  aggregate(now: number): WindowAggregate {
    const windowStart = now - this.config.windowMs;
    const result: WindowAggregate = {
      area: 0,
      area2: 0,
      covered: 0,
      span: 0,
      min: Number.POSITIVE_INFINITY,
      max: Number.NEGATIVE_INFINITY,
      count: 0,
      sum: 0,
      increase: 0,
      changes: 0,
    };
    const segments = this.segments;
    const first = segments[this.head];
    if (first === undefined) return result;
    result.span = now - Math.max(windowStart, first.start);
    for (let i = this.head; i < segments.length; i++) {
      const segment = segments[i] as Segment;
      const end = i + 1 < segments.length ? (segments[i + 1] as Segment).start : now;
      if (end <= windowStart) continue;
      const area = segment.area + (segment.last ?? 0) * (end - segment.until);
      const area2 = segment.area2 + (segment.last ?? 0) ** 2 * (end - segment.until);
      const covered = segment.covered + (segment.last === undefined ? 0 : end - segment.until);
      if (segment.start >= windowStart) {
        result.area += area;
        result.area2 += area2;
        result.covered += covered;
        result.count += segment.count;
        result.sum += segment.sum;
        result.increase += segment.increase;
        result.changes += segment.changes;
        if (segment.start === windowStart) {
          // Half-open: what was recorded exactly at the window's start has left it.
          const { opening } = segment;
          result.count -= opening.count;
          result.sum -= opening.sum;
          result.increase -= opening.increase;
          result.changes -= opening.changes;
        }
        if (segment.min < result.min) result.min = segment.min;
        if (segment.max > result.max) result.max = segment.max;
      } else if (!segment.varied) {
        // One value over the whole segment: the part inside the window is exact.
        const inside = end - windowStart;
        const value = segment.first;
        if (value !== undefined) {
          result.area += value * inside;
          result.area2 += value * value * inside;
          result.covered += inside;
          if (value < result.min) result.min = value;
          if (value > result.max) result.max = value;
        }
      } else {
        const share = (end - windowStart) / (end - segment.start);
        result.area += area * share;
        result.area2 += area2 * share;
        result.covered += covered * share;
        if (segment.min < result.min) result.min = segment.min;
        if (segment.max > result.max) result.max = segment.max;
      }
    }
    return result;
  }

  /** The value recorded last. */
  get value(): number | undefined {
    return this.current;
  }

  private increase(previous: number, value: number): number {
    if (value >= previous) return value - previous;
    const modulus = this.config.modulus;
    return modulus !== undefined ? value + modulus - previous : value;
  }

  private evict(now: number): void {
    const windowStart = now - this.config.windowMs;
    const segments = this.segments;
    // A segment leaves once the next one starts at or before the window's start.
    while (
      this.head + 1 < segments.length &&
      (segments[this.head + 1] as Segment).start <= windowStart
    ) {
      this.head++;
    }
    if (this.head > 64 && this.head * 2 > segments.length) {
      this.segments = segments.slice(this.head);
      this.head = 0;
    }
  }

  // The clock went back: history measured on the other time line cannot be placed.
  private clear(): void {
    this.segments = [];
    this.head = 0;
    this.current = undefined;
    this.lastDefined = undefined;
  }
}

function newSegment(start: number, value: number | undefined): Segment {
  return {
    start,
    first: value,
    last: value,
    varied: false,
    until: start,
    area: 0,
    area2: 0,
    covered: 0,
    min: value ?? Number.POSITIVE_INFINITY,
    max: value ?? Number.NEGATIVE_INFINITY,
    count: 0,
    sum: 0,
    increase: 0,
    changes: 0,
    opening: { count: 0, sum: 0, increase: 0, changes: 0 },
  };
}

function advance(segment: Segment, now: number): void {
  const elapsed = now - segment.until;
  if (elapsed <= 0) return;
  const value = segment.last;
  if (value !== undefined) {
    segment.area += value * elapsed;
    segment.area2 += value * value * elapsed;
    segment.covered += elapsed;
  }
  segment.until = now;
}
