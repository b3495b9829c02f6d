import test from 'ava';
import {
  maxAggregationWindowMs,
  maxRelativeOffsetMs,
  parseAggregationWindow,
  parseTimePoint,
  resolveTimePoint,
} from '../../src/queries/time-range.js';

const now = Date.UTC(2026, 2, 15, 12, 0, 0);
const timePointHelp =
  'Must be `now`, `now-<n><s|m|h|d>` (e.g. `now-15m`) or an ISO 8601 timestamp with zone ' +
  '(e.g. `2026-01-31T08:00:00Z`).';
const windowHelp =
  'Must be `<n><s|m|h|d>` (e.g. `10s`, `5m`, `1h`, `1d`) or an ISO 8601 duration (e.g. `PT5M`).';

/** Parses and resolves against `now`, failing the test on a parse error. */
function resolve(text: string): number {
  const result = parseTimePoint(text);
  if (!result.ok) throw new Error(`${text}: ${result.message}`);
  return resolveTimePoint(result.value, now);
}

test('now is the given now, and slides with it', (t) => {
  t.deepEqual(parseTimePoint('now'), { ok: true, value: { kind: 'relative', offsetMs: 0 } });
  t.is(resolve('now'), now);
  const point = parseTimePoint('now-1h');
  if (!point.ok) return t.fail();
  t.is(resolveTimePoint(point.value, now + 60_000), now + 60_000 - 3_600_000);
});

test('now-<n><unit> reaches back n seconds, minutes, hours or days from the given now', (t) => {
  t.is(resolve('now-15m'), Date.UTC(2026, 2, 15, 11, 45, 0));
  t.is(resolve('now-30s'), now - 30_000);
  t.is(resolve('now-2h'), Date.UTC(2026, 2, 15, 10, 0, 0));
  t.is(resolve('now-7d'), Date.UTC(2026, 2, 8, 12, 0, 0));
  t.is(resolve('now-0m'), now);
  t.deepEqual(parseTimePoint('now-15m'), {
    ok: true,
    value: { kind: 'relative', offsetMs: 900_000 },
  });
});

test('a relative endpoint may reach back 100 years but no further', (t) => {
  t.deepEqual(parseTimePoint('now-36500d'), {
    ok: true,
    value: { kind: 'relative', offsetMs: maxRelativeOffsetMs },
  });
  t.deepEqual(parseTimePoint('now-36501d'), {
    ok: false,
    message: 'Must not reach back more than 100 years.',
  });
});

test('ISO 8601 UTC timestamps are absolute, with or without fractions', (t) => {
  t.deepEqual(parseTimePoint('2026-01-31T08:00:00Z'), {
    ok: true,
    value: { kind: 'absolute', epochMs: Date.UTC(2026, 0, 31, 8, 0, 0) },
  });
  t.is(resolve('2026-01-31T08:00:00.123Z'), Date.UTC(2026, 0, 31, 8, 0, 0, 123));
  t.is(resolve('2026-01-31T08:00:00.5Z'), Date.UTC(2026, 0, 31, 8, 0, 0, 500));
  // Finer than a millisecond is truncated, not rounded.
  t.is(resolve('2026-01-31T08:00:00.123999999Z'), Date.UTC(2026, 0, 31, 8, 0, 0, 123));
  t.is(resolve('2024-02-29T23:59:59Z'), Date.UTC(2024, 1, 29, 23, 59, 59));
  // An absolute endpoint does not move with now.
  const point = parseTimePoint('2026-01-31T08:00:00Z');
  if (!point.ok) return t.fail();
  t.is(resolveTimePoint(point.value, 0), Date.UTC(2026, 0, 31, 8, 0, 0));
});

test('an explicit offset is converted to UTC', (t) => {
  t.is(resolve('2026-01-31T09:00:00+01:00'), Date.UTC(2026, 0, 31, 8, 0, 0));
  t.is(resolve('2026-01-31T03:30:00-04:30'), Date.UTC(2026, 0, 31, 8, 0, 0));
  t.is(resolve('2026-01-31T08:00:00+00:00'), Date.UTC(2026, 0, 31, 8, 0, 0));
});

test('malformed, zone-less and impossible endpoints are refused with the accepted formats', (t) => {
  for (const text of [
    '',
    'NOW',
    'now-',
    'now-15',
    'now-m',
    'now+15m',
    'now-15M',
    'now-1.5h',
    'now - 15m',
    'now-15min',
    'now-1w',
    '2026-01-31',
    '2026-01-31T08:00Z',
    '2026-01-31T08:00:00',
    '2026-01-31 08:00:00Z',
    '2026-1-31T08:00:00Z',
    '2026-02-30T08:00:00Z',
    '2025-02-29T08:00:00Z',
    '2026-13-01T08:00:00Z',
    '2026-00-10T08:00:00Z',
    '2026-01-00T08:00:00Z',
    '2026-01-31T24:00:00Z',
    '2026-01-31T08:60:00Z',
    '2026-01-31T08:00:60Z',
    '2026-01-31T08:00:00.Z',
    '2026-01-31T08:00:00.1234567890Z',
    '2026-01-31T08:00:00+24:00',
    '2026-01-31T08:00:00+01:60',
    '2026-01-31T08:00:00+0100',
    '0050-01-01T00:00:00Z',
    '1767225600000',
  ]) {
    t.deepEqual(parseTimePoint(text), { ok: false, message: timePointHelp }, text);
  }
});

test('short aggregation windows: <n> seconds, minutes, hours or days', (t) => {
  t.deepEqual(parseAggregationWindow('10s'), { ok: true, value: 10_000 });
  t.deepEqual(parseAggregationWindow('5m'), { ok: true, value: 300_000 });
  t.deepEqual(parseAggregationWindow('1h'), { ok: true, value: 3_600_000 });
  t.deepEqual(parseAggregationWindow('1d'), { ok: true, value: 86_400_000 });
  t.deepEqual(parseAggregationWindow('90m'), { ok: true, value: 5_400_000 });
});

test('ISO 8601 duration windows of weeks, days, hours, minutes and seconds', (t) => {
  t.deepEqual(parseAggregationWindow('PT5M'), { ok: true, value: 300_000 });
  t.deepEqual(parseAggregationWindow('PT1H30M'), { ok: true, value: 5_400_000 });
  t.deepEqual(parseAggregationWindow('P1D'), { ok: true, value: 86_400_000 });
  t.deepEqual(parseAggregationWindow('P1DT12H'), { ok: true, value: 129_600_000 });
  t.deepEqual(parseAggregationWindow('P1W'), { ok: true, value: 604_800_000 });
  t.deepEqual(parseAggregationWindow('PT10S'), { ok: true, value: 10_000 });
  t.deepEqual(parseAggregationWindow('PT0.5S'), { ok: true, value: 500 });
  t.deepEqual(parseAggregationWindow('PT1.25S'), { ok: true, value: 1_250 });
  t.deepEqual(parseAggregationWindow('PT0.001S'), { ok: true, value: 1 });
});

test('years and months are refused because their length varies', (t) => {
  const refusal = {
    ok: false,
    message: 'Must not use years or months (their length varies); use days or weeks.',
  };
  t.deepEqual(parseAggregationWindow('P1M'), refusal);
  t.deepEqual(parseAggregationWindow('P1Y'), refusal);
  t.deepEqual(parseAggregationWindow('P1Y2M3D'), refusal);
  // M after T is minutes, not months.
  t.deepEqual(parseAggregationWindow('PT1M'), { ok: true, value: 60_000 });
});

test('zero and over-long windows are refused', (t) => {
  const zero = { ok: false, message: 'Must be longer than zero.' };
  t.deepEqual(parseAggregationWindow('0s'), zero);
  t.deepEqual(parseAggregationWindow('PT0S'), zero);
  t.deepEqual(parseAggregationWindow('P0D'), zero);
  t.deepEqual(parseAggregationWindow('366d'), { ok: true, value: maxAggregationWindowMs });
  t.deepEqual(parseAggregationWindow('367d'), {
    ok: false,
    message: 'Must not be longer than 366 days.',
  });
  t.deepEqual(parseAggregationWindow('P53W'), {
    ok: false,
    message: 'Must not be longer than 366 days.',
  });
});

test('malformed windows are refused with the accepted formats', (t) => {
  for (const text of [
    '',
    '10',
    's',
    '5 m',
    '5M',
    '5min',
    '1.5h',
    '-5m',
    '1w',
    'P',
    'PT',
    'P1DT',
    'T5M',
    'PT5',
    'pt5m',
    'PT5H5H',
    'PT0.0001S',
    'PT0.5M',
    'P1H',
    'PT5M1H',
  ]) {
    t.deepEqual(parseAggregationWindow(text), { ok: false, message: windowHelp }, text);
  }
});
