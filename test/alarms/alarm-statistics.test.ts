import test from 'ava';
import type { AlarmTransition } from '../../src/alarms/alarm-state.js';
import { alarmStatistics } from '../../src/alarms/alarm-statistics.js';
import type { AlarmView } from '../../src/alarms/alarm-view.js';

const t0 = Date.UTC(2026, 0, 1);
const minute = 60_000;

function activated(
  name: string,
  time: number,
  to: AlarmTransition['to'] = 'Unacknowledged',
): AlarmTransition {
  return {
    time,
    name,
    event: 'Activated',
    from: 'Normal',
    to,
    active: true,
    acknowledged: false,
    priority: 'Medium',
    severity: 500,
    message: '',
  };
}

test('exactly 10 activations in 10 minutes is no flood; 11 is', (t) => {
  const ten = Array.from({ length: 10 }, (_, i) => activated(`A${i}`, t0 + i * minute));
  const calm = alarmStatistics(ten, [], t0, t0 + 60 * minute, t0 + 60 * minute);
  t.is(calm.floodWindows, 0);
  t.is(calm.windows, 6);
  t.is(calm.perTenMinutes.average, 10 / 6);
  t.is(calm.perTenMinutes.peak, 10);
  t.is(calm.perTenMinutes.peakWindowStart, new Date(t0).toISOString());
  const eleven = [...ten, activated('A10', t0 + 9 * minute + 59_999)];
  const flood = alarmStatistics(eleven, [], t0, t0 + 60 * minute, t0 + 60 * minute);
  t.is(flood.floodWindows, 1);
  t.is(flood.floodShare, 1 / 6);
});

test('activations while shelved, suppressed or out of service are not counted; shelve actions are', (t) => {
  const stats = alarmStatistics(
    [
      activated('A', t0, 'Shelved'),
      activated('A', t0 + 1, 'Suppressed'),
      activated('A', t0 + 2, 'OutOfService'),
      activated('B', t0 + 3),
      { ...activated('B', t0 + 4), event: 'Shelved', to: 'Shelved' },
    ],
    [],
    t0,
    t0 + minute,
    t0 + minute,
  );
  t.is(stats.activations, 1);
  t.deepEqual(stats.mostFrequent, [{ name: 'B', activations: 1 }]);
  t.is(stats.shelved.actions, 1);
});

test('chattering needs 3 activations within 60 s; stale alarms are active over 24 h now', (t) => {
  const stats = alarmStatistics(
    [
      activated('Chatty', t0),
      activated('Chatty', t0 + 30_000),
      activated('Chatty', t0 + 60_000),
      activated('Slow', t0),
      activated('Slow', t0 + 30_000),
      activated('Slow', t0 + 90_001),
    ],
    [
      { name: 'Old', active: true, activeSince: new Date(t0).toISOString() } as AlarmView,
      { name: 'Young', active: true, activeSince: new Date(t0 + 1).toISOString() } as AlarmView,
      { name: 'Gone', active: false } as AlarmView,
    ],
    t0,
    t0 + 10 * minute,
    t0 + 86_400_001,
  );
  t.deepEqual(stats.chattering, [{ name: 'Chatty', mostIn60s: 3 }]);
  t.deepEqual(stats.stale, [{ name: 'Old', activeSince: new Date(t0).toISOString() }]);
});

test('the counts of each 10-minute window, for the chart; none beyond 10,000 windows', (t) => {
  const stats = alarmStatistics(
    [activated('A', t0), activated('B', t0 + 1), activated('A', t0 + 25 * minute)],
    [],
    t0,
    t0 + 30 * minute,
    t0 + 30 * minute,
  );
  t.deepEqual(stats.perWindow, [2, 0, 1]);
  const long = alarmStatistics([], [], t0, t0 + 10_001 * 10 * minute, t0);
  t.is(long.windows, 10_001);
  t.is(long.perWindow, undefined);
  t.is(alarmStatistics([], [], t0, t0 + 10_000 * 10 * minute, t0).perWindow?.length, 10_000);
});
