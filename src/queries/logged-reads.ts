/**
 * Reads of Logged query bindings (DESIGN.md §4 "TagQuerySet", "Delta"): the samples or
 * aggregated windows of a binding's range, and for Delta the samples logged since the previous
 * poll, tracked by log position (seq) rather than by time, so late-arriving samples are not
 * missed and nothing is answered twice.
 */
import type { AggregateValue, StoredSample } from '../history/history-backend.js';
import type { HistoryService } from '../history/history-service.js';
import type { Sample } from '../tags/sample.js';
import type { TagQueryBinding } from './tag-query-set-registry.js';
import { parseAggregationWindow, parseTimePoint, resolveTimePoint } from './time-range.js';

/**
 * Where a Logged binding's client stands in the log: everything up to `afterSeq` was answered.
 * While a Delta answer was cut by the response limit, `untilSeq` freezes the end of the slice
 * being paged and `skip` counts the values of it already answered.
 */
export interface LoggedCursor {
  afterSeq: string;
  untilSeq?: string;
  skip?: number;
}

/** A binding's values, or the sign that they did not fit in `budget`. */
export interface LoggedAnswer {
  samples: Sample[];
  /** True when more values exist than the budget allowed. */
  over: boolean;
  /** The binding's cursor after this answer. */
  cursor: LoggedCursor;
}

/** The binding's range at `nowMs` (relative ends slide with now), epoch ms, inclusive. */
export function loggedRange(
  binding: TagQueryBinding,
  nowMs: number,
): { startMs: number; stopMs: number } {
  return {
    startMs: resolvePoint(binding.timeRangeStart, nowMs),
    stopMs: resolvePoint(binding.timeRangeStop, nowMs),
  };
}

function resolvePoint(text: string | undefined, nowMs: number): number {
  const parsed = parseTimePoint(text ?? 'now');
  if (!parsed.ok) throw new Error(`unreachable: ${text} passed validation`);
  return resolveTimePoint(parsed.value, nowMs);
}

function windowOf(binding: TagQueryBinding): number {
  const parsed = parseAggregationWindow(binding.aggregationWindow ?? '');
  if (!parsed.ok) throw new Error(`unreachable: ${binding.aggregationWindow} passed validation`);
  return parsed.value;
}

/**
 * The first answer of a Logged binding: every sample (Raw) or window (Aggregated) of its range
 * logged up to `mark`, the log position taken before reading.
 * @param budget most values the response still has room for.
 */
export async function readLogged(
  history: HistoryService,
  binding: TagQueryBinding,
  tagIds: readonly string[],
  nowMs: number,
  mark: string,
  budget: number,
): Promise<LoggedAnswer> {
  const range = { tagIds, ...loggedRange(binding, nowMs) };
  const cursor = { afterSeq: mark };
  if (binding.seriesMode === 'Aggregated') {
    const windows = await history.aggregate({
      ...range,
      windowMs: windowOf(binding),
      fn: binding.aggregationFunction ?? 'Avg',
      limit: budget + 1,
    });
    const over = windows.length > budget;
    return { samples: windows.slice(0, budget).map((w) => windowSample(binding, w)), over, cursor };
  }
  const rows = await history.raw({ ...range, limit: budget + 1 });
  // Appended while reading: left for the next Delta, which starts after `mark`.
  const upTo = BigInt(mark);
  const kept = rows.filter((row) => BigInt(row.seq) <= upTo);
  const over = kept.length > budget;
  return { samples: kept.slice(0, budget).map(rowSample), over, cursor };
}

/** How many values the Raw binding's range holds (for the limit problem). */
export async function countLogged(
  history: HistoryService,
  binding: TagQueryBinding,
  tagIds: readonly string[],
  nowMs: number,
): Promise<number> {
  return history.count({ tagIds, ...loggedRange(binding, nowMs) });
}

/**
 * A Delta of a Logged binding. Raw: the samples logged since the previous poll that lie in the
 * (sliding) range; a slice larger than the budget is paged over the next polls. Aggregated:
 * every window of the range that received a sample since the previous poll, recomputed.
 * @param mark the log position taken at the start of this poll.
 */
export async function readLoggedDelta(
  history: HistoryService,
  binding: TagQueryBinding,
  tagIds: readonly string[],
  nowMs: number,
  previous: LoggedCursor,
  mark: string,
  budget: number,
): Promise<LoggedAnswer> {
  const range = { tagIds, ...loggedRange(binding, nowMs) };
  const afterSeq = previous.afterSeq;
  if (binding.seriesMode === 'Aggregated') {
    const windowMs = windowOf(binding);
    const fn = binding.aggregationFunction ?? 'Avg';
    const touched = await history.aggregate({
      ...range,
      afterSeq,
      windowMs,
      fn: 'Count',
      limit: budget + 1,
    });
    if (touched.length === 0) return { samples: [], over: false, cursor: { afterSeq: mark } };
    const keys = new Set(touched.map((w) => `${w.windowStartMs}\u0000${w.fullTagId}`));
    const tags = [...new Set(touched.map((w) => w.fullTagId))];
    const first = Math.max(range.startMs, Math.min(...touched.map((w) => w.windowStartMs)));
    const windows = await history.aggregate({
      ...range,
      tagIds: tags,
      startMs: first,
      windowMs,
      fn,
      limit: Number.MAX_SAFE_INTEGER,
    });
    const changed = windows.filter((w) => keys.has(`${w.windowStartMs}\u0000${w.fullTagId}`));
    if (changed.length > budget) {
      // Windows are answered whole or not at all; the cursor stays so the next poll retries.
      return {
        samples: changed.slice(0, budget).map((w) => windowSample(binding, w)),
        over: true,
        cursor: previous,
      };
    }
    return {
      samples: changed.map((w) => windowSample(binding, w)),
      over: false,
      cursor: { afterSeq: mark },
    };
  }
  const untilSeq = previous.untilSeq ?? mark;
  const skip = previous.skip ?? 0;
  const limit = skip + budget + 1;
  const rows = await history.raw({ ...range, afterSeq, limit });
  const upTo = BigInt(untilSeq);
  const slice = rows.filter((row) => BigInt(row.seq) <= upTo).slice(skip);
  // A full read may hide more rows beyond the limit, even when filtering made it short.
  const over = slice.length > budget || rows.length === limit;
  const answered = slice.slice(0, budget);
  if (!over) return { samples: answered.map(rowSample), over, cursor: { afterSeq: untilSeq } };
  return {
    samples: answered.map(rowSample),
    over,
    cursor: { afterSeq, untilSeq, skip: skip + answered.length },
  };
}

function rowSample(row: StoredSample): Sample {
  const sample: Sample = {
    fullTagId: row.fullTagId,
    utcTimestamp: new Date(row.epochMs).toISOString(),
    quality: row.quality,
  };
  if (row.value !== undefined) sample.value = row.value;
  if (row.reason !== undefined) sample.reason = row.reason;
  return sample;
}

/** An aggregated window as a sample: stamped with the window start. */
function windowSample(binding: TagQueryBinding, window: AggregateValue): Sample {
  const sample: Sample = {
    fullTagId: window.fullTagId,
    utcTimestamp: new Date(window.windowStartMs).toISOString(),
    quality: 'Good',
  };
  if (binding.aggregationFunction === 'Count') sample.value = window.count;
  else if (window.value !== undefined) sample.value = window.value;
  else {
    // The window holds samples, but none Good or Stale with a usable value.
    sample.quality = 'Bad';
    sample.message = 'No Good or Stale value in this window.';
  }
  return sample;
}
