import test from 'ava';
import { counterLabel, counterLines } from '../../src/console/web/driver-counters.js';

test('counter keys read as words with a rate unit; levels have none', (t) => {
  t.deepEqual(counterLabel('requests'), { label: 'Requests', rateUnit: 'requests/s' });
  t.deepEqual(counterLabel('framesReceived'), { label: 'Frames received', rateUnit: 'frames/s' });
  t.deepEqual(counterLabel('connectsFailed'), { label: 'Failed connects', rateUnit: 'connects/s' });
  t.deepEqual(counterLabel('monitoredItems'), { label: 'Monitored items' });
});

test('rates are the change per second between two polls; a restart (a smaller total) shows —', (t) => {
  const before = { at: 10_000, counters: { requests: 100, timeouts: 5, subscriptions: 2 } };
  const now = { at: 12_000, counters: { requests: 125, timeouts: 2, subscriptions: 3 } };
  t.deepEqual(
    counterLines(now, before, 'en-US').map((line) => [line.label, line.text, line.total]),
    [
      ['Requests', '12.5 requests/s', 125],
      ['Timeouts', '—', 2],
      ['Subscriptions', '3', 3],
    ],
  );
  // The first poll has nothing to compare with.
  t.is(counterLines(now, undefined, 'en-US')[0]?.text, '—');
  t.is(counterLines(now, before, 'de-DE')[0]?.text, '12,5 requests/s');
});
