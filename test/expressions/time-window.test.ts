/**
 * TimeWindow on its own: memory stays bounded whatever the record rate, the segment straddling
 * the window's start is prorated, and a clock that goes back clears the history.
 */
import test from 'ava';
import { resolutionParts, TimeWindow } from '../../src/expressions/time-window.js';

const t0 = Date.UTC(2026, 0, 1);

test('a window holds at most about 258 segments, whatever the record rate', (t) => {
  const window = new TimeWindow({ windowMs: 1000 });
  let largest = 0;
  for (let i = 0; i < 200_000; i++) {
    window.record(t0 + i / 10, i % 7, true); // 10 records per millisecond for 20 s
    largest = Math.max(largest, window.segmentCount);
  }
  t.true(largest <= resolutionParts + 2, `${largest} segments`);
  // The last second holds 10,000 samples; the sample at the window's open start has left it.
  const aggregate = window.aggregate(t0 + 19_999.9);
  t.true(Math.abs(aggregate.count - 10_000) <= 10_000 / resolutionParts + 10, `${aggregate.count}`);
});

test('the segment straddling the window start is prorated when it held several values', (t) => {
  const window = new TimeWindow({ windowMs: 256_000 }); // segments of 1 s
  window.record(t0, 0, true);
  window.record(t0 + 500, 10, true); // same segment: 0 for 0.5 s, then 10
  window.record(t0 + 1000, 10, true); // next segment
  window.record(t0 + 256_500, 10, true);
  // The window (500 ms, 256.5 s]: the first segment (area 0·500 + 10·500 over 1 s) is half in.
  const aggregate = window.aggregate(t0 + 256_500);
  t.is(aggregate.covered, 500 + 255_500);
  t.is(aggregate.area, 5000 * 0.5 + 10 * 255_500);
});

test('a clock that goes back clears the window', (t) => {
  const window = new TimeWindow({ windowMs: 60_000 });
  window.record(t0, 5, true);
  window.record(t0 + 10_000, 6, true);
  window.record(t0 + 5000, 7, true);
  const aggregate = window.aggregate(t0 + 5000);
  t.is(aggregate.count, 1);
  t.is(aggregate.min, 7);
  t.is(aggregate.changes, 0);
});

test('an empty window aggregates to nothing', (t) => {
  const aggregate = new TimeWindow({ windowMs: 1000 }).aggregate(t0);
  t.is(aggregate.count, 0);
  t.is(aggregate.covered, 0);
  t.is(aggregate.min, Number.POSITIVE_INFINITY);
});
