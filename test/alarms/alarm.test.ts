import test from 'ava';
import { Alarm } from '../../src/alarms/alarm.js';
import type { AlarmExpression } from '../../src/alarms/alarm-expression.js';
import { type AlarmDefinitionInput, alarmDefinitionSchema } from '../../src/alarms/alarm-schema.js';
import type { AlarmSnapshot, AlarmState, AlarmTransition } from '../../src/alarms/alarm-state.js';
import { ConflictError, ValidationError } from '../../src/errors.js';
import type { Quality, QualityReason, Sample, TagValue } from '../../src/tags/sample.js';
import { ManualClock } from '../helpers/manual-clock.js';

const source = 'Line/Temp';
const setpointTag = 'Line/Setpoint';
const minute = 60_000;

/** One step of a scenario; see {@link run}. */
type Step =
  | { value: TagValue }
  | { quality: Exclude<Quality, 'Good'>; value?: TagValue; reason?: QualityReason }
  | { missing: true }
  | { setpoint: TagValue; quality?: Quality }
  | { wait: number }
  | { ack: true; account?: string; comment?: string }
  | { shelve: 'Timed' | 'OneShot'; ms?: number }
  | { unshelve: true }
  | { outOfService: boolean }
  | { suppressed: boolean };

/**
 * A scenario step and what must follow it: the state the alarm shows, and exactly the
 * transitions it made (`From>To:Event`); none when `events` is left out.
 */
interface Row {
  step: Step;
  state: AlarmState;
  events?: string[];
  /** Whether the condition can be told after the step (default: true). */
  evaluable?: boolean;
}

function harness(
  input: Omit<AlarmDefinitionInput, 'name'> & { name?: string },
  snapshot?: AlarmSnapshot,
) {
  const clock = new ManualClock();
  const transitions: AlarmTransition[] = [];
  const changes: string[] = [];
  const tags = new Map<string, Sample>();
  const definition = alarmDefinitionSchema.parse({ name: 'A1', ...input });
  const alarm = new Alarm(
    definition,
    {
      clock,
      read: (path) => tags.get(path),
      sink: {
        transition: (_alarm, transition) => transitions.push(transition),
        changed: (changed) => changes.push(changed.state),
      },
    },
    snapshot,
  );
  alarm.start();
  const write = (
    path: string,
    quality: Quality,
    value: TagValue | undefined,
    reason?: QualityReason,
  ) => {
    const sample: Sample = {
      fullTagId: path,
      utcTimestamp: new Date(clock.now()).toISOString(),
      quality,
      ...(value !== undefined ? { value } : {}),
      ...(reason !== undefined ? { reason } : {}),
      metadata: { unit: '°C' },
    };
    tags.set(path, sample);
    return sample;
  };
  const apply = (step: Step) => {
    if ('value' in step && !('quality' in step)) alarm.evaluate(write(source, 'Good', step.value));
    else if ('quality' in step && !('setpoint' in step)) {
      alarm.evaluate(
        write(
          source,
          step.quality,
          step.quality === 'Stale' ? step.value : undefined,
          'reason' in step ? step.reason : undefined,
        ),
      );
    } else if ('missing' in step) {
      tags.delete(source);
      alarm.evaluate(undefined);
    } else if ('setpoint' in step) {
      write(setpointTag, step.quality ?? 'Good', step.setpoint);
      alarm.evaluate(tags.get(source));
    } else if ('wait' in step) clock.advance(step.wait);
    else if ('ack' in step) {
      alarm.acknowledge({
        ...(step.account ? { account: step.account } : {}),
        ...(step.comment ? { comment: step.comment } : {}),
      });
    } else if ('shelve' in step) {
      alarm.shelve({
        kind: step.shelve,
        ...(step.ms !== undefined ? { durationMs: step.ms } : {}),
      });
    } else if ('unshelve' in step) alarm.unshelve();
    else if ('outOfService' in step) alarm.setOutOfService(step.outOfService);
    else if ('suppressed' in step) alarm.setSuppressed(step.suppressed);
  };
  return { clock, alarm, transitions, changes, tags, apply, write };
}

/** Runs rows in order, checking each step's state and transitions. */
function run(
  t: import('ava').ExecutionContext,
  definition: Omit<AlarmDefinitionInput, 'name'>,
  rows: Row[],
) {
  const h = harness(definition);
  rows.forEach((row, index) => {
    const before = h.transitions.length;
    h.apply(row.step);
    const events = h.transitions.slice(before).map((x) => `${x.from}>${x.to}:${x.event}`);
    const where = `row ${index} ${JSON.stringify(row.step)}`;
    t.deepEqual(events, row.events ?? [], where);
    t.is(h.alarm.state, row.state, where);
    t.is(h.alarm.problem === undefined, row.evaluable ?? true, `${where}: evaluable`);
  });
  return h;
}

const high = { source, condition: 'High', limit: 90 } as const;

test('High: Normal → Unacknowledged → Acknowledged → Normal', (t) => {
  run(t, high, [
    { step: { value: 50 }, state: 'Normal' },
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    { step: { value: 96 }, state: 'Unacknowledged' },
    {
      step: { ack: true },
      state: 'Acknowledged',
      events: ['Unacknowledged>Acknowledged:Acknowledged'],
    },
    { step: { value: 90 }, state: 'Normal', events: ['Acknowledged>Normal:Cleared'] },
  ]);
});

test('High: returns to normal unacknowledged, then acknowledged to Normal or active again', (t) => {
  run(t, high, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { value: 50 },
      state: 'ReturnedUnacknowledged',
      events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
    },
    {
      step: { value: 95 },
      state: 'Unacknowledged',
      events: ['ReturnedUnacknowledged>Unacknowledged:Activated'],
    },
    {
      step: { value: 50 },
      state: 'ReturnedUnacknowledged',
      events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
    },
    {
      step: { ack: true },
      state: 'Normal',
      events: ['ReturnedUnacknowledged>Normal:Acknowledged'],
    },
  ]);
});

test('an acknowledged alarm that activates again waits for a new acknowledgement', (t) => {
  run(t, high, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { ack: true },
      state: 'Acknowledged',
      events: ['Unacknowledged>Acknowledged:Acknowledged'],
    },
    { step: { value: 50 }, state: 'Normal', events: ['Acknowledged>Normal:Cleared'] },
    { step: { value: 91 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
  ]);
});

test('High with a deadband: activates above the limit, clears at limit − deadband', (t) => {
  run(t, { ...high, deadband: 5 }, [
    { step: { value: 90 }, state: 'Normal' },
    { step: { value: 90.5 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    { step: { value: 88 }, state: 'Unacknowledged' },
    { step: { value: 85.1 }, state: 'Unacknowledged' },
    {
      step: { value: 85 },
      state: 'ReturnedUnacknowledged',
      events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
    },
    { step: { value: 89 }, state: 'ReturnedUnacknowledged' },
    {
      step: { value: 91 },
      state: 'Unacknowledged',
      events: ['ReturnedUnacknowledged>Unacknowledged:Activated'],
    },
  ]);
});

test('HighHigh behaves as High on its own limit', (t) => {
  run(t, { source, condition: 'HighHigh', limit: 120, deadband: 2 }, [
    { step: { value: 119 }, state: 'Normal' },
    { step: { value: 121 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    { step: { value: 118.5 }, state: 'Unacknowledged' },
    {
      step: { value: 118 },
      state: 'ReturnedUnacknowledged',
      events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
    },
  ]);
});

test('Low and LowLow with a deadband: activate below the limit, clear at limit + deadband', (t) => {
  for (const condition of ['Low', 'LowLow'] as const) {
    run(t, { source, condition, limit: 10, deadband: 2 }, [
      { step: { value: 10 }, state: 'Normal' },
      { step: { value: 9 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
      { step: { value: 11.9 }, state: 'Unacknowledged' },
      {
        step: { value: 12 },
        state: 'ReturnedUnacknowledged',
        events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
      },
      { step: { value: 11 }, state: 'ReturnedUnacknowledged' },
    ]);
  }
});

test('onDelayMs: the condition must hold without a break for the delay', (t) => {
  run(t, { ...high, onDelayMs: 5000 }, [
    { step: { value: 95 }, state: 'Normal' },
    { step: { wait: 3000 }, state: 'Normal' },
    { step: { value: 50 }, state: 'Normal' },
    { step: { wait: 5000 }, state: 'Normal' },
    { step: { value: 95 }, state: 'Normal' },
    { step: { wait: 4999 }, state: 'Normal' },
    { step: { value: 97 }, state: 'Normal' },
    { step: { wait: 1 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
  ]);
});

test('offDelayMs: the condition must be gone without a break for the delay', (t) => {
  run(t, { ...high, offDelayMs: 5000 }, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    { step: { value: 50 }, state: 'Unacknowledged' },
    { step: { wait: 3000 }, state: 'Unacknowledged' },
    { step: { value: 95 }, state: 'Unacknowledged' },
    { step: { wait: 10_000 }, state: 'Unacknowledged' },
    { step: { value: 50 }, state: 'Unacknowledged' },
    { step: { wait: 4999 }, state: 'Unacknowledged' },
    {
      step: { wait: 1 },
      state: 'ReturnedUnacknowledged',
      events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
    },
  ]);
});

test('the transition of a delay carries the reading at its end', (t) => {
  const h = run(t, { ...high, onDelayMs: 1000 }, [
    { step: { value: 95 }, state: 'Normal' },
    { step: { value: 97 }, state: 'Normal' },
    { step: { wait: 1000 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
  ]);
  t.is(h.transitions[0]?.value, 97);
  t.is(h.transitions[0]?.time, h.clock.now());
});

test('latching: an unacknowledged alarm stays active after its condition clears, until acknowledged', (t) => {
  const h = run(t, { ...high, latching: true }, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { value: 50 },
      state: 'Unacknowledged',
      events: ['Unacknowledged>Unacknowledged:Cleared'],
    },
  ]);
  t.true(h.alarm.current.active);
  t.false(h.alarm.current.conditionActive);
  h.apply({ ack: true });
  t.is(h.alarm.state, 'Normal');
  t.false(h.alarm.current.active);
  t.is(h.transitions.at(-1)?.event, 'Acknowledged');
});

test('latching: acknowledged while active, it clears with its condition', (t) => {
  run(t, { ...high, latching: true }, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { ack: true },
      state: 'Acknowledged',
      events: ['Unacknowledged>Acknowledged:Acknowledged'],
    },
    { step: { value: 50 }, state: 'Normal', events: ['Acknowledged>Normal:Cleared'] },
  ]);
});

test('latching: a latched alarm whose condition returns is active again, still unacknowledged', (t) => {
  run(t, { ...high, latching: true }, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { value: 50 },
      state: 'Unacknowledged',
      events: ['Unacknowledged>Unacknowledged:Cleared'],
    },
    {
      step: { value: 95 },
      state: 'Unacknowledged',
      events: ['Unacknowledged>Unacknowledged:Activated'],
    },
    {
      step: { ack: true },
      state: 'Acknowledged',
      events: ['Unacknowledged>Acknowledged:Acknowledged'],
    },
  ]);
});

test('reAlarmAfterMs: an unacknowledged active alarm is announced again until acknowledged', (t) => {
  run(t, { ...high, reAlarmAfterMs: minute }, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    { step: { wait: minute - 1 }, state: 'Unacknowledged' },
    {
      step: { wait: 1 },
      state: 'Unacknowledged',
      events: ['Unacknowledged>Unacknowledged:ReAlarm'],
    },
    {
      step: { wait: minute },
      state: 'Unacknowledged',
      events: ['Unacknowledged>Unacknowledged:ReAlarm'],
    },
    {
      step: { ack: true },
      state: 'Acknowledged',
      events: ['Unacknowledged>Acknowledged:Acknowledged'],
    },
    { step: { wait: 5 * minute }, state: 'Acknowledged' },
  ]);
});

test('reAlarmAfterMs: not while returned to normal, shelved or out of service', (t) => {
  const h = run(t, { ...high, reAlarmAfterMs: minute }, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { value: 50 },
      state: 'ReturnedUnacknowledged',
      events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
    },
    { step: { wait: 5 * minute }, state: 'ReturnedUnacknowledged' },
    {
      step: { value: 95 },
      state: 'Unacknowledged',
      events: ['ReturnedUnacknowledged>Unacknowledged:Activated'],
    },
    {
      step: { shelve: 'Timed', ms: 10 * minute },
      state: 'Shelved',
      events: ['Unacknowledged>Shelved:Shelved'],
    },
    { step: { wait: 5 * minute }, state: 'Shelved' },
    {
      step: { unshelve: true },
      state: 'Unacknowledged',
      events: ['Shelved>Unacknowledged:Unshelved'],
    },
    {
      step: { outOfService: true },
      state: 'OutOfService',
      events: ['Unacknowledged>OutOfService:OutOfService'],
    },
    { step: { wait: 5 * minute }, state: 'OutOfService' },
    {
      step: { outOfService: false },
      state: 'Unacknowledged',
      events: ['OutOfService>Unacknowledged:InService'],
    },
    {
      step: { wait: minute },
      state: 'Unacknowledged',
      events: ['Unacknowledged>Unacknowledged:ReAlarm'],
    },
  ]);
  h.alarm.stop();
  t.is(h.clock.pendingTimers(), 0, 'a stopped alarm leaves no timer');
});

test('timed shelve: hides the alarm, follows its condition underneath, ends by itself', (t) => {
  run(t, high, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { shelve: 'Timed', ms: 10 * minute },
      state: 'Shelved',
      events: ['Unacknowledged>Shelved:Shelved'],
    },
    { step: { value: 50 }, state: 'Shelved', events: ['Shelved>Shelved:Cleared'] },
    { step: { wait: 10 * minute - 1 }, state: 'Shelved' },
    // The condition is gone: nobody was shown it, nothing waits for an acknowledgement.
    { step: { wait: 1 }, state: 'Normal', events: ['Shelved>Normal:ShelveEnded'] },
  ]);
});

test('timed shelve: an alarm active at the end shows its acknowledgement state', (t) => {
  run(t, high, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { ack: true },
      state: 'Acknowledged',
      events: ['Unacknowledged>Acknowledged:Acknowledged'],
    },
    {
      step: { shelve: 'Timed', ms: minute },
      state: 'Shelved',
      events: ['Acknowledged>Shelved:Shelved'],
    },
    { step: { wait: minute }, state: 'Acknowledged', events: ['Shelved>Acknowledged:ShelveEnded'] },
    { step: { value: 50 }, state: 'Normal', events: ['Acknowledged>Normal:Cleared'] },
    { step: { shelve: 'Timed', ms: minute }, state: 'Shelved', events: ['Normal>Shelved:Shelved'] },
    { step: { value: 95 }, state: 'Shelved', events: ['Shelved>Shelved:Activated'] },
    {
      step: { wait: minute },
      state: 'Unacknowledged',
      events: ['Shelved>Unacknowledged:ShelveEnded'],
    },
  ]);
});

test('an operator may shelve again (the new shelve replaces the old) and acknowledge while shelved', (t) => {
  run(t, high, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { shelve: 'Timed', ms: minute },
      state: 'Shelved',
      events: ['Unacknowledged>Shelved:Shelved'],
    },
    { step: { wait: 30_000 }, state: 'Shelved' },
    {
      step: { shelve: 'Timed', ms: minute },
      state: 'Shelved',
      events: ['Shelved>Shelved:Shelved'],
    },
    { step: { wait: 59_999 }, state: 'Shelved' },
    { step: { ack: true }, state: 'Shelved', events: ['Shelved>Shelved:Acknowledged'] },
    { step: { wait: 1 }, state: 'Acknowledged', events: ['Shelved>Acknowledged:ShelveEnded'] },
  ]);
});

test('one-shot shelve: ends when the alarm clears', (t) => {
  run(t, high, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    { step: { shelve: 'OneShot' }, state: 'Shelved', events: ['Unacknowledged>Shelved:Shelved'] },
    { step: { wait: 60 * minute }, state: 'Shelved' },
    {
      step: { value: 50 },
      state: 'Normal',
      events: ['Shelved>Shelved:Cleared', 'Shelved>Normal:ShelveEnded'],
    },
  ]);
});

test('one-shot shelve of a normal alarm lasts through its next occurrence', (t) => {
  run(t, high, [
    { step: { value: 50 }, state: 'Normal' },
    { step: { shelve: 'OneShot' }, state: 'Shelved', events: ['Normal>Shelved:Shelved'] },
    { step: { value: 95 }, state: 'Shelved', events: ['Shelved>Shelved:Activated'] },
    {
      step: { value: 50 },
      state: 'Normal',
      events: ['Shelved>Shelved:Cleared', 'Shelved>Normal:ShelveEnded'],
    },
  ]);
});

test('maxShelveMinutes bounds timed and one-shot shelves', (t) => {
  const h = run(t, { ...high, maxShelveMinutes: 2 }, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    { step: { shelve: 'OneShot' }, state: 'Shelved', events: ['Unacknowledged>Shelved:Shelved'] },
    {
      step: { wait: 2 * minute },
      state: 'Unacknowledged',
      events: ['Shelved>Unacknowledged:ShelveEnded'],
    },
  ]);
  t.regex(h.transitions.at(-1)?.comment ?? '', /maxShelveMinutes \(2\)/);
  const error = t.throws(() => h.alarm.shelve({ kind: 'Timed', durationMs: 2 * minute + 1 }), {
    instanceOf: ValidationError,
  });
  t.is(error?.errors[0]?.path, 'durationMinutes');
  t.throws(() => h.alarm.shelve({ kind: 'Timed' }), { instanceOf: ValidationError });
  t.throws(() => h.alarm.shelve({ kind: 'Timed', durationMs: 0 }), { instanceOf: ValidationError });
  t.is(h.alarm.state, 'Unacknowledged', 'a refused shelve changes nothing');
  h.alarm.shelve({ kind: 'Timed', durationMs: 2 * minute });
  t.is(h.alarm.state, 'Shelved');
});

test('unshelve by an operator; unshelving an alarm not shelved is a conflict', (t) => {
  const h = run(t, high, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { shelve: 'Timed', ms: minute },
      state: 'Shelved',
      events: ['Unacknowledged>Shelved:Shelved'],
    },
    {
      step: { unshelve: true },
      state: 'Unacknowledged',
      events: ['Shelved>Unacknowledged:Unshelved'],
    },
    { step: { wait: minute }, state: 'Unacknowledged' },
  ]);
  const error = t.throws(() => h.alarm.unshelve(), { instanceOf: ConflictError });
  t.is(error?.code, 'alarm-state-conflict');
});

test('suppressed by design: hidden while suppressed, shown active and unacknowledged after', (t) => {
  run(t, high, [
    { step: { value: 50 }, state: 'Normal' },
    { step: { suppressed: true }, state: 'Suppressed', events: ['Normal>Suppressed:Suppressed'] },
    { step: { suppressed: true }, state: 'Suppressed' },
    { step: { value: 95 }, state: 'Suppressed', events: ['Suppressed>Suppressed:Activated'] },
    {
      step: { suppressed: false },
      state: 'Unacknowledged',
      events: ['Suppressed>Unacknowledged:Unsuppressed'],
    },
    {
      step: { suppressed: true },
      state: 'Suppressed',
      events: ['Unacknowledged>Suppressed:Suppressed'],
    },
    { step: { value: 50 }, state: 'Suppressed', events: ['Suppressed>Suppressed:Cleared'] },
    { step: { suppressed: false }, state: 'Normal', events: ['Suppressed>Normal:Unsuppressed'] },
  ]);
});

test('out of service: shown above every other state, back in service as the condition is', (t) => {
  const h = run(t, high, [
    { step: { value: 95 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { outOfService: true },
      state: 'OutOfService',
      events: ['Unacknowledged>OutOfService:OutOfService'],
    },
    {
      step: { shelve: 'Timed', ms: minute },
      state: 'OutOfService',
      events: ['OutOfService>OutOfService:Shelved'],
    },
    {
      step: { suppressed: true },
      state: 'OutOfService',
      events: ['OutOfService>OutOfService:Suppressed'],
    },
    {
      step: { wait: minute },
      state: 'OutOfService',
      events: ['OutOfService>OutOfService:ShelveEnded'],
    },
    { step: { value: 50 }, state: 'OutOfService', events: ['OutOfService>OutOfService:Cleared'] },
    {
      step: { outOfService: false },
      state: 'Suppressed',
      events: ['OutOfService>Suppressed:InService'],
    },
    { step: { suppressed: false }, state: 'Normal', events: ['Suppressed>Normal:Unsuppressed'] },
  ]);
  const error = t.throws(() => h.alarm.setOutOfService(false), { instanceOf: ConflictError });
  t.is(error?.code, 'alarm-state-conflict');
  h.alarm.setOutOfService(true);
  t.throws(() => h.alarm.setOutOfService(true), { instanceOf: ConflictError });
});

test('acknowledging an alarm with nothing to acknowledge is a conflict, and changes nothing', (t) => {
  const h = run(t, high, [{ step: { value: 50 }, state: 'Normal' }]);
  const error = t.throws(() => h.alarm.acknowledge(), { instanceOf: ConflictError });
  t.is(error?.code, 'alarm-state-conflict');
  t.regex(error?.message ?? '', /nothing to acknowledge \(it is Normal\)/);
  h.apply({ value: 95 });
  h.apply({ ack: true });
  t.throws(() => h.alarm.acknowledge(), { instanceOf: ConflictError });
  t.is(h.transitions.length, 2);
});

test('a source that is not Good is shown as such: no state is guessed, pending delays drop', (t) => {
  const h = run(t, { ...high, onDelayMs: 5000 }, [
    { step: { quality: 'Unavailable' }, state: 'Normal', evaluable: false },
    { step: { value: 95 }, state: 'Normal' },
    { step: { wait: 2000 }, state: 'Normal' },
    // The on-delay does not complete on data nobody read.
    { step: { quality: 'Stale', value: 95 }, state: 'Normal', evaluable: false },
    { step: { wait: 10_000 }, state: 'Normal', evaluable: false },
    { step: { value: 95 }, state: 'Normal' },
    { step: { wait: 5000 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    // Active stays active while the source is Bad: it is not cleared on a guess either.
    { step: { quality: 'Bad' }, state: 'Unacknowledged', evaluable: false },
    { step: { missing: true }, state: 'Unacknowledged', evaluable: false },
    { step: { value: 'high' }, state: 'Unacknowledged', evaluable: false },
    {
      step: { value: 50 },
      state: 'ReturnedUnacknowledged',
      events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
    },
  ]);
  t.is(h.alarm.problem, undefined);
  h.apply({ quality: 'Bad' });
  t.deepEqual(h.alarm.problem, {
    message: 'Source Line/Temp is Bad: the condition is not evaluated.',
  });
  h.apply({ missing: true });
  t.regex(h.alarm.problem?.message ?? '', /Line\/Temp does not exist/);
  h.apply({ value: 'high' });
  t.regex(h.alarm.problem?.message ?? '', /holds a string, not a number/);
});

test('the sink hears of every change of what the alarm shows, once per change', (t) => {
  const h = harness(high);
  t.is(h.alarm.current.conditionActive, undefined, 'not evaluated yet');
  t.deepEqual(h.alarm.problem, { message: 'Not evaluated yet.' });
  h.apply({ quality: 'Unavailable' });
  h.apply({ quality: 'Unavailable' });
  t.is(h.changes.length, 1, 'the same problem again is no change');
  h.apply({ value: 50 });
  t.is(h.changes.length, 2, 'evaluable, first evaluated');
  t.false(h.alarm.current.conditionActive);
  h.apply({ value: 51 });
  t.is(h.changes.length, 2);
  h.apply({ quality: 'Stale', value: 51 });
  t.is(h.changes.length, 3);
  h.apply({ value: 95 });
  t.is(h.changes.length, 3, 'a transition reports itself');
  t.is(h.transitions.length, 1);
});

test('BadQuality: the source leaves Good (or disappears) for longer than the delay', (t) => {
  const h = run(t, { source, condition: 'BadQuality', onDelayMs: 3000 }, [
    { step: { value: 1 }, state: 'Normal' },
    { step: { quality: 'Bad' }, state: 'Normal' },
    { step: { wait: 2999 }, state: 'Normal' },
    { step: { value: 1 }, state: 'Normal' },
    { step: { wait: 5000 }, state: 'Normal' },
    { step: { quality: 'Stale', value: 1 }, state: 'Normal' },
    { step: { wait: 3000 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { value: 1 },
      state: 'ReturnedUnacknowledged',
      events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
    },
    {
      step: { ack: true },
      state: 'Normal',
      events: ['ReturnedUnacknowledged>Normal:Acknowledged'],
    },
    { step: { missing: true }, state: 'Normal' },
    { step: { wait: 3000 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
  ]);
  t.is(h.transitions[0]?.value, 'Stale');
  t.is(h.transitions.at(-1)?.value, 'Missing');
});

test('BadQuality: a source not read yet since its driver started does not count', (t) => {
  run(t, { source, condition: 'BadQuality' }, [
    { step: { quality: 'Unavailable', reason: 'NeverRead' }, state: 'Normal', evaluable: false },
    {
      step: { quality: 'Unavailable', reason: 'Disconnected' },
      state: 'Unacknowledged',
      events: ['Normal>Unacknowledged:Activated'],
    },
  ]);
});

test('Digital: the source equals the alarm value, by type and value', (t) => {
  run(t, { source, condition: 'Digital', value: true }, [
    { step: { value: false }, state: 'Normal' },
    { step: { value: 1 }, state: 'Normal' },
    { step: { value: true }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    {
      step: { value: false },
      state: 'ReturnedUnacknowledged',
      events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
    },
    { step: { quality: 'Bad' }, state: 'ReturnedUnacknowledged', evaluable: false },
  ]);
  run(t, { source, condition: 'Digital', value: 'Fault' }, [
    { step: { value: 'Running' }, state: 'Normal' },
    {
      step: { value: 'Fault' },
      state: 'Unacknowledged',
      events: ['Normal>Unacknowledged:Activated'],
    },
  ]);
});

test('Deviation from a constant setpoint, with a deadband', (t) => {
  run(t, { source, condition: 'Deviation', setpoint: 60, limit: 5, deadband: 1 }, [
    { step: { value: 65 }, state: 'Normal' },
    { step: { value: 54.9 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    { step: { value: 64.5 }, state: 'Unacknowledged' },
    {
      step: { value: 64 },
      state: 'ReturnedUnacknowledged',
      events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
    },
  ]);
});

test('Deviation from a setpoint tag: the setpoint must be Good too, and its change counts', (t) => {
  const h = run(t, { source, condition: 'Deviation', setpoint: setpointTag, limit: 5 }, [
    { step: { value: 62 }, state: 'Normal', evaluable: false },
    { step: { setpoint: 60 }, state: 'Normal' },
    {
      step: { setpoint: 70 },
      state: 'Unacknowledged',
      events: ['Normal>Unacknowledged:Activated'],
    },
    { step: { setpoint: 70, quality: 'Stale' }, state: 'Unacknowledged', evaluable: false },
    { step: { setpoint: 'x' }, state: 'Unacknowledged', evaluable: false },
    {
      step: { setpoint: 64 },
      state: 'ReturnedUnacknowledged',
      events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
    },
  ]);
  t.deepEqual(h.alarm.inputs, [setpointTag]);
  h.apply({ setpoint: 70, quality: 'Stale' });
  t.regex(h.alarm.problem?.message ?? '', /^Setpoint Line\/Setpoint is Stale/);
});

test('RateOfChange: the change per second between two readings, by their timestamps', (t) => {
  const h = run(t, { source, condition: 'RateOfChange', limit: 2, deadband: 0.5 }, [
    { step: { value: 0 }, state: 'Normal', evaluable: false },
    { step: { wait: 1000 }, state: 'Normal', evaluable: false },
    { step: { value: 1 }, state: 'Normal' },
    { step: { wait: 1000 }, state: 'Normal' },
    { step: { value: 4 }, state: 'Unacknowledged', events: ['Normal>Unacknowledged:Activated'] },
    { step: { wait: 2000 }, state: 'Unacknowledged' },
    // 3.5 in 2 s: 1.75/s, inside the limit but not by the deadband.
    { step: { value: 7.5 }, state: 'Unacknowledged' },
    { step: { wait: 1000 }, state: 'Unacknowledged' },
    {
      step: { value: 9 },
      state: 'ReturnedUnacknowledged',
      events: ['Unacknowledged>ReturnedUnacknowledged:Cleared'],
    },
    { step: { quality: 'Bad' }, state: 'ReturnedUnacknowledged', evaluable: false },
    // After an outage, a rate needs two readings again.
    { step: { value: 100 }, state: 'ReturnedUnacknowledged', evaluable: false },
  ]);
  t.is(h.transitions[0]?.value, 3);
  t.is(h.transitions[1]?.value, 1.5);
  // The same sample evaluated again (its setpoint or a sibling changed) gives the same answer.
  h.apply({ wait: 1000 });
  h.apply({ value: 110 });
  t.is(h.alarm.state, 'Unacknowledged');
  h.alarm.evaluate(h.tags.get(source));
  t.is(h.alarm.state, 'Unacknowledged');
});

test('a transition carries time, value, limit, account, comment, priority, severity, area, message', (t) => {
  const h = harness({
    ...high,
    priority: 'Urgent',
    area: 'Hall2/Ovens',
    message: '{name} at {value} {unit} (limit {limit} {unit})',
  });
  h.apply({ value: 95.123456789 });
  h.clock.advance(1000);
  h.apply({ ack: true, account: 'olga', comment: 'Door open, closing it.' });
  t.deepEqual(h.transitions[1], {
    time: Date.UTC(2026, 0, 1) + 1000,
    name: 'A1',
    event: 'Acknowledged',
    from: 'Unacknowledged',
    to: 'Acknowledged',
    active: true,
    acknowledged: true,
    value: 95.123456789,
    limit: 90,
    account: 'olga',
    comment: 'Door open, closing it.',
    priority: 'Urgent',
    severity: 1000,
    area: 'Hall2/Ovens',
    message: 'A1 at 95.1235 °C (limit 90 °C)',
  } as AlarmTransition);
});

test('a restored alarm keeps its state, shows it unconfirmed until evaluated, and ends shelves that ran out', (t) => {
  const first = harness({ ...high, reAlarmAfterMs: minute });
  first.apply({ value: 95 });
  const kept = first.alarm.snapshot();
  first.alarm.stop();
  t.is(first.clock.pendingTimers(), 0);

  const second = harness({ ...high, reAlarmAfterMs: minute }, kept);
  t.is(second.alarm.state, 'Unacknowledged');
  t.truthy(second.alarm.problem, 'not evaluated since the restart');
  second.apply({ quality: 'Unavailable' });
  t.is(second.alarm.state, 'Unacknowledged', 'an unread source does not clear it');
  second.clock.advance(minute);
  t.deepEqual(
    second.transitions.map((x) => x.event),
    ['ReAlarm'],
    're-alarm runs on after a restart',
  );
  second.apply({ value: 95 });
  t.is(second.transitions.length, 1, 'still active: no transition');
  second.apply({ ack: true });
  t.is(second.alarm.state, 'Acknowledged');

  second.alarm.shelve({ kind: 'Timed', durationMs: minute });
  const shelved = second.alarm.snapshot();
  const third = harness(high, shelved);
  third.clock.advance(2 * minute);
  t.deepEqual(
    third.transitions.map((x) => `${x.from}>${x.to}:${x.event}`),
    ['Shelved>Acknowledged:ShelveEnded'],
  );
});

test('suppressWhen through the expression port: unknown leaves the suppression as it is', (t) => {
  let outcome: ReturnType<AlarmExpression['evaluate']> = { value: false };
  const expression: AlarmExpression = {
    inputs: ['Line/Stopped'],
    timeDependent: false,
    evaluate: () => outcome,
  };
  const clock = new ManualClock();
  const events: string[] = [];
  const definition = alarmDefinitionSchema.parse({ name: 'A1', ...high });
  const alarm = new Alarm(
    { ...definition, suppressWhen: 'Line/Stopped' },
    {
      clock,
      read: () => undefined,
      expressions: { compile: () => expression },
      sink: { transition: (_a, x) => events.push(x.event), changed: () => undefined },
    },
  );
  t.deepEqual(alarm.suppressionInputs, ['Line/Stopped']);
  alarm.evaluateSuppression();
  t.is(alarm.state, 'Normal');
  outcome = { value: true };
  alarm.evaluateSuppression();
  t.is(alarm.state, 'Suppressed');
  outcome = { problem: 'Line/Stopped is Bad' };
  alarm.evaluateSuppression();
  t.is(alarm.state, 'Suppressed');
  outcome = { value: false };
  alarm.evaluateSuppression();
  t.deepEqual(events, ['Suppressed', 'Unsuppressed']);
});

test('Expression conditions and suppressWhen are refused without the expression engine', (t) => {
  const definition = alarmDefinitionSchema.parse({ name: 'A1', ...high });
  const deps = {
    clock: new ManualClock(),
    read: () => undefined,
    sink: { transition() {}, changed() {} },
  };
  t.throws(() => new Alarm({ ...definition, condition: 'Expression', expression: 'a > 1' }, deps));
  t.throws(() => new Alarm({ ...definition, suppressWhen: 'a > 1' }, deps));
});
