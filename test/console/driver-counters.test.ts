import test from 'ava';
import {
  type CounterHistory,
  counterLabel,
  counterLines,
  recordPoll,
} from '../../src/console/web/driver-counters.js';

test('counter keys read as words with a rate unit; levels have none', (t) => {
  t.deepEqual(counterLabel('requests'), { label: 'Requests', rateUnit: 'requests/s' });
  t.deepEqual(counterLabel('framesReceived'), { label: 'Frames received', rateUnit: 'frames/s' });
  t.deepEqual(counterLabel('connectsFailed'), { label: 'Failed connects', rateUnit: 'connects/s' });
  t.deepEqual(counterLabel('monitoredItems'), { label: 'Monitored items' });
  // The same key means another thing per driver type.
  t.is(counterLabel('malformed', 'modbus').label, 'Malformed answers');
  t.is(counterLabel('malformed', 'can').label, 'Malformed records');
  t.deepEqual(counterLabel('retainedUnknownAge', 'mqtt'), {
    label: 'Retained messages of unknown age (Stale)',
    rateUnit: 'messages/s',
  });
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

test('each poll is recorded: a total that stopped moving reads 0/s, not its old rate', (t) => {
  const history = new Map<string, CounterHistory>();
  const text = (name: string) => {
    const known = history.get(name);
    return known ? counterLines(known.last, known.before, 'en-US')[0]?.text : undefined;
  };
  recordPoll(history, new Map([['Press', { requests: 0 }]]), 0);
  t.is(text('Press'), '—');
  recordPoll(history, new Map([['Press', { requests: 20 }]]), 2_000);
  t.is(text('Press'), '10 requests/s');
  // The device stopped answering and the driver sends nothing: the same total again.
  recordPoll(history, new Map([['Press', { requests: 20 }]]), 4_000);
  t.is(text('Press'), '0 requests/s');
  recordPoll(history, new Map(), 6_000);
  t.false(history.has('Press'), 'a driver no longer listed is forgotten');
});
