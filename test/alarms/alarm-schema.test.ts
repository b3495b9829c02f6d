import test from 'ava';
import { alarmDefinitionSchema } from '../../src/alarms/alarm-schema.js';
import { toFieldErrors } from '../../src/profile/validate-profile.js';

function errorsOf(input: unknown): { path: string; message: string }[] {
  const result = alarmDefinitionSchema.safeParse(input);
  return result.success ? [] : result.error.issues.flatMap(toFieldErrors);
}

test('a minimal High alarm gets its defaults', (t) => {
  t.deepEqual(
    alarmDefinitionSchema.parse({
      name: 'OvenHot',
      source: 'Demo/T',
      condition: 'High',
      limit: 90,
    }),
    {
      name: 'OvenHot',
      source: 'Demo/T',
      condition: 'High',
      limit: 90,
      onDelayMs: 0,
      offDelayMs: 0,
      priority: 'Medium',
      latching: false,
      maxShelveMinutes: 480,
      enabled: true,
    },
  );
});

test('each condition requires its fields and refuses the others, every error with its path', (t) => {
  t.deepEqual(errorsOf({ name: 'a', condition: 'High' }), [
    { path: 'source', message: 'Required for condition High.' },
    { path: 'limit', message: 'Required for condition High.' },
  ]);
  t.deepEqual(errorsOf({ name: 'a', source: 'D/T', condition: 'Digital', limit: 1, deadband: 1 }), [
    { path: 'limit', message: 'Applies only to limit conditions.' },
    { path: 'deadband', message: 'Applies only to limit conditions.' },
    { path: 'value', message: 'Required for condition Digital.' },
  ]);
  t.deepEqual(
    errorsOf({ name: 'a', source: 'D/T', condition: 'Deviation', limit: 2, deadband: 2 }),
    [
      { path: 'deadband', message: 'Must be smaller than limit, or the alarm would never clear.' },
      { path: 'setpoint', message: 'Required for condition Deviation.' },
    ],
  );
  t.deepEqual(errorsOf({ name: 'a', source: 'D/T', condition: 'RateOfChange', limit: 0 }), [
    { path: 'limit', message: 'Must be greater than 0.' },
  ]);
  t.deepEqual(
    errorsOf({ name: 'a', source: 'D/T', condition: 'High', limit: 1, setpoint: 3, value: true }),
    [
      { path: 'setpoint', message: 'Applies only to condition Deviation.' },
      { path: 'value', message: 'Applies only to condition Digital.' },
    ],
  );
  t.deepEqual(errorsOf({ name: 'a', source: 'D/T', condition: 'BadQuality' }), []);
});

test('names, paths and areas follow the tag path rules; alarm state tags are no source', (t) => {
  const paths = (input: unknown) => errorsOf(input).map((error) => error.path);
  t.deepEqual(paths({ name: 'a/b', source: 'D//T', condition: 'BadQuality', area: 'Hall 2' }), [
    'name',
    'source',
    'area',
  ]);
  t.deepEqual(
    errorsOf({ name: 'a', source: 'Alarms/b/Active', condition: 'Digital', value: true }),
    [{ path: 'source', message: 'The source cannot be an alarm state tag (Alarms/…).' }],
  );
  t.deepEqual(
    paths({ name: 'a', source: 'D/T', condition: 'Deviation', limit: 1, setpoint: 'Alarms/x' }),
    ['setpoint'],
  );
  t.deepEqual(paths({ name: 'a', source: 'D/T', condition: 'BadQuality', colour: 'red' }), [
    'colour',
  ]);
});

test('Expression conditions and suppressWhen: checked by the expression engine, boolean only', (t) => {
  t.deepEqual(
    errorsOf({ name: 'a', condition: 'Expression', expression: '{D/T} > 1 && {D/Door}' }),
    [],
  );
  t.deepEqual(
    errorsOf({ name: 'a', source: 'D/T', condition: 'High', limit: 1, suppressWhen: '!{D/Run}' }),
    [],
  );
  t.deepEqual(errorsOf({ name: 'a', condition: 'Expression' }), [
    { path: 'expression', message: 'Required for condition Expression.' },
  ]);
  const [syntax] = errorsOf({ name: 'a', condition: 'Expression', expression: '{D/T} >' });
  t.is(syntax?.path, 'expression');
  t.regex(syntax?.message ?? '', /^line 1, column \d+: /);
  t.deepEqual(errorsOf({ name: 'a', condition: 'Expression', expression: '{D/T} * 2' }), [
    { path: 'expression', message: 'The expression gives a number, not a boolean.' },
  ]);
  t.deepEqual(
    errorsOf({ name: 'a', source: 'D/T', condition: 'BadQuality', suppressWhen: '"stopped"' }),
    [{ path: 'suppressWhen', message: 'The expression gives a string, not a boolean.' }],
  );
  t.deepEqual(
    errorsOf({ name: 'a', source: 'D/T', condition: 'High', limit: 1, expression: 'true' }),
    [{ path: 'expression', message: 'Applies only to condition Expression.' }],
  );
});

test('limits of delays, severity and shelving', (t) => {
  const paths = (input: object) =>
    errorsOf({ name: 'a', source: 'D/T', condition: 'BadQuality', ...input }).map((e) => e.path);
  t.deepEqual(paths({ onDelayMs: -1, offDelayMs: 86_400_001 }), ['onDelayMs', 'offDelayMs']);
  t.deepEqual(paths({ severity: 0 }), ['severity']);
  t.deepEqual(paths({ severity: 1001 }), ['severity']);
  t.deepEqual(paths({ reAlarmAfterMs: 999 }), ['reAlarmAfterMs']);
  t.deepEqual(paths({ maxShelveMinutes: 0 }), ['maxShelveMinutes']);
  t.deepEqual(paths({ priority: 'Critical' }), ['priority']);
});

test('names the API has fixed routes under are refused, in any case', (t) => {
  for (const name of ['Journal', 'stream', 'STATISTICS', 'Definitions', 'acknowledge']) {
    t.deepEqual(
      errorsOf({ name, source: 'D/T', condition: 'BadQuality' }).map((error) => error.path),
      ['name'],
      name,
    );
  }
  t.deepEqual(errorsOf({ name: 'Journals', source: 'D/T', condition: 'BadQuality' }), []);
});
