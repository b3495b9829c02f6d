import test from 'ava';
import { rangeText, timeAxisLabels, timeFormats } from '../../src/console/web/time-axis.js';

// 27 November 2026, 23:30 in Berlin (22:30 UTC), epoch seconds.
const lateEvening = Date.UTC(2026, 10, 27, 22, 30) / 1000;
const halfHours = [0, 1, 2, 3].map((step) => lateEvening + step * 1_800);
const german = timeFormats('de-DE', 'Europe/Berlin');
const american = timeFormats('en-US', 'Europe/Berlin');
// ICU versions differ in the space before AM/PM (some write a narrow no-break space).
const plain = (labels: string[]) => labels.map((label) => label.replace(/[\u202f\u00a0]/g, ' '));

test('ticks hours apart: German 24-hour times, the day under the first tick and where it changes', (t) => {
  t.deepEqual(timeAxisLabels(halfHours, 1_800, german), [
    '23:30\n27.11.',
    '00:00\n28.11.',
    '00:30',
    '01:00',
  ]);
});

test('the same ticks in American English: 12-hour times, month/day', (t) => {
  t.deepEqual(plain(timeAxisLabels(halfHours, 1_800, american)), [
    '11:30 PM\n11/27',
    '12:00 AM\n11/28',
    '12:30 AM',
    '1:00 AM',
  ]);
});

test('ticks seconds apart show seconds; days apart the day; months apart month and year', (t) => {
  t.deepEqual(timeAxisLabels(halfHours.slice(0, 2), 20, german), [
    '23:30:00\n27.11.',
    '00:00:00\n28.11.',
  ]);
  const days = [0, 1, 2].map((step) => lateEvening + step * 86_400);
  t.deepEqual(timeAxisLabels(days, 86_400, german), ['27.11.', '28.11.', '29.11.']);
  t.deepEqual(timeAxisLabels(days, 86_400, american), ['11/27', '11/28', '11/29']);
  t.deepEqual(timeAxisLabels([lateEvening], 40 * 86_400, american), ['Nov 2026']);
  t.deepEqual(timeAxisLabels([lateEvening], 400 * 86_400, german), ['2026']);
});

test('the range above the chart, in the locale', (t) => {
  const start = lateEvening * 1000;
  const stop = start + 86_400_000;
  t.is(rangeText(start, stop, german), '27.11.2026, 23:30 – 28.11.2026, 23:30');
  t.is(
    plain([rangeText(start, stop, american)])[0],
    'Nov 27, 2026, 11:30 PM – Nov 28, 2026, 11:30 PM',
  );
});
