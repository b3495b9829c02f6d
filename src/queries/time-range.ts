/**
 * Time formats of TagQuerySet bindings: range endpoints
 * (`now`, `now-15m`, ISO 8601 timestamps) and aggregation windows (`5m`, `PT5M`).
 * Pure parsing: `now` is always passed in, so relative ranges are testable and slide with
 * the caller's clock.
 */

/** One end of a time range, as parsed; resolve it against a `now` with {@link resolveTimePoint}. */
export type TimePoint =
  /** A fixed instant. */
  | { kind: 'absolute'; epochMs: number }
  /** `offsetMs` milliseconds before now (`now` itself is offset 0); slides as time passes. */
  | { kind: 'relative'; offsetMs: number };

/** Outcome of a parse: the value, or a sentence fit to show a client (it names no field). */
export type ParseResult<T> = { ok: true; value: T } | { ok: false; message: string };

/** Milliseconds per unit of the short forms `<n>s`, `<n>m`, `<n>h`, `<n>d`. */
const unitMs = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Furthest a relative endpoint may reach back: 100 years of 365 days, in milliseconds. */
export const maxRelativeOffsetMs = 100 * 365 * unitMs.d;

/** Longest aggregation window: 366 days, in milliseconds (a window longer than a year is a typo). */
export const maxAggregationWindowMs = 366 * unitMs.d;

/** Latest instant a Date can hold (ECMA-262: ±8.64e15 ms around the epoch). */
const maxDateMs = 8.64e15;

const relativePattern = /^now(?:-(\d{1,12})([smhd]))?$/;
// Date and time are mandatory, seconds too: a timestamp without them is more likely a mistake
// than a wish for "the start of the minute". The zone is mandatory: a local time is ambiguous.
const timestampPattern =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;
const shortWindowPattern = /^(\d{1,9})([smhd])$/;
// Years and months have no fixed length, so they are refused (see parseAggregationWindow).
const isoDurationPattern =
  /^P(?:(\d{1,9})Y)?(?:(\d{1,9})M)?(?:(\d{1,9})W)?(?:(\d{1,9})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9})(?:\.(\d{1,3}))?S)?)?$/;

const timePointHelp =
  'Must be `now`, `now-<n><s|m|h|d>` (e.g. `now-15m`) or an ISO 8601 timestamp with zone ' +
  '(e.g. `2026-01-31T08:00:00Z`).';
const windowHelp =
  'Must be `<n><s|m|h|d>` (e.g. `10s`, `5m`, `1h`, `1d`) or an ISO 8601 duration (e.g. `PT5M`).';

/**
 * Parses a range endpoint: `now`, `now-<n><s|m|h|d>`, or an ISO 8601 timestamp with seconds and
 * a zone (`Z` or `±HH:MM`; an offset is converted to UTC). A timestamp without zone is refused
 * because it would depend on the gateway's local time. Fractions finer than a millisecond are
 * truncated.
 */
export function parseTimePoint(text: string): ParseResult<TimePoint> {
  const relative = relativePattern.exec(text);
  if (relative) {
    const [, amount, unit] = relative;
    if (amount === undefined || unit === undefined) {
      return { ok: true, value: { kind: 'relative', offsetMs: 0 } };
    }
    const offsetMs = Number(amount) * unitMs[unit as keyof typeof unitMs];
    if (offsetMs > maxRelativeOffsetMs) {
      return { ok: false, message: 'Must not reach back more than 100 years.' };
    }
    return { ok: true, value: { kind: 'relative', offsetMs } };
  }
  const epochMs = parseTimestamp(text);
  if (epochMs === undefined) return { ok: false, message: timePointHelp };
  return { ok: true, value: { kind: 'absolute', epochMs } };
}

/** The instant a time point stands for, in epoch milliseconds, given `nowMs`. */
export function resolveTimePoint(point: TimePoint, nowMs: number): number {
  return point.kind === 'absolute' ? point.epochMs : nowMs - point.offsetMs;
}

/**
 * Parses an aggregation window into milliseconds: `<n><s|m|h|d>` with n ≥ 1, or an ISO 8601
 * duration of weeks, days, hours, minutes and seconds (`PT5M`, `P1D`, `PT1H30M`, `PT0.5S`).
 * Years and months are refused: their length varies, so windows would not line up.
 * The window must be at least 1 ms and at most {@link maxAggregationWindowMs}.
 */
export function parseAggregationWindow(text: string): ParseResult<number> {
  const short = shortWindowPattern.exec(text);
  let windowMs: number;
  if (short) {
    windowMs = Number(short[1]) * unitMs[short[2] as keyof typeof unitMs];
  } else {
    const iso = isoDurationPattern.exec(text);
    // `P` and `PT` alone match the pattern but name no duration.
    if (!iso || text === 'P' || text.endsWith('T')) return { ok: false, message: windowHelp };
    const [, years, months, weeks, days, hours, minutes, seconds, fraction] = iso;
    if (years !== undefined || months !== undefined) {
      return {
        ok: false,
        message: 'Must not use years or months (their length varies); use days or weeks.',
      };
    }
    windowMs =
      Number(weeks ?? 0) * 7 * unitMs.d +
      Number(days ?? 0) * unitMs.d +
      Number(hours ?? 0) * unitMs.h +
      Number(minutes ?? 0) * unitMs.m +
      Number(seconds ?? 0) * unitMs.s +
      Number((fraction ?? '').padEnd(3, '0'));
  }
  if (windowMs < 1) return { ok: false, message: 'Must be longer than zero.' };
  if (windowMs > maxAggregationWindowMs) {
    return { ok: false, message: 'Must not be longer than 366 days.' };
  }
  return { ok: true, value: windowMs };
}

/** Epoch ms of an ISO 8601 timestamp with zone, or undefined when it is malformed or impossible. */
function parseTimestamp(text: string): number | undefined {
  const match = timestampPattern.exec(text);
  if (!match) return undefined;
  const [y, mo, d, h, mi, s] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = match[7] ?? '';
  const zone = match[8] ?? 'Z';
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 59) return undefined;
  const ms = Number(fraction.slice(0, 3).padEnd(3, '0'));
  const wallClock = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  // Date.UTC rolls 2026-02-30 over to March 2 (and maps years below 100 to 19xx): compare back.
  const check = new Date(wallClock);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) {
    return undefined;
  }
  let offsetMs = 0;
  if (zone !== 'Z') {
    const offsetHours = Number(zone.slice(1, 3));
    const offsetMinutes = Number(zone.slice(4, 6));
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    offsetMs =
      (zone.startsWith('-') ? -1 : 1) * (offsetHours * unitMs.h + offsetMinutes * unitMs.m);
  }
  const epochMs = wallClock - offsetMs;
  return Math.abs(epochMs) > maxDateMs ? undefined : epochMs;
}
