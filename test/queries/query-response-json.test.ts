import test from 'ava';
import { queryResponseJson } from '../../src/queries/query-response-json.js';
import type { Sample } from '../../src/tags/sample.js';

const a: Sample = {
  fullTagId: 'Line1/A',
  utcTimestamp: '2026-01-01T00:00:00.000Z',
  quality: 'Good',
  value: 'say "hi"\n',
  metadata: { unit: '°C' },
};
const b: Sample = {
  fullTagId: 'Line1/B',
  utcTimestamp: '2026-01-01T00:00:01.000Z',
  quality: 'Bad',
  reason: 'Timeout',
};

test('the text equals JSON.stringify of the answer, values as { ...sample, binding }', async (t) => {
  const values = [
    { binding: 0, samples: [a, b] },
    { binding: 1, samples: [] },
    { binding: 2, samples: [a] },
  ];
  const expected = {
    srcSetId: 'set-"1"',
    values: [
      { ...a, binding: 0 },
      { ...b, binding: 0 },
      { ...a, binding: 2 },
    ],
  };
  t.is(await queryResponseJson('set-"1"', values, { yieldEvery: 1 }), JSON.stringify(expected));
  t.is(
    await queryResponseJson('s', [], { truncated: true }),
    JSON.stringify({ srcSetId: 's', values: [], truncated: true }),
  );
});

test('a large answer gives the event loop a turn every yieldEvery values', async (t) => {
  const samples = Array.from({ length: 100 }, (_, i) => ({ ...a, fullTagId: `Line1/T${i}` }));
  const values = Array.from({ length: 1_000 }, (_, binding) => ({ binding, samples }));
  let turns = 0;
  let done = false;
  const count = () => {
    turns++;
    if (!done) setImmediate(count);
  };
  setImmediate(count);
  const text = await queryResponseJson('s', values, { yieldEvery: 10_000 });
  done = true;
  t.is((JSON.parse(text) as { values: unknown[] }).values.length, 100_000);
  t.true(turns >= 10, `${turns} turns`);
});
