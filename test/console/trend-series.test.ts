import test from 'ava';
import type { Sample } from '../../src/console/web/api-types.js';
import {
  addLiveSample,
  alignSeries,
  badSpans,
  emptySeries,
  isolatedIndices,
  pointAt,
  seriesFromSamples,
  trimBefore,
  valueRange,
} from '../../src/console/web/trend-series.js';

const at = (seconds: number) => new Date(seconds * 1000).toISOString();
const sample = (
  seconds: number,
  value: Sample['value'],
  quality: Sample['quality'] = 'Good',
): Sample => ({
  fullTagId: 'A/x',
  utcTimestamp: at(seconds),
  quality,
  ...(value === undefined ? {} : { value }),
});

test('points that are not Good have no value: the line has a gap there', (t) => {
  const series = seriesFromSamples([
    sample(30, 3),
    sample(10, 1),
    sample(20, 2.5, 'Stale'),
    sample(40, undefined, 'Bad'),
    sample(50, true),
  ]);
  t.deepEqual(series.times, [10, 20, 30, 40, 50]);
  t.deepEqual(series.values, [1, null, 3, null, 1]);
  t.deepEqual(series.qualities, ['Good', 'Stale', 'Good', 'Bad', 'Good']);
  t.deepEqual(badSpans(series, 60), [
    { from: 20, to: 30, quality: 'Stale' },
    { from: 40, to: 50, quality: 'Bad' },
  ]);
  const trailing = seriesFromSamples([
    sample(10, 1),
    sample(20, undefined, 'Unavailable'),
    sample(25, undefined, 'Unavailable'),
  ]);
  t.deepEqual(badSpans(trailing, 90), [{ from: 20, to: 90, quality: 'Unavailable' }]);
});

test('pens align on one time axis: missing points are undefined (spanned), gaps stay null', (t) => {
  const a = seriesFromSamples([sample(1, 10), sample(3, 30), sample(4, undefined, 'Bad')]);
  const b = seriesFromSamples([sample(2, 0.5), sample(3, 0.7), sample(3, 0.8)]);
  t.deepEqual(alignSeries([a, b]), [
    [1, 2, 3, 4],
    [10, undefined, 30, null],
    [undefined, 0.5, 0.8, undefined],
  ]);
  t.deepEqual(alignSeries([emptySeries()]), [[], []]);
});

test('3 pens × 10,000 points align quickly', (t) => {
  const pens = [0, 1, 2].map((offset) => {
    const series = emptySeries();
    for (let i = 0; i < 10_000; i += 1) {
      series.times.push(i * 3 + offset);
      series.values.push(i % 97 === 0 ? null : Math.sin(i / 50));
      series.qualities.push(i % 97 === 0 ? 'Bad' : 'Good');
    }
    return series;
  });
  const started = performance.now();
  const aligned = alignSeries(pens);
  const ms = performance.now() - started;
  t.is(aligned[0].length, 30_000);
  t.log(`aligned in ${ms.toFixed(1)} ms`);
  // Generous for a busy CI machine; a frame is 16 ms, and this runs once per frame at most.
  t.true(ms < 200);
});

test('a lone value between gaps is drawn as a dot', (t) => {
  t.deepEqual(isolatedIndices([null, 5, null, 1, 2, undefined, null]), [1]);
  t.deepEqual(isolatedIndices([7]), [0]);
  t.deepEqual(isolatedIndices([7, undefined, 8]), []);
  t.deepEqual(isolatedIndices([1, 2, null, undefined, 3]), [4]);
});

test('live raw samples append in time order; older ones are ignored', (t) => {
  const series = seriesFromSamples([sample(10, 1)]);
  t.false(addLiveSample(series, sample(5, 9), { mode: 'Raw' }, 'number'));
  t.true(addLiveSample(series, sample(11, 2), { mode: 'Raw' }, 'number'));
  t.true(addLiveSample(series, sample(12, undefined, 'Unavailable'), { mode: 'Raw' }, 'number'));
  t.true(addLiveSample(series, sample(12, 4), { mode: 'Raw' }, 'number'));
  t.deepEqual(series.values, [1, 2, 4]);
});

test('live samples of an aggregated trend fold into windows as the server would', (t) => {
  const plan = { mode: 'Aggregated', windowSeconds: 60, window: '1m' } as const;
  // The history answered the window at 60.
  const series = seriesFromSamples([sample(0, 1), sample(60, 5)]);
  t.false(addLiveSample(series, sample(90, 100), plan, 'number'), 'a window the server answered');
  t.true(addLiveSample(series, sample(121, 2), plan, 'number'));
  t.true(addLiveSample(series, sample(130, undefined, 'Bad'), plan, 'number'));
  t.true(addLiveSample(series, sample(150, 4), plan, 'number'));
  t.deepEqual(series.times, [0, 60, 120]);
  t.deepEqual(series.values, [1, 5, 3]);
  // A window of only Bad samples has no value.
  t.true(addLiveSample(series, sample(185, undefined, 'Bad'), plan, 'number'));
  t.deepEqual(series.values.at(-1), null);
  t.is(series.qualities.at(-1), 'Bad');
  // Booleans: On if On at any time in the window.
  const pump = emptySeries();
  addLiveSample(pump, sample(0, false), plan, 'boolean');
  addLiveSample(pump, sample(10, true), plan, 'boolean');
  addLiveSample(pump, sample(20, false), plan, 'boolean');
  t.deepEqual(pump.values, [1]);
});

test('trimming keeps one point before the start', (t) => {
  const series = seriesFromSamples([1, 2, 3, 4, 5].map((s) => sample(s, s)));
  trimBefore(series, 3.5);
  t.deepEqual(series.times, [3, 4, 5]);
  trimBefore(series, 0);
  t.deepEqual(series.times, [3, 4, 5]);
});

test('a single value or a flat line sits mid-plot; no data has a range too', (t) => {
  t.deepEqual(valueRange(50, 50), [45, 55]);
  t.deepEqual(valueRange(-20, -20), [-22, -18]);
  t.deepEqual(valueRange(0, 0), [-1, 1]);
  t.deepEqual(valueRange(null, null), [0, 1]);
  t.deepEqual(valueRange(0, 100), [-5, 105]);
});

test('the point under the cursor is the last one at or before it', (t) => {
  const series = seriesFromSamples([sample(10, 1), sample(20, undefined, 'Bad'), sample(30, 3)]);
  t.is(pointAt(series, 5), undefined);
  t.deepEqual(pointAt(series, 10), { time: 10, value: 1, quality: 'Good' });
  t.deepEqual(pointAt(series, 25), { time: 20, value: null, quality: 'Bad' });
  t.deepEqual(pointAt(series, 99)?.value, 3);
});

test('a lost stream breaks a live line: the values before and after are not joined', (t) => {
  // What the Trends page appends for each pen when Tags/Stream drops (it knows nothing from then).
  const series = seriesFromSamples([sample(10, 1), sample(11, 2)]);
  addLiveSample(
    series,
    { fullTagId: 'A/x', utcTimestamp: at(12), quality: 'Unavailable' },
    { mode: 'Raw' },
    'number',
  );
  addLiveSample(series, sample(40, 3), { mode: 'Raw' }, 'number');
  t.deepEqual(alignSeries([series])[1], [1, 2, null, 3]);
  t.deepEqual(badSpans(series, 50), [{ from: 12, to: 40, quality: 'Unavailable' }]);
});
