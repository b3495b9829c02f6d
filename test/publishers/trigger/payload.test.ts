import test from 'ava';
import {
  buildPayload,
  isPublishable,
  toPayloadEntry,
} from '../../../src/publishers/trigger/payload.js';
import type { Sample } from '../../../src/tags/sample.js';

const at = '2026-01-01T08:00:00.000Z';

const full: Omit<Sample, 'quality'> = {
  fullTagId: 'Line1/Oven/Temp',
  utcTimestamp: at,
  value: 181.5,
  reason: 'NoUpdate',
  message: 'No update for 5000 ms.',
  metadata: { unit: '°C', description: 'Oven temperature', source: 'sim:1' },
};

test('a Good entry carries fullTagId, utcTimestamp, quality and value, nothing else', (t) => {
  const entry = toPayloadEntry({ ...full, quality: 'Good' });
  t.deepEqual(entry, {
    fullTagId: 'Line1/Oven/Temp',
    utcTimestamp: at,
    quality: 'Good',
    value: 181.5,
  });
  t.deepEqual(Object.keys(entry ?? {}), ['fullTagId', 'utcTimestamp', 'quality', 'value']);
});

test('a Stale entry keeps its last value; reason, message and metadata are not sent', (t) => {
  t.is(
    JSON.stringify(toPayloadEntry({ ...full, quality: 'Stale' })),
    `{"fullTagId":"Line1/Oven/Temp","utcTimestamp":"${at}","quality":"Stale","value":181.5}`,
  );
});

test('Unavailable and Bad entries carry the quality and no value, even when the sample has one', (t) => {
  for (const quality of ['Unavailable', 'Bad'] as const) {
    const entry = toPayloadEntry({ ...full, quality });
    t.deepEqual(entry, { fullTagId: 'Line1/Oven/Temp', utcTimestamp: at, quality });
    t.false('value' in (entry ?? {}), quality);
    const { value: _ignored, ...withoutValue } = full;
    t.deepEqual(toPayloadEntry({ ...withoutValue, quality }), entry);
  }
});

test('Good and Stale tags not holding a finite number are left out entirely', (t) => {
  const odd: Sample['value'][] = [
    'Running',
    true,
    false,
    Number.NaN,
    Infinity,
    -Infinity,
    undefined,
  ];
  for (const quality of ['Good', 'Stale'] as const) {
    for (const value of odd) {
      const sample: Sample = { fullTagId: 'A/B', utcTimestamp: at, quality };
      if (value !== undefined) sample.value = value;
      t.is(toPayloadEntry(sample), undefined, `${quality} ${String(value)}`);
      t.false(isPublishable(sample), `${quality} ${String(value)}`);
    }
  }
  // Zero, negative zero and negatives are finite numbers.
  for (const value of [0, -0, -12.5, Number.MAX_VALUE]) {
    t.true(isPublishable({ fullTagId: 'A/B', utcTimestamp: at, quality: 'Good', value }));
  }
});

test('buildPayload keeps sample order and drops only what is left out', (t) => {
  const samples: Sample[] = [
    { fullTagId: 'A/1', utcTimestamp: at, quality: 'Good', value: 1 },
    { fullTagId: 'A/2', utcTimestamp: at, quality: 'Good', value: 'text' },
    { fullTagId: 'A/3', utcTimestamp: at, quality: 'Bad', reason: 'DecodeError' },
    { fullTagId: 'A/4', utcTimestamp: at, quality: 'Stale', value: 4 },
    { fullTagId: 'A/5', utcTimestamp: at, quality: 'Unavailable', reason: 'NeverRead' },
    { fullTagId: 'A/6', utcTimestamp: at, quality: 'Good', value: Number.NaN },
  ];
  t.deepEqual(buildPayload(samples), [
    { fullTagId: 'A/1', utcTimestamp: at, quality: 'Good', value: 1 },
    { fullTagId: 'A/3', utcTimestamp: at, quality: 'Bad' },
    { fullTagId: 'A/4', utcTimestamp: at, quality: 'Stale', value: 4 },
    { fullTagId: 'A/5', utcTimestamp: at, quality: 'Unavailable' },
  ]);
  t.deepEqual(buildPayload([]), []);
});
