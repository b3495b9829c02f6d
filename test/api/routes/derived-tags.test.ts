/**
 * The derived-tag routes over HTTP: the list of a running derived driver's tags, the Test route
 * (live evaluation, the samples used, syntax errors with line and column, the rate limit), and
 * the permissions: TagView to read and test, DerivedTagManage on top of DriverManage to change
 * derived tags through the Drivers routes.
 */
import test from 'ava';
import { pino } from 'pino';
import { isDerivedTagSource } from '../../../drivers/derived/derived-tag-report.js';
import { createDerivedDriver } from '../../../drivers/derived/index.js';
import { derivedDriverSchema } from '../../../drivers/derived/schema.js';
import type { Driver } from '../../../drivers/driver.js';
import { expressionTestsPerSecond } from '../../../src/api/routes/derived-tags.js';
import { startApi } from '../../helpers/api-harness.js';
import { managedDaemon } from '../../helpers/managed-daemon.js';

async function withDerived(t: Parameters<typeof startApi>[0]) {
  let driver: Driver | undefined;
  const api = await startApi(t, {
    deps: ({ store, clock, stateDir }) => {
      driver = createDerivedDriver(
        derivedDriverSchema.parse({
          type: 'derived',
          name: 'Calc',
          tags: [
            { name: 'Level', expression: 'scale({PLC/AI0}, 0, 27648, 0, 100)', unit: '%' },
            { name: 'Ratio', expression: '{PLC/A} / {PLC/B}', trigger: { intervalMs: 1000 } },
          ],
        }),
        { store, clock, stateDir, logger: pino({ level: 'silent' }) },
      );
      const running = driver;
      return {
        derivedTags: {
          list: () => (isDerivedTagSource(running) ? running.derivedTags() : []),
        },
      };
    },
  });
  t.teardown(() => driver?.stop());
  await driver?.start();
  await api.addUser('viewer', ['Viewers']);
  const token = await api.signIn('viewer');
  return { ...api, token };
}

const good = (fullTagId: string, value: number) => ({
  fullTagId,
  utcTimestamp: new Date().toISOString(),
  quality: 'Good' as const,
  value,
});

test('GET DerivedTags lists each tag with its expression, inputs, last evaluation and counters', async (t) => {
  const { request, store, token } = await withDerived(t);
  store.write([good('PLC/AI0', 13824), good('PLC/A', 1), good('PLC/B', 0)]);
  const response = await request('/api/v2/DerivedTags', { token });
  t.is(response.status, 200);
  const [level, ratio] = response.json.derivedTags as Record<string, unknown>[];
  t.like(level, {
    fullTagId: 'Calc/Level',
    driver: 'Calc',
    expression: 'scale({PLC/AI0}, 0, 27648, 0, 100)',
    inputs: ['PLC/AI0'],
    dataType: 'number',
    trigger: 'change',
    unit: '%',
    lastEvaluation: { quality: 'Good', value: 50 },
    evaluations: 2,
    faults: 0,
  });
  t.like(ratio, {
    fullTagId: 'Calc/Ratio',
    trigger: { intervalMs: 1000 },
    // An interval tag follows at once an input that appeared (its quality changed).
    lastEvaluation: { quality: 'Bad', reason: 'Expression', message: 'Division by zero: 1 / 0.' },
    faults: 1,
  });
  // The value itself is read like any tag's.
  const sample = await request('/api/v2/Tags/Sample/Calc/Level', { token });
  t.like(sample.json, { quality: 'Good', value: 50, metadata: { unit: '%' } });
});

test('Test evaluates against the live store and answers the samples it read', async (t) => {
  const { request, store, token } = await withDerived(t);
  store.write([good('PLC/A', 6), good('PLC/B', 4), good('PLC/AI0', 27648)]);
  const response = await request('/api/v2/DerivedTags/Test', {
    method: 'POST',
    token,
    body: {
      expression: '{PLC/A} * 2 + {PLC/B} + {./Level} + valueOr({PLC/Nope}, 0)',
      driver: 'Calc',
    },
  });
  t.is(response.status, 200);
  t.like(response.json, { quality: 'Good', value: 116, dataType: 'number' });
  const inputs = response.json.inputs as { fullTagId: string; sample?: { value?: unknown } }[];
  t.deepEqual(
    inputs.map((input) => [input.fullTagId, input.sample?.value]),
    [
      ['PLC/A', 6],
      ['PLC/B', 4],
      ['Calc/Level', 100],
      ['PLC/Nope', undefined],
    ],
  );
  t.false('sample' in (inputs[3] as object), 'a tag that does not exist has no sample');
  const plain = await request('/api/v2/DerivedTags/Test', {
    method: 'POST',
    token,
    body: { expression: '{PLC/A} * 2 + {PLC/B}' },
  });
  t.like(plain.json, { quality: 'Good', value: 16 });
  const fault = await request('/api/v2/DerivedTags/Test', {
    method: 'POST',
    token,
    body: { expression: '{PLC/A} / ({PLC/B} - 4)' },
  });
  t.like(fault.json, { quality: 'Bad', reason: 'Expression', message: 'Division by zero: 6 / 0.' });
});

test('Test answers a syntax error as a problem document with line, column and what was expected', async (t) => {
  const { request, token } = await withDerived(t);
  const response = await request('/api/v2/DerivedTags/Test', {
    method: 'POST',
    token,
    body: { expression: 'max({PLC/A},\n  {PLC/B}' },
  });
  t.is(response.status, 400);
  t.is(response.headers.get('content-type'), 'application/problem+json');
  t.like(response.json, {
    code: 'expression-invalid',
    detail: "The expression is invalid: line 2, column 10: A '(' is not closed. Expected ')'.",
    errors: [
      { path: 'expression', message: "A '(' is not closed.", line: 2, column: 10, expected: "')'" },
    ],
  });
  const hostile = await request('/api/v2/DerivedTags/Test', {
    method: 'POST',
    token,
    body: { expression: '"".constructor.constructor("return process")()' },
  });
  t.is(hostile.status, 400);
  t.like(hostile.json, {
    code: 'expression-invalid',
    errors: [
      { line: 1, column: 3, message: 'Property access is not part of the expression language.' },
    ],
  });
  const long = await request('/api/v2/DerivedTags/Test', {
    method: 'POST',
    token,
    body: { expression: '1+'.repeat(20_000) },
  });
  t.like(long.json, { code: 'expression-invalid', errors: [{ column: 4097 }] });
  const missing = await request('/api/v2/DerivedTags/Test', { method: 'POST', token, body: {} });
  t.is(missing.status, 400);
  t.is(missing.json.code, 'validation-failed');
});

test('Test is rate-limited per account', async (t) => {
  const { request, token, clock } = await withDerived(t);
  const test = () =>
    request('/api/v2/DerivedTags/Test', { method: 'POST', token, body: { expression: '1 + 1' } });
  for (let i = 0; i < expressionTestsPerSecond; i++) t.is((await test()).status, 200);
  const refused = await test();
  t.is(refused.status, 429);
  t.is(refused.json.code, 'too-many-requests');
  t.is(refused.headers.get('retry-after'), '1');
  clock.advance(1000);
  t.is((await test()).status, 200);
});

test('reading and testing need TagView', async (t) => {
  const { request } = await withDerived(t);
  t.is((await request('/api/v2/DerivedTags')).status, 401);
  const test = await request('/api/v2/DerivedTags/Test', {
    method: 'POST',
    body: { expression: '1' },
  });
  t.is(test.status, 401);
});

const calc = {
  type: 'derived',
  name: 'Calc',
  tags: [{ name: 'Double', expression: '{Demo/Line1/Temperature} * 2', unit: '°C' }],
};

test('derived tags are added, replaced and removed through the Drivers routes, audited', async (t) => {
  const { request, logs } = await managedDaemon(t);
  const created = await request('/api/v2/Drivers', { method: 'POST', body: calc });
  t.is(created.status, 201);
  const double = await request('/api/v2/Tags/Sample/Calc/Double');
  const temperature = await request('/api/v2/Tags/Sample/Demo/Line1/Temperature');
  t.is(double.json.value, (temperature.json.value as number) * 2);
  const calcTags = async () =>
    ((await request('/api/v2/DerivedTags')).json.derivedTags as { fullTagId: string }[])
      .map((tag) => tag.fullTagId)
      .filter((id) => id.startsWith('Calc/'));
  // After the demo's own derived tags.
  t.deepEqual(await calcTags(), ['Calc/Double']);
  const invalid = await request('/api/v2/Drivers/Calc', {
    method: 'PUT',
    body: { ...calc, tags: [{ name: 'Double', expression: '{Demo/Line1/Temperature} *' }] },
  });
  t.is(invalid.status, 400);
  t.deepEqual(invalid.json.errors, [
    {
      path: 'tags[0].expression',
      message: "line 1, column 27: '*' has no right-hand operand. Expected an operand.",
    },
  ]);
  const loop = await request('/api/v2/Drivers/Calc', {
    method: 'PUT',
    body: {
      ...calc,
      tags: [
        { name: 'A', expression: '{./B}' },
        { name: 'B', expression: '{./A}' },
      ],
    },
  });
  t.is(loop.status, 400);
  t.regex(
    String((loop.json.errors as { message: string }[])[0]?.message),
    /Calc\/A → Calc\/B → Calc\/A/,
  );
  const replaced = await request('/api/v2/Drivers/Calc', {
    method: 'PUT',
    body: { ...calc, tags: [{ name: 'Triple', expression: '{Demo/Line1/Temperature} * 3' }] },
  });
  t.is(replaced.status, 200);
  t.is((await request('/api/v2/Tags/Sample/Calc/Double')).status, 404);
  t.is((await request('/api/v2/Tags/Sample/Calc/Triple')).status, 200);
  t.is((await request('/api/v2/Drivers/Calc', { method: 'DELETE' })).status, 204);
  t.deepEqual(await calcTags(), []);
  const events = logs.lines.filter((line) => line.component === 'audit' && line.driver === 'Calc');
  t.deepEqual(
    events.map((line) => [line.event, line.type]),
    [
      ['driver-created', 'derived'],
      ['driver-replaced', 'derived'],
      ['driver-deleted', 'derived'],
    ],
  );
});

test('changing derived tags needs DerivedTagManage: Operators are refused, and may still read them', async (t) => {
  const { request, operator } = await managedDaemon(t);
  t.is((await request('/api/v2/Drivers', { method: 'POST', body: calc })).status, 201);
  const refused = await request('/api/v2/Drivers/Calc', {
    method: 'PUT',
    body: calc,
    token: operator,
  });
  t.is(refused.status, 403);
  t.is((await request('/api/v2/Drivers/Calc', { method: 'DELETE', token: operator })).status, 403);
  t.is((await request('/api/v2/DerivedTags', { token: operator })).status, 200);
});
