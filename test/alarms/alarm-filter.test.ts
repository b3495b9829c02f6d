import test from 'ava';
import {
  alarmFilterSchema,
  alarmFilterTakes,
  inArea,
  transitionDocument,
} from '../../src/alarms/alarm-filter.js';
import type { AlarmTransition } from '../../src/alarms/alarm-state.js';

test('areas match whole segments as a prefix', (t) => {
  t.true(inArea('Hall2', 'Hall2'));
  t.true(inArea('Hall2/Ovens', 'Hall2'));
  t.true(inArea('Hall2/Ovens/Oven1', 'Hall2/Ovens'));
  t.false(inArea('Hall20', 'Hall2'));
  t.false(inArea('Hall2', 'Hall2/Ovens'));
  t.false(inArea(undefined, 'Hall2'));
});

test('the filter: areas (any of them), minPriority and higher; an empty filter takes all', (t) => {
  const filter = alarmFilterSchema.parse({ areas: ['Hall2', 'Yard'], minPriority: 'High' });
  t.true(alarmFilterTakes(filter, { area: 'Yard/Gate', priority: 'Urgent' }));
  t.true(alarmFilterTakes(filter, { area: 'Hall2/Ovens', priority: 'High' }));
  t.false(alarmFilterTakes(filter, { area: 'Hall2/Ovens', priority: 'Medium' }));
  t.false(alarmFilterTakes(filter, { area: 'Hall3', priority: 'Urgent' }));
  t.false(alarmFilterTakes(filter, { priority: 'Urgent' }));
  const all = alarmFilterSchema.parse({});
  t.true(alarmFilterTakes(all, { priority: 'Low' }));
  t.false(alarmFilterSchema.safeParse({ areas: ['Hall2/'] }).success);
  t.false(alarmFilterSchema.safeParse({ minPriority: 'Severe' }).success);
  t.false(alarmFilterSchema.safeParse({ area: 'Hall2' }).success);
});

test('transitionDocument is the journal record with an ISO time; absent fields stay absent', (t) => {
  const transition: AlarmTransition & { seq?: number } = {
    seq: 7,
    time: Date.UTC(2026, 0, 1, 6, 30),
    name: 'OvenHot',
    event: 'Activated',
    from: 'Normal',
    to: 'Unacknowledged',
    active: true,
    acknowledged: false,
    value: 65,
    limit: 64,
    priority: 'High',
    severity: 750,
    message: 'Oven hot',
  };
  t.deepEqual(transitionDocument(transition), {
    seq: 7,
    time: transition.time,
    utcTimestamp: '2026-01-01T06:30:00.000Z',
    name: 'OvenHot',
    priority: 'High',
    severity: 750,
    event: 'Activated',
    from: 'Normal',
    to: 'Unacknowledged',
    active: true,
    acknowledged: false,
    value: 65,
    limit: 64,
    message: 'Oven hot',
  });
});
