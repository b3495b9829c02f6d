// A zone with a daylight-saving gap (2026-03-29 02:00 → 03:00), for this worker only: Node reads
// TZ again when it changes.
process.env.TZ = 'Europe/Berlin';

import test from 'ava';
import { type PreciseDate, parseIsoDateTime } from '../../../drivers/opcua/iso-date-time.js';

const iso = (text: string): [string, number | undefined] => {
  const date = parseIsoDateTime(text);
  if (typeof date === 'string') throw new Error(`${text}: ${date}`);
  return [date.toISOString(), (date as PreciseDate).picoseconds];
};

test('each component is read exactly: offsets, fractions to 100 ns, seconds optional', (t) => {
  t.deepEqual(iso('2026-01-02T03:04:05Z'), ['2026-01-02T03:04:05.000Z', undefined]);
  t.deepEqual(iso('2026-01-02T03:04Z'), ['2026-01-02T03:04:00.000Z', undefined]);
  t.deepEqual(iso('2026-01-02T03:04:05.5+05:30'), ['2026-01-01T21:34:05.500Z', undefined]);
  t.deepEqual(iso('2026-01-02T03:04:05,000000100Z'), ['2026-01-02T03:04:05.000Z', 100_000]);
  t.deepEqual(iso('2026-01-02T03:04:05.9999999Z'), ['2026-01-02T03:04:05.999Z', 999_900_000]);
  t.deepEqual(iso('2024-02-29T00:00:00-00:00'), ['2024-02-29T00:00:00.000Z', undefined]);
});

test('the range is OPC UA’s: 1601-01-01T00:00:00Z to the end of 9999, in UTC', (t) => {
  t.deepEqual(iso('1601-01-01T00:00:00Z'), ['1601-01-01T00:00:00.000Z', undefined]);
  t.deepEqual(iso('1601-01-01T01:00:00+01:00'), ['1601-01-01T00:00:00.000Z', undefined]);
  t.deepEqual(iso('9999-12-31T23:59:59.9999999Z'), ['9999-12-31T23:59:59.999Z', 999_900_000]);
  for (const text of [
    '1600-12-31T23:59:59.9999999Z',
    '1601-01-01T00:59:59+01:00',
    '0099-01-01T00:00:00Z',
    '9999-12-31T23:59:59-00:01',
  ])
    t.regex(parseIsoDateTime(text) as string, /outside the range of an OPC UA DateTime/, text);
});

test('days and times that do not exist are refused, not rolled over', (t) => {
  for (const text of [
    '2024-02-30T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '2024-06-31T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-00-10T00:00:00Z',
    '2024-01-00T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T12:60:00Z',
    '2016-12-31T23:59:60Z',
  ])
    t.regex(parseIsoDateTime(text) as string, /not a date and time that exists/, text);
  t.regex(parseIsoDateTime('2024-01-01T00:00:00+24:00') as string, /offset/);
  t.regex(parseIsoDateTime('2024-01-01T00:00:00.00000001Z') as string, /finer than 100 ns/);
  for (const text of ['2024-01-01', '2024-1-01T00:00Z', '+002024-01-01T00:00:00Z', 'yesterday'])
    t.regex(parseIsoDateTime(text) as string, /must be an ISO 8601 date and time/, text);
});

test('without an offset the time is the gateway’s local time; a skipped local time is refused', (t) => {
  t.deepEqual(iso('2026-01-15T12:00:00'), ['2026-01-15T11:00:00.000Z', undefined]);
  t.deepEqual(iso('2026-07-15T12:00:00'), ['2026-07-15T10:00:00.000Z', undefined]);
  t.regex(
    parseIsoDateTime('2026-03-29T02:30:00') as string,
    /not a date and time that exists \(in the gateway’s time zone\)/,
  );
  t.regex(parseIsoDateTime('2026-02-30T12:00:00') as string, /not a date and time that exists/);
});
