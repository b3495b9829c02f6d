import test from 'ava';
import { historySketch, type SketchSample } from '../../src/console/web/history-sketch.js';

const at = (seconds: number) => new Date(seconds * 1000).toISOString();
const sample = (tag: string, seconds: number, value: unknown, quality = 'Good'): SketchSample => ({
  fullTagId: tag,
  utcTimestamp: at(seconds),
  quality,
  value,
});

test('the busiest numeric tag is drawn, not the first one the answer names', (t) => {
  const series = historySketch([
    sample('Line1/Valve', 1, 1),
    sample('Line1/Temperature', 3, 21.5),
    sample('Line1/Temperature', 2, 21),
    sample('Line1/Temperature', 4, 22),
  ]);
  t.deepEqual(series, { tag: 'Line1/Temperature', times: [2, 3, 4], values: [21, 21.5, 22] });
});

test('on a tie the first tag wins; fewer than two numeric values draw nothing', (t) => {
  t.is(
    historySketch([sample('A', 1, 1), sample('B', 1, 2), sample('B', 2, 3), sample('A', 2, 4)])
      ?.tag,
    'A',
  );
  t.is(historySketch([sample('A', 1, 1), sample('B', 1, 2)]), undefined);
  t.is(historySketch([sample('A', 1, true), sample('A', 2, 'on'), sample('A', 3, 5)]), undefined);
  t.is(historySketch([]), undefined);
});

test('a value that is not Good, or has no quality, is a gap; a sample without a usable time is left out', (t) => {
  const series = historySketch([
    sample('A', 1, 1),
    sample('A', 2, 2, 'Stale'),
    { fullTagId: 'A', utcTimestamp: 'not a time', quality: 'Good', value: 9 },
    sample('A', 3, 3),
    { fullTagId: 'A', utcTimestamp: at(4), value: 4 },
  ]);
  t.deepEqual(series, { tag: 'A', times: [1, 2, 3, 4], values: [1, null, 3, null] });
});
