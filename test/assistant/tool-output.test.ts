import test from 'ava';
import {
  boundOutput,
  maxToolOutputBytes,
  maxToolStringLength,
} from '../../src/assistant/tool-output.js';

test('a small answer passes unchanged', (t) => {
  const value = { samples: [{ fullTagId: 'A/B', quality: 'Good', value: 1 }] };
  const bounded = boundOutput(value);
  t.false(bounded.truncated);
  t.is(bounded.json, JSON.stringify(value));
});

test('rows are dropped from the longest array until the answer fits, and it says so', (t) => {
  const rows = Array.from({ length: 5000 }, (_, i) => ({ fullTagId: `Line/Tag${i}`, value: i }));
  const bounded = boundOutput({ tags: rows, note: 'x' });
  t.true(bounded.truncated);
  t.true(Buffer.byteLength(bounded.json) <= maxToolOutputBytes);
  const parsed = JSON.parse(bounded.json) as { tags: unknown[]; truncated: boolean };
  t.true(parsed.truncated);
  t.true(parsed.tags.length > 1000 && parsed.tags.length < 5000);
  t.deepEqual(parsed.tags[0], rows[0], 'the first rows are kept');
});

test('long strings are cut, multi-byte text counted in bytes', (t) => {
  const long = 'é'.repeat(maxToolStringLength + 10);
  const bounded = boundOutput({ value: long });
  t.true(bounded.truncated);
  const parsed = JSON.parse(bounded.json) as { value: string };
  t.is(parsed.value.length, maxToolStringLength + 1);
  t.true(parsed.value.endsWith('…'));
  const many = boundOutput({ values: Array.from({ length: 100 }, () => long) });
  t.true(Buffer.byteLength(many.json) <= maxToolOutputBytes);
});

test('an answer with nothing to drop is replaced by a note', (t) => {
  const wide = Object.fromEntries(
    Array.from({ length: 100 }, (_, i) => [`k${i}`, 'x'.repeat(4000)]),
  );
  const bounded = boundOutput(wide);
  t.true(bounded.truncated);
  t.like(JSON.parse(bounded.json), { truncated: true });
});
