/**
 * The derived driver's profile entry: expressions are compiled at validation, so their errors
 * are profile errors at `tags[i].expression` with line and column; dataType and deadband are
 * checked against what the expression gives.
 */
import test from 'ava';
import { derivedDriverSchema } from '../../../drivers/derived/schema.js';

function issues(tags: Record<string, unknown>[]): { path: string; message: string }[] {
  const result = derivedDriverSchema.safeParse({ type: 'derived', name: 'D', tags });
  return (result.error?.issues ?? []).map((issue) => ({
    path: issue.path.join('.'),
    message: issue.message,
  }));
}

test('a valid entry takes its defaults', (t) => {
  const config = derivedDriverSchema.parse({
    type: 'derived',
    name: 'D',
    tags: [{ name: 'Level', expression: 'scale({PLC/AI0}, 0, 27648, 0, 100)' }],
  });
  t.like(config, { enabled: true, tags: [{ trigger: 'change' }] });
});

test('an expression that does not compile is an error at its path, with line and column', (t) => {
  t.deepEqual(issues([{ name: 'A', expression: '{PLC/x} *\n  foo(1)' }]), [
    {
      path: 'tags.0.expression',
      message:
        "line 2, column 3: Unknown function 'foo'. Expected one of the functions docs/derived-tags.md lists.",
    },
  ]);
  t.deepEqual(issues([{ name: 'A', expression: '1 +' }]), [
    {
      path: 'tags.0.expression',
      message: "line 1, column 4: '+' has no right-hand operand. Expected an operand.",
    },
  ]);
});

test('relative references resolve against the driver name', (t) => {
  t.deepEqual(issues([{ name: 'A', expression: '{./B} + {./C/D}' }]), []);
});

test('dataType must fit what the expression gives, and deadband is for numbers', (t) => {
  t.deepEqual(issues([{ name: 'A', expression: 'bit({PLC/w}, 3)', dataType: 'number' }]), [
    { path: 'tags.0.dataType', message: 'The expression gives a boolean, not a number.' },
  ]);
  t.deepEqual(issues([{ name: 'A', expression: 'bit({PLC/w}, 3)', deadband: 1 }]), [
    { path: 'tags.0.deadband', message: 'A deadband is for numeric tags; this one is a boolean.' },
  ]);
  // A tag's type is known only when it is read: allowed, checked at each evaluation.
  t.deepEqual(issues([{ name: 'A', expression: '{PLC/x}', dataType: 'string' }]), []);
});

test('the trigger is change or an interval of 100 ms to a day', (t) => {
  t.deepEqual(issues([{ name: 'A', expression: '1', trigger: { intervalMs: 1000 } }]), []);
  t.is(issues([{ name: 'A', expression: '1', trigger: { intervalMs: 10 } }]).length, 1);
  t.is(issues([{ name: 'A', expression: '1', trigger: 'sometimes' }]).length, 1);
  t.is(issues([{ name: 'A', expression: '1', trigger: { intervalMs: 1000, x: 1 } }]).length, 1);
});

test('unknown keys and an overlong expression are refused', (t) => {
  t.deepEqual(
    issues([{ name: 'A', expression: '1', formula: '2' }]).map((issue) => issue.path),
    ['tags.0'],
  );
  t.true(issues([{ name: 'A', expression: '1+'.repeat(5000) }]).length > 0);
});
