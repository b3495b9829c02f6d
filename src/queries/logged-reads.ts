/**
 * Reads of Logged query bindings: the samples or
 * aggregated windows of a binding's range, and for Delta what became visible since the
 * previous poll.
 *
 * Every read is "as of" a log position (`mark`, taken at the start of the poll) and a poll time
 * (`atMs`, which resolves the relative ends of the range): a sample is visible at a poll when
 * its seq ≤ mark and its time lies in the range at atMs. A Delta answers the samples visible now
 * that were not visible at the previous poll. Ranges only slide forward (the poll time of a
 * binding never goes back), so those are the samples of the current range with
 * `seq > previous mark` (logged since, whatever their time: late samples are not missed) or
 * `time > previous stop` (logged before, but only now covered by a sliding stop: a device clock
 * ahead, a `now-5m` stop). Every sample is answered once, none is missed.
 *
 * A Delta larger than the response budget is paged: the slice of that poll (its mark and
 * poll time) is frozen, and the next polls continue it after the last value answered, a key
 * (tag, time, seq) rather than an offset, so neither sliding ranges nor retention shift it.
 */
import type { AggregateValue, HistoryRange, StoredSample } from '../history/history-backend.js';
import type { HistoryService } from '../history/history-service.js';
import type { Sample } from '../tags/sample.js';
import type { TagQueryBinding } from './tag-query-binding.js';
import { parseAggregationWindow, parseTimePoint, resolveTimePoint } from './time-range.js';

/** The reads Logged bindings make (a {@link HistoryService}, or a backend in tests). */
export type LoggedHistory = Pick<HistoryService, 'raw' | 'aggregate' | 'count'>;

/** A poll of a binding: the log position and the poll time its range was resolved at. */
export interface LoggedPoll {
  /** Log position (seq, decimal) taken at the start of the poll. */
  mark: string;
  /** Poll time, epoch ms: the relative ends of the range resolve against it. */
  atMs: number;
}

/**
 * The last value answered of a paged Delta slice. Raw: the sample's tag, time and seq.
 * Aggregated: the window's tag and start (`seq` absent).
 */
export interface PageKey {
  tagId: string;
  /** Sample time or window start, epoch ms. */
  t: number;
  seq?: string;
}

/**
 * Where a Logged binding's client stands: everything visible at the poll `mark`/`atMs` was
 * answered. While a Delta slice is paged, `paging` is the poll whose slice is being answered
 * and the last value of it answered so far (absent when none was).
 */
export interface LoggedCursor extends LoggedPoll {
  paging?: LoggedPoll & { after?: PageKey };
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
 * logged up to `mark`, the log position taken before reading (samples appended meanwhile are
 * left to the first Delta).
 * @param budget most values the response still has room for.
 */
export async function readLogged(
  history: LoggedHistory,
  binding: TagQueryBinding,
  tagIds: readonly string[],
  nowMs: number,
  mark: string,
  budget: number,
): Promise<LoggedAnswer> {
  const range = { tagIds, ...loggedRange(binding, nowMs), maxSeq: mark, limit: budget + 1 };
  const cursor = { mark, atMs: nowMs };
  if (binding.seriesMode === 'Aggregated') {
    const windows = await history.aggregate({
      ...range,
      windowMs: windowOf(binding),
      fn: binding.aggregationFunction ?? 'Avg',
    });
    const over = windows.length > budget;
    return { samples: windows.slice(0, budget).map((w) => windowSample(binding, w)), over, cursor };
  }
  const rows = await history.raw(range);
  return { samples: rows.slice(0, budget).map(rowSample), over: rows.length > budget, cursor };
}

/** How many values the Raw binding's range holds (for the limit problem). */
export async function countLogged(
  history: LoggedHistory,
  binding: TagQueryBinding,
  tagIds: readonly string[],
  nowMs: number,
): Promise<number> {
  return history.count({ tagIds, ...loggedRange(binding, nowMs) });
}

/**
 * A Delta of a Logged binding. Raw: the samples that became visible since the previous poll
 * (see the file comment), by tag, time and seq. Aggregated: the windows holding such samples,
 * recomputed over the current range. A slice larger than `budget` is answered over the next
 * polls, each value once; the polls after it continue from the paged poll.
 * @param nowMs this poll's time, epoch ms.
 * @param mark the log position taken at the start of this poll.
 */
export async function readLoggedDelta(
  history: LoggedHistory,
  binding: TagQueryBinding,
  tagIds: readonly string[],
  nowMs: number,
  previous: LoggedCursor,
  mark: string,
  budget: number,
): Promise<LoggedAnswer> {
  const from: LoggedPoll = { mark: previous.mark, atMs: previous.atMs };
  // The paged slice first; fresh samples wait for the poll after it.
  const paged = previous.paging;
  const to: LoggedPoll = paged
    ? { mark: paged.mark, atMs: paged.atMs }
    : { mark, atMs: Math.max(nowMs, previous.atMs) };
  const after = paged?.after;
  // Sorted: page keys compare tags in this order (resolve() sorts the same way already).
  const tags = [...new Set(tagIds)].sort();
  const segments = deltaSegments(binding, from, to);
  const slice =
    binding.seriesMode === 'Aggregated'
      ? await changedWindows(history, binding, tags, segments, to, after, budget)
      : await newRows(history, tags, segments, after, budget);
  if (!slice.over) return { samples: slice.samples, over: false, cursor: to };
  // Nothing answered (no budget left): the page stays where it was.
  const last = slice.last ?? after;
  return {
    samples: slice.samples,
    over: true,
    cursor: { ...from, paging: { ...to, ...(last ? { after: last } : {}) } },
  };
}

/**
 * The samples visible at `to` and not at `from`, as disjoint pieces of each tag's time: up to
 * the previous stop, those logged since the previous mark; after it, all logged up to the mark.
 * Per tag the first piece lies before the second in time.
 */
interface Segment {
  startMs: number;
  stopMs: number;
  /** Exclusive lower seq bound; absent = none. */
  afterSeq?: string;
  /** Inclusive upper seq bound. */
  maxSeq: string;
}

function deltaSegments(binding: TagQueryBinding, from: LoggedPoll, to: LoggedPoll): Segment[] {
  const before = loggedRange(binding, from.atMs);
  const now = loggedRange(binding, to.atMs);
  const segments: Segment[] = [];
  if (BigInt(to.mark) > BigInt(from.mark)) {
    segments.push({
      startMs: now.startMs,
      stopMs: Math.min(now.stopMs, before.stopMs),
      afterSeq: from.mark,
      maxSeq: to.mark,
    });
  }
  // Sample times are whole milliseconds.
  segments.push({
    startMs: Math.max(now.startMs, before.stopMs + 1),
    stopMs: now.stopMs,
    maxSeq: to.mark,
  });
  return segments.filter((segment) => segment.startMs <= segment.stopMs);
}

/** Part of a Delta slice: at most `budget` values, and whether more remain. */
interface Slice {
  samples: Sample[];
  over: boolean;
  /** Key of the last value answered; absent when none was. */
  last?: PageKey;
}

async function newRows(
  history: LoggedHistory,
  tags: readonly string[],
  segments: readonly Segment[],
  after: PageKey | undefined,
  budget: number,
): Promise<Slice> {
  const lists: StoredSample[][] = [];
  for (const segment of segments) {
    lists.push(
      await readFromKey(tags, segment, after, budget + 1, 1, (range) => history.raw(range)),
    );
  }
  const rows = mergeKnown(lists, budget + 1, (row) => ({
    tagId: row.fullTagId,
    t: row.epochMs,
    seq: row.seq,
  }));
  const answered = rows.slice(0, budget);
  const lastRow = answered[answered.length - 1];
  return {
    samples: answered.map(rowSample),
    over: rows.length > budget,
    ...(lastRow
      ? { last: { tagId: lastRow.fullTagId, t: lastRow.epochMs, seq: lastRow.seq } }
      : {}),
  };
}

/**
 * The windows holding new samples (by tag, then window start), at most `budget` of them
 * recomputed: only those windows are read, not the range around them.
 */
async function changedWindows(
  history: LoggedHistory,
  binding: TagQueryBinding,
  tags: readonly string[],
  segments: readonly Segment[],
  to: LoggedPoll,
  after: PageKey | undefined,
  budget: number,
): Promise<Slice> {
  const windowMs = windowOf(binding);
  const lists: AggregateValue[][] = [];
  for (const segment of segments) {
    lists.push(
      await readFromKey(tags, segment, after, budget + 1, windowMs, (range) =>
        history.aggregate({ ...range, windowMs, fn: 'Count' }),
      ),
    );
  }
  const touched = mergeKnown(lists, budget + 1, (w) => ({
    tagId: w.fullTagId,
    t: w.windowStartMs,
  }));
  const answered = touched.slice(0, budget);
  const values = await recompute(history, binding, answered, to, windowMs);
  const samples: Sample[] = [];
  for (const w of answered) {
    const value = values.get(windowKey(w.fullTagId, w.windowStartMs));
    // Absent only when retention removed the window's samples meanwhile.
    if (value !== undefined) samples.push(windowSample(binding, value));
  }
  const lastWindow = answered[answered.length - 1];
  return {
    samples,
    over: touched.length > budget,
    ...(lastWindow ? { last: { tagId: lastWindow.fullTagId, t: lastWindow.windowStartMs } } : {}),
  };
}

const windowKey = (tagId: string, windowStartMs: number) => `${windowStartMs}\u0000${tagId}`;

/**
 * Recomputes the given windows over the range at `to`, as the first read would answer them:
 * one read per run of adjacent windows, runs with the same span read together for all their
 * tags. Reads nothing but those windows.
 */
async function recompute(
  history: LoggedHistory,
  binding: TagQueryBinding,
  windows: readonly AggregateValue[],
  to: LoggedPoll,
  windowMs: number,
): Promise<Map<string, AggregateValue>> {
  const range = loggedRange(binding, to.atMs);
  // Span "first window start/last window start" → tags with a run of that span.
  const runs = new Map<string, { first: number; last: number; tagIds: string[] }>();
  const addRun = (tagId: string, first: number, last: number) => {
    const key = `${first}/${last}`;
    const run = runs.get(key);
    if (run) run.tagIds.push(tagId);
    else runs.set(key, { first, last, tagIds: [tagId] });
  };
  let open: { tagId: string; first: number; last: number } | undefined;
  for (const w of windows) {
    if (open?.tagId === w.fullTagId && w.windowStartMs === open.last + windowMs) {
      open.last = w.windowStartMs;
      continue;
    }
    if (open) addRun(open.tagId, open.first, open.last);
    open = { tagId: w.fullTagId, first: w.windowStartMs, last: w.windowStartMs };
  }
  if (open) addRun(open.tagId, open.first, open.last);
  const out = new Map<string, AggregateValue>();
  for (const run of runs.values()) {
    const perTag = (run.last - run.first) / windowMs + 1;
    const values = await history.aggregate({
      tagIds: run.tagIds,
      startMs: Math.max(range.startMs, run.first),
      stopMs: Math.min(range.stopMs, run.last + windowMs - 1),
      maxSeq: to.mark,
      windowMs,
      fn: binding.aggregationFunction ?? 'Avg',
      limit: perTag * run.tagIds.length,
    });
    for (const value of values) out.set(windowKey(value.fullTagId, value.windowStartMs), value);
  }
  return out;
}

/**
 * Reads one segment in (tag, time, seq) order from just after `after`, at most `limit` values.
 * `step` is the smallest step of time between two keys of one tag: 1 ms for samples, the
 * window for windows (whose keys are window starts).
 */
async function readFromKey<T>(
  tags: readonly string[],
  segment: Segment,
  after: PageKey | undefined,
  limit: number,
  step: number,
  read: (
    range: HistoryRange & { afterSeq?: string; maxSeq: string; limit: number },
  ) => Promise<T[]>,
): Promise<T[]> {
  const out: T[] = [];
  const more = async (tagIds: readonly string[], startMs: number, afterSeq?: string) => {
    if (tagIds.length === 0 || startMs > segment.stopMs || out.length >= limit) return;
    const rows = await read({
      tagIds,
      startMs,
      stopMs: segment.stopMs,
      ...(afterSeq !== undefined ? { afterSeq } : {}),
      maxSeq: segment.maxSeq,
      limit: limit - out.length,
    });
    out.push(...rows);
  };
  let rest = tags;
  if (after !== undefined) {
    if (tags.includes(after.tagId)) {
      if (after.seq !== undefined && after.t >= segment.startMs && after.t <= segment.stopMs) {
        // The rest of the samples sharing the last answered one's time: those after its seq.
        const rows = await read({
          tagIds: [after.tagId],
          startMs: after.t,
          stopMs: after.t,
          afterSeq: maxSeq(after.seq, segment.afterSeq),
          maxSeq: segment.maxSeq,
          limit,
        });
        out.push(...rows);
      }
      await more([after.tagId], Math.max(segment.startMs, after.t + step), segment.afterSeq);
    }
    rest = tags.filter((tagId) => tagId > after.tagId);
  }
  await more(rest, segment.startMs, segment.afterSeq);
  return out;
}

function maxSeq(a: string, b: string | undefined): string {
  return b === undefined || BigInt(a) >= BigInt(b) ? a : b;
}

/**
 * Merges lists each ordered by key (and each cut at `limit` values), dropping a key seen
 * twice. A cut list may hide values beyond its last one, so the merge stops there: what it
 * returns is exactly the first values of the whole, and it holds at least `limit` values
 * whenever a list was cut.
 */
function mergeKnown<T>(lists: readonly T[][], limit: number, keyOf: (item: T) => PageKey): T[] {
  let bound: PageKey | undefined;
  for (const list of lists) {
    const last = list[list.length - 1];
    if (list.length < limit || last === undefined) continue;
    const key = keyOf(last);
    if (bound === undefined || compareKeys(key, bound) < 0) bound = key;
  }
  const all = lists
    .flat()
    .map((item) => ({ item, key: keyOf(item) }))
    .filter(({ key }) => bound === undefined || compareKeys(key, bound) <= 0)
    .sort((a, b) => compareKeys(a.key, b.key));
  const out: T[] = [];
  let previous: PageKey | undefined;
  for (const { item, key } of all) {
    if (previous !== undefined && compareKeys(previous, key) === 0) continue;
    out.push(item);
    previous = key;
  }
  return out;
}

function compareKeys(a: PageKey, b: PageKey): number {
  if (a.tagId !== b.tagId) return a.tagId < b.tagId ? -1 : 1;
  if (a.t !== b.t) return a.t - b.t;
  if (a.seq === undefined || b.seq === undefined) return 0;
  const x = BigInt(a.seq);
  const y = BigInt(b.seq);
  return x < y ? -1 : x > y ? 1 : 0;
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
