/**
 * The time range of a trend and how it is read: the presets that follow now, fixed ranges from
 * and to an instant, zoom and pan, the query plan (raw samples for short ranges, one
 * aggregation window per pixel column or fewer for long ones) and the trend's state in the URL
 * (`#/trends?pen=A&pen=B&range=24h`, or `from=…&to=…` in ISO 8601 UTC), so a trend can be shared
 * and survives a reload. Pure: `now` and the plot width are passed in.
 */

/** A range that follows now. */
export interface RangePreset {
  /** In the URL: `range=<id>`. */
  id: string;
  label: string;
  seconds: number;
}

/** The ranges offered, each ending now and following it while the trend is open. */
export const rangePresets: readonly RangePreset[] = [
  { id: '5m', label: 'Last 5 minutes', seconds: 300 },
  { id: '15m', label: 'Last 15 minutes', seconds: 900 },
  { id: '1h', label: 'Last hour', seconds: 3_600 },
  { id: '8h', label: 'Last 8 hours', seconds: 28_800 },
  { id: '24h', label: 'Last 24 hours', seconds: 86_400 },
  { id: '7d', label: 'Last 7 days', seconds: 604_800 },
  { id: '30d', label: 'Last 30 days', seconds: 2_592_000 },
];

/** The preset a new trend opens with. */
export const defaultPreset = rangePresets[2] as RangePreset;

/** A trend's range: following now (live), or fixed between two instants (epoch ms). */
export type TrendRange =
  | { kind: 'live'; preset: RangePreset }
  | { kind: 'fixed'; fromMs: number; toMs: number };

/** Shortest range a zoom reaches: 1 second. */
export const minRangeMs = 1_000;
/** Longest fixed range: 366 days (a longer one is a typo, and beyond any retention). */
export const maxRangeMs = 366 * 86_400_000;

/** Most pens on one trend. */
export const maxPens = 8;

/** The range's start and stop, epoch ms. */
export function resolveRange(
  range: TrendRange,
  nowMs: number,
): { startMs: number; stopMs: number } {
  if (range.kind === 'fixed') return { startMs: range.fromMs, stopMs: range.toMs };
  return { startMs: nowMs - range.preset.seconds * 1000, stopMs: nowMs };
}

/** Ranges up to this long are read raw (every logged sample): 1 hour, seconds. */
export const rawUpToSeconds = 3_600;

/** Window lengths, seconds, that the server accepts as `<n>s|m|h|d` and that read well. */
const windowSteps: readonly number[] = [
  1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1_200, 1_800, 3_600, 7_200, 10_800, 21_600,
  43_200, 86_400, 172_800, 604_800,
];

/** How the history of a range is read. */
export type QueryPlan =
  | { mode: 'Raw' }
  | {
      mode: 'Aggregated';
      /** Window length, seconds. */
      windowSeconds: number;
      /** The window as the API takes it: `10s`, `5m`, `1h`, `1d`. */
      window: string;
    };

/**
 * The plan for a range on a plot `plotWidthPx` wide: raw up to {@link rawUpToSeconds} (unless
 * `forceAggregated`: the raw answer was too big), else aggregated with the shortest window of
 * at least one pixel column, so the answer holds at most one value per column and pen.
 */
export function planQuery(
  rangeSeconds: number,
  plotWidthPx: number,
  forceAggregated = false,
): QueryPlan {
  if (rangeSeconds <= rawUpToSeconds && !forceAggregated) return { mode: 'Raw' };
  const perPixel = rangeSeconds / Math.max(1, Math.floor(plotWidthPx));
  const windowSeconds =
    windowSteps.find((step) => step >= perPixel) ?? Math.ceil(perPixel / 86_400) * 86_400;
  return { mode: 'Aggregated', windowSeconds, window: windowText(windowSeconds) };
}

/** A window length as the API writes it: `30s`, `5m`, `2h`, `1d` (the largest whole unit). */
export function windowText(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400}d`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/** A window length for people: "1-minute", "15-second", "1-day". */
export function windowWords(seconds: number): string {
  const [count, unit] =
    seconds % 86_400 === 0
      ? [seconds / 86_400, 'day']
      : seconds % 3_600 === 0
        ? [seconds / 3_600, 'hour']
        : seconds % 60 === 0
          ? [seconds / 60, 'minute']
          : [seconds, 'second'];
  return `${count}-${unit}`;
}

/** Start of the aggregation window holding `epochSeconds` (windows aligned to the UTC epoch). */
export function windowStart(epochSeconds: number, windowSeconds: number): number {
  return Math.floor(epochSeconds / windowSeconds) * windowSeconds;
}

/**
 * The range zoomed by `factor` (< 1 in, > 1 out) around the point `at` (0 = left edge, 1 =
 * right edge), kept between {@link minRangeMs} and {@link maxRangeMs}.
 */
export function zoomRange(
  startMs: number,
  stopMs: number,
  at: number,
  factor: number,
): { startMs: number; stopMs: number } {
  const span = stopMs - startMs;
  const next = Math.min(maxRangeMs, Math.max(minRangeMs, span * factor));
  const anchor = startMs + span * Math.min(1, Math.max(0, at));
  const from = anchor - (anchor - startMs) * (next / span);
  return { startMs: Math.round(from), stopMs: Math.round(from + next) };
}

/** The range moved by `fraction` of its length (negative: back in time). */
export function panRange(
  startMs: number,
  stopMs: number,
  fraction: number,
): { startMs: number; stopMs: number } {
  const shift = Math.round((stopMs - startMs) * fraction);
  return { startMs: startMs + shift, stopMs: stopMs + shift };
}

/** What a trend shows, as kept in the URL. */
export interface TrendState {
  /** Tag paths, in legend order. */
  pens: string[];
  range: TrendRange;
}

/**
 * The trend the URL's query names: `pen` (repeated, at most {@link maxPens}, duplicates
 * dropped), and `range=<preset id>` or `from` and `to` (ISO 8601). Anything unreadable falls
 * back to the default preset, so an edited link still opens a trend.
 */
export function parseTrendQuery(query: URLSearchParams): TrendState {
  const pens: string[] = [];
  for (const pen of query.getAll('pen')) {
    const path = pen.trim();
    if (path && !pens.includes(path) && pens.length < maxPens) pens.push(path);
  }
  const fromMs = Date.parse(query.get('from') ?? '');
  const toMs = Date.parse(query.get('to') ?? '');
  if (
    Number.isFinite(fromMs) &&
    Number.isFinite(toMs) &&
    toMs - fromMs >= minRangeMs &&
    toMs - fromMs <= maxRangeMs
  ) {
    return { pens, range: { kind: 'fixed', fromMs, toMs } };
  }
  const preset = rangePresets.find((candidate) => candidate.id === query.get('range'));
  return { pens, range: { kind: 'live', preset: preset ?? defaultPreset } };
}

/** The URL query of a trend (without `?`), read back by {@link parseTrendQuery}. */
export function trendQuery(state: TrendState): string {
  const query = new URLSearchParams();
  for (const pen of state.pens) query.append('pen', pen);
  if (state.range.kind === 'live') query.set('range', state.range.preset.id);
  else {
    query.set('from', new Date(state.range.fromMs).toISOString());
    query.set('to', new Date(state.range.toMs).toISOString());
  }
  return query.toString().replace(/%2F/g, '/');
}

/**
 * An instant as a `datetime-local` input's value in the browser's zone (`2026-11-27T14:35`):
 * the browser shows it in the locale's format.
 */
export function toLocalInput(epochMs: number): string {
  const date = new Date(epochMs);
  const two = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}T${two(date.getHours())}:${two(date.getMinutes())}`;
}

/** A `datetime-local` value (the browser's zone) as epoch ms; undefined when empty or invalid. */
export function fromLocalInput(text: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second] = match.map(Number) as number[];
  const date = new Date(
    year as number,
    (month as number) - 1,
    day,
    hour,
    minute,
    Number.isNaN(second) ? 0 : second,
  );
  return Number.isNaN(date.getTime()) ? undefined : date.getTime();
}
