import test from 'ava';
import {
  storedEntries,
  storedSamplesOf,
  storedSamplesPerMessage,
  storedSamplesTopic,
} from '../../../src/publishers/mqtt/stored-samples.js';
import type { Sample } from '../../../src/tags/sample.js';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

test('samples are stored in messages of at most 500 and read back in order, timestamps as epoch ms', (t) => {
  const samples: Sample[] = Array.from({ length: storedSamplesPerMessage + 3 }, (_, i) => ({
    fullTagId: `Dev/T${i % 7}`,
    utcTimestamp: at(i),
    quality: i % 2 === 0 ? 'Good' : 'Stale',
    value: i % 3 === 0 ? i : i % 3 === 1 ? `s${i}` : i % 2 === 0,
  }));
  samples.push({ fullTagId: 'Dev/Off', utcTimestamp: at(9), quality: 'Unavailable' });
  const entries = storedEntries(samples);
  t.deepEqual(
    entries.map((entry) => entry.samples),
    [storedSamplesPerMessage, 4],
  );
  const back = entries.flatMap(
    (entry) => storedSamplesOf(entry.topic, Buffer.from(entry.payload)) ?? [],
  );
  t.deepEqual(
    back,
    samples.map((sample) => ({
      fullTagId: sample.fullTagId,
      timestamp: Date.parse(sample.utcTimestamp),
      quality: sample.quality,
      ...(sample.value !== undefined ? { value: sample.value } : {}),
    })),
  );
});

test('a message that is not stored samples is recognised', (t) => {
  t.is(storedSamplesOf('plant/gw1/Line1', Buffer.from('[]')), undefined);
  t.is(storedSamplesOf(storedSamplesTopic, Buffer.from('{')), undefined);
  t.is(storedSamplesOf(storedSamplesTopic, Buffer.from('[["a","x","Good",1]]')), undefined);
  t.is(storedSamplesOf(storedSamplesTopic, Buffer.from('[["a",1,"Fine",1]]')), undefined);
});
