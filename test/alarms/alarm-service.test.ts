import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { AlarmJournal } from '../../src/alarms/alarm-journal.js';
import { type AlarmDefinitionInput, alarmDefinitionSchema } from '../../src/alarms/alarm-schema.js';
import { AlarmService } from '../../src/alarms/alarm-service.js';
import type { AlarmTransition } from '../../src/alarms/alarm-state.js';
import type { Quality, Sample, TagValue } from '../../src/tags/sample.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { tempDir } from '../helpers/temp-dir.js';

const temp = 'Line/Temp';

function definitions(...inputs: AlarmDefinitionInput[]) {
  return inputs.map((input) => alarmDefinitionSchema.parse(input));
}

const hot: AlarmDefinitionInput = {
  name: 'Hot',
  source: temp,
  condition: 'High',
  limit: 90,
  priority: 'High',
  area: 'Hall2/Ovens',
};

async function setup(
  t: ExecutionContext,
  inputs: AlarmDefinitionInput[] = [hot],
  shared?: { dir: string; clock: ManualClock },
) {
  const dir = shared?.dir ?? (await tempDir(t));
  const clock = shared?.clock ?? new ManualClock();
  const store = new TagStore({ clock });
  store.define([{ fullTagId: temp }]);
  const logs = captureLogs();
  const file = join(dir, 'alarms.db');
  const journal = new AlarmJournal({ file });
  const service = new AlarmService({
    store,
    clock,
    logger: logs.logger,
    journal,
    definitions: definitions(...inputs),
  });
  const heard: AlarmTransition[] = [];
  service.subscribe((batch) => heard.push(...batch));
  await service.start();
  t.teardown(() => service.stop());
  const write = (path: string, value: TagValue | undefined, quality: Quality = 'Good') => {
    const sample: Sample = {
      fullTagId: path,
      utcTimestamp: new Date(clock.now()).toISOString(),
      quality,
      ...(value !== undefined ? { value } : {}),
    };
    store.write([sample]);
  };
  /** The journal as another connection reads it: what is on disk. */
  const onDisk = () => {
    const reader = new AlarmJournal({ file });
    reader.open();
    try {
      return {
        entries: reader.query({
          fromMs: 0,
          toMs: Number.MAX_SAFE_INTEGER,
          order: 'asc',
          limit: 1000,
        }),
        states: reader.states(),
      };
    } finally {
      reader.close();
    }
  };
  const tag = (name: string, leaf: string) => store.get(`Alarms/${name}/${leaf}`);
  return { dir, clock, store, logs, journal, service, heard, write, onDisk, tag };
}

test('state tags follow the alarm; every transition is on disk before it is shown or sent', async (t) => {
  const h = await setup(t);
  t.like(h.tag('Hot', 'State'), { quality: 'Unavailable', reason: 'NeverRead' });
  h.write(temp, 50);
  t.like(h.tag('Hot', 'State'), { quality: 'Good', value: 'Normal' });
  t.like(h.tag('Hot', 'Active'), { quality: 'Good', value: false });
  t.like(h.tag('Hot', 'Acknowledged'), { quality: 'Good', value: true });

  const seenOnDisk: number[] = [];
  h.store.subscribe((updates) => {
    if (updates.some((u) => u.sample.fullTagId === 'Alarms/Hot/State')) {
      seenOnDisk.push(h.onDisk().entries.length);
    }
  });
  h.service.subscribe(() => seenOnDisk.push(h.onDisk().entries.length));
  h.write(temp, 95);
  t.like(h.tag('Hot', 'State'), { quality: 'Good', value: 'Unacknowledged' });
  t.like(h.tag('Hot', 'Active'), { quality: 'Good', value: true });
  t.like(h.tag('Hot', 'Acknowledged'), { quality: 'Good', value: false });
  t.deepEqual(seenOnDisk, [1, 1], 'the tag write and the listener both came after the commit');
  t.like(h.heard[0], {
    name: 'Hot',
    event: 'Activated',
    from: 'Normal',
    to: 'Unacknowledged',
    value: 95,
  });
  const { entries, states } = h.onDisk();
  t.like(entries[0], {
    name: 'Hot',
    event: 'Activated',
    area: 'Hall2/Ovens',
    priority: 'High',
    severity: 750,
  });
  t.like(states.get('Hot'), { active: true, acknowledged: false, conditionActive: true });
});

test('a source that is not Good turns Active and State Stale with the last decided values', async (t) => {
  const h = await setup(t);
  h.write(temp, 95);
  h.write(temp, undefined, 'Bad');
  t.like(h.tag('Hot', 'State'), {
    quality: 'Stale',
    value: 'Unacknowledged',
    message: 'Source Line/Temp is Bad: the condition is not evaluated.',
  });
  t.like(h.tag('Hot', 'Active'), { quality: 'Stale', value: true });
  t.like(h.tag('Hot', 'Acknowledged'), { quality: 'Good', value: false });
  t.like(h.service.get('Hot'), {
    quality: 'Stale',
    state: 'Unacknowledged',
    problem: 'Source Line/Temp is Bad: the condition is not evaluated.',
  });
  h.service.shelve('Hot', { kind: 'Timed', durationMs: 60_000 });
  t.like(
    h.tag('Hot', 'State'),
    { quality: 'Good', value: 'Shelved' },
    'an overlay is a fact of its own',
  );
  h.write(temp, 50);
  t.like(h.tag('Hot', 'Active'), { quality: 'Good', value: false });
  t.is(h.heard.length, 3, 'Activated, Shelved, Cleared: the quality changes are no transitions');
});

test('timers run as batches of their own: an on-delay ends on the clock, journaled and shown', async (t) => {
  const h = await setup(t, [{ ...hot, onDelayMs: 5000 }]);
  h.write(temp, 95);
  t.is(h.onDisk().entries.length, 0);
  h.clock.advance(5000);
  t.like(h.onDisk().entries[0], { event: 'Activated' });
  t.like(h.tag('Hot', 'State'), { value: 'Unacknowledged' });
  t.is(h.heard.length, 1);
});

test('an acknowledgement is on disk, with account and comment, when the call returns', async (t) => {
  const h = await setup(t);
  h.write(temp, 95);
  const view = h.service.acknowledge('Hot', { account: 'olga', comment: 'On it.' });
  t.like(view, { state: 'Acknowledged', acknowledged: true, active: true });
  const { entries, states } = h.onDisk();
  t.like(entries.at(-1), { event: 'Acknowledged', account: 'olga', comment: 'On it.' });
  t.like(states.get('Hot'), { acknowledged: true });
  t.like(h.tag('Hot', 'Acknowledged'), { value: true });
  t.throws(() => h.service.acknowledge('Hot', {}), { code: 'alarm-state-conflict' });
  t.throws(() => h.service.acknowledge('Nope', {}), { code: 'not-found' });
});

test('a journal that refuses an operator action undoes it (503); automatic transitions wait for it', async (t) => {
  const h = await setup(t);
  h.write(temp, 95);
  h.journal.close();
  const error = t.throws(() => h.service.acknowledge('Hot', { account: 'olga' }));
  t.is((error as { code?: string }).code, 'alarm-journal-unavailable');
  t.is(h.service.get('Hot')?.state, 'Unacknowledged', 'the action was undone');
  t.like(h.tag('Hot', 'Acknowledged'), { value: false });
  t.is(h.heard.length, 1, 'nothing was sent about it');

  h.write(temp, 50);
  t.is(h.service.get('Hot')?.state, 'ReturnedUnacknowledged', 'the process goes on');
  t.like(h.tag('Hot', 'State'), { value: 'ReturnedUnacknowledged' });
  t.true(h.logs.lines.some((line) => /alarm journal refused a write/.test(String(line.msg))));
  h.journal.open();
  h.write(temp, 96);
  t.deepEqual(
    h.onDisk().entries.map((entry) => entry.event),
    ['Activated', 'Cleared', 'Activated'],
  );
  t.like(h.onDisk().states.get('Hot'), { active: true });
  h.service.acknowledge('Hot', { account: 'olga' });
  t.is(h.onDisk().entries.length, 4);
});

test('states survive a restart: restored, shown unconfirmed until the source is read again', async (t) => {
  const dir = await tempDir(t);
  const clock = new ManualClock();
  const first = await setup(
    t,
    [hot, { name: 'Door', source: 'Line/Door', condition: 'Digital', value: true }],
    {
      dir,
      clock,
    },
  );
  first.write(temp, 95);
  first.service.shelve('Door', {
    kind: 'Timed',
    durationMs: 120_000,
    account: 'olga',
    comment: 'Sensor swap',
  });
  await first.service.stop();

  const second = await setup(
    t,
    [hot, { name: 'Door', source: 'Line/Door', condition: 'Digital', value: true }],
    {
      dir,
      clock,
    },
  );
  t.like(second.service.get('Hot'), { state: 'Unacknowledged', active: true, quality: 'Stale' });
  t.like(second.tag('Hot', 'State'), { quality: 'Stale', value: 'Unacknowledged' });
  t.like(second.service.get('Door'), {
    state: 'Shelved',
    shelve: { account: 'olga', reason: 'Sensor swap' },
  });
  second.write(temp, 94);
  t.like(second.tag('Hot', 'State'), { quality: 'Good', value: 'Unacknowledged' });
  t.is(second.heard.length, 0, 'still active: no transition');
  clock.advance(120_000);
  t.like(second.heard.at(-1), { name: 'Door', event: 'ShelveEnded' });
});

test('apply: a removed alarm takes its tags and state along; a changed one keeps its state', async (t) => {
  const h = await setup(t, [hot, { name: 'Cold', source: temp, condition: 'Low', limit: 10 }]);
  h.write(temp, 95);
  h.service.apply(
    definitions(
      { ...hot, limit: 80, priority: 'Urgent' },
      { name: 'New', source: temp, condition: 'High', limit: 50 },
    ),
  );
  t.is(h.store.get('Alarms/Cold/State'), undefined);
  t.false(h.onDisk().states.has('Cold'));
  t.like(h.service.get('Hot'), { state: 'Unacknowledged', priority: 'Urgent', severity: 1000 });
  t.like(h.service.get('New'), { state: 'Unacknowledged' }, 'evaluated at once');
  h.service.apply(definitions({ ...hot, enabled: false }));
  t.is(h.service.get('Hot'), undefined);
  t.is(h.store.get('Alarms/Hot/Active'), undefined);
  t.deepEqual(
    h.service.definitions().map((d) => d.name),
    ['Hot'],
  );
  t.true(
    h.onDisk().entries.some((entry) => entry.name === 'Hot'),
    'the journal stays',
  );
});

test('a source that does not exist is warned about, and evaluated once it appears', async (t) => {
  const h = await setup(t, [
    { name: 'Late', source: 'Other/Flag', condition: 'Digital', value: true },
  ]);
  t.true(
    h.logs.lines.some(
      (line) =>
        line.level === 40 &&
        /alarm Late refers to tags that do not exist \(yet\): Other\/Flag/.test(String(line.msg)),
    ),
  );
  t.like(h.service.get('Late'), {
    quality: 'Unavailable',
    problem: 'Source Other/Flag does not exist: the condition is not evaluated.',
  });
  h.store.write([
    {
      fullTagId: 'Other/Flag',
      utcTimestamp: new Date(h.clock.now()).toISOString(),
      quality: 'Good',
      value: true,
    },
  ]);
  t.like(h.service.get('Late'), { state: 'Unacknowledged', quality: 'Good' });
  h.store.remove(['Other/Flag']);
  t.like(h.service.get('Late'), {
    quality: 'Stale',
    problem: 'Source Other/Flag does not exist: the condition is not evaluated.',
  });
});

test('a stopped service leaves no timer and no subscription', async (t) => {
  const h = await setup(t, [{ ...hot, reAlarmAfterMs: 60_000 }]);
  h.write(temp, 95);
  await h.service.stop();
  h.write(temp, 50);
  t.is(h.heard.length, 1);
  t.is(h.clock.pendingTimers(), 0);
});

test('Expression conditions run on the expression engine; inputs not Good leave the alarm as it is', async (t) => {
  const h = await setup(t, [
    { name: 'HotOpen', condition: 'Expression', expression: '{Line/Temp} > 90 && {Line/Door}' },
  ]);
  h.write('Line/Door', false);
  h.write(temp, 95);
  t.like(h.service.get('HotOpen'), { state: 'Normal', quality: 'Good' });
  h.write('Line/Door', true);
  t.like(h.service.get('HotOpen'), { state: 'Unacknowledged', value: true });
  t.like(h.heard[0], { event: 'Activated', value: true, message: 'HotOpen: the condition holds.' });
  h.write(temp, undefined, 'Bad');
  t.like(h.service.get('HotOpen'), { state: 'Unacknowledged', quality: 'Stale' });
  t.regex(h.service.get('HotOpen')?.problem ?? '', /^The expression is Bad/);
  h.write(temp, 50);
  t.like(h.service.get('HotOpen'), { state: 'ReturnedUnacknowledged', quality: 'Good' });
});

test('suppressWhen: suppressed by design while the line is stopped', async (t) => {
  const h = await setup(t, [{ ...hot, suppressWhen: '{Line/Running} == false' }]);
  h.write('Line/Running', false);
  h.write(temp, 95);
  t.like(h.service.get('Hot'), { state: 'Suppressed', active: true });
  t.like(h.tag('Hot', 'State'), { quality: 'Good', value: 'Suppressed' });
  h.write('Line/Running', 'x');
  t.is(h.service.get('Hot')?.state, 'Suppressed', 'an expression that fails changes nothing');
  h.write('Line/Running', true);
  t.is(h.service.get('Hot')?.state, 'Unacknowledged');
  t.deepEqual(
    h.heard.map((x) => `${x.from}>${x.to}:${x.event}`),
    [
      'Normal>Suppressed:Suppressed',
      'Suppressed>Suppressed:Activated',
      'Suppressed>Unacknowledged:Unsuppressed',
    ],
  );
});

test('an expression that changes with time alone is evaluated every second', async (t) => {
  const h = await setup(t, [
    { name: 'Overdue', condition: 'Expression', expression: 'now() > {Line/Deadline}' },
  ]);
  h.write('Line/Deadline', h.clock.now() + 5000);
  t.is(h.service.get('Overdue')?.state, 'Normal');
  h.clock.advance(5000);
  t.is(h.service.get('Overdue')?.state, 'Normal', 'not yet past the deadline');
  h.clock.advance(1000);
  t.is(h.service.get('Overdue')?.state, 'Unacknowledged', 'no input changed: the tick saw it');
  await h.service.stop();
  t.is(h.clock.pendingTimers(), 0, 'the tick stops with the service');
});

test('bulk acknowledgement: one journal write for all; a refused write undoes every one', async (t) => {
  const h = await setup(t, [
    hot,
    { ...hot, name: 'Hotter', limit: 92 },
    { ...hot, name: 'Cool', limit: 99 },
  ]);
  h.write(temp, 95);
  const appends: number[] = [];
  const append = h.journal.append.bind(h.journal);
  h.journal.append = (transitions, states, options) => {
    appends.push(transitions.length);
    return append(transitions, states, options);
  };
  h.journal.close();
  const refused = h.service.acknowledgeMany(['Hot', 'Hotter', 'Cool', 'Nope'], { account: 'olga' });
  t.deepEqual(
    refused.map((outcome) => ('code' in outcome ? outcome.code : outcome.state)),
    ['alarm-journal-unavailable', 'alarm-journal-unavailable', 'alarm-state-conflict', 'not-found'],
  );
  t.is(h.service.get('Hot')?.state, 'Unacknowledged');
  t.is(h.service.get('Hotter')?.state, 'Unacknowledged');
  h.journal.open();
  appends.length = 0;
  const done = h.service.acknowledgeMany(['Hot', 'Hotter'], { account: 'olga' });
  t.deepEqual(
    done.map((outcome) => ('code' in outcome ? outcome.code : outcome.state)),
    ['Acknowledged', 'Acknowledged'],
  );
  t.deepEqual(appends, [2], 'one transaction');
  t.is(h.onDisk().entries.filter((entry) => entry.event === 'Acknowledged').length, 2);
});
