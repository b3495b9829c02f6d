/**
 * POST /api/v2/Tags/Write over real HTTP, with a simulator driver behind the TagWriter:
 * permissions, the checks that refuse a whole request before any I/O (400 naming each item),
 * the per-account rate limit (429), results in order and the audit lines.
 */
import test, { type ExecutionContext } from 'ava';
import { createSimulatorDriver } from '../../../drivers/simulator/index.js';
import { simulatorDriverSchema } from '../../../drivers/simulator/schema.js';
import { TagWriter } from '../../../src/tags/tag-writer.js';
import { type ApiHarness, startApi } from '../../helpers/api-harness.js';

const simulator = {
  type: 'simulator',
  name: 'Sim',
  allowWrites: true,
  scanIntervalMs: 1000,
  tags: [
    { name: 'Setpoint', kind: 'sine', writable: true, writeMin: 0, writeMax: 100, unit: '°C' },
    { name: 'Run', kind: 'boolean', writable: true },
    { name: 'Mode', kind: 'string', writable: true },
    { name: 'Count', kind: 'counter', writable: true },
    { name: 'Level', kind: 'ramp' },
  ],
};

async function setup(
  t: ExecutionContext,
  options: { writesPerSecond?: number; config?: Record<string, unknown> } = {},
): Promise<{ api: ApiHarness; operator: string; viewer: string }> {
  let writer: TagWriter | undefined;
  const api = await startApi(t, {
    deps: ({ store, clock, logs, audit }) => {
      writer = new TagWriter({
        store,
        audit,
        logger: logs.logger,
        now: () => clock.now(),
        ...(options.writesPerSecond !== undefined
          ? { writesPerSecond: options.writesPerSecond }
          : {}),
      });
      return { writer };
    },
  });
  const driver = createSimulatorDriver(simulatorDriverSchema.parse(options.config ?? simulator), {
    store: api.store,
    clock: api.clock,
    logger: api.logs.logger,
    stateDir: api.stateDir,
  });
  await driver.start();
  (writer as TagWriter).register(driver);
  t.teardown(() => driver.stop());
  await api.addUser('operator', ['Operators']);
  await api.addUser('viewer', ['Viewers']);
  return { api, operator: await api.signIn('operator'), viewer: await api.signIn('viewer') };
}

const write = (api: ApiHarness, token: string, writes: unknown) =>
  api.request('/api/v2/Tags/Write', { method: 'POST', token, body: { writes } });

const auditLines = (api: ApiHarness) =>
  api.logs.lines.filter((line) => line.component === 'audit' && line.event === 'tag-write');

test('an Operator writes; the results come in order and the store holds the new values', async (t) => {
  const { api, operator } = await setup(t);
  const response = await write(api, operator, [
    { fullTagId: 'Sim/Setpoint', value: 42.5 },
    { fullTagId: 'Sim/Run', value: true },
    { fullTagId: 'Sim/Mode', value: 'Maintenance' },
  ]);
  t.is(response.status, 200);
  t.deepEqual(response.body, {
    results: [
      { fullTagId: 'Sim/Setpoint', status: 'Good' },
      { fullTagId: 'Sim/Run', status: 'Good' },
      { fullTagId: 'Sim/Mode', status: 'Good' },
    ],
  });
  t.is(api.store.require('Sim/Setpoint').value, 42.5);
  t.is(api.store.require('Sim/Setpoint').quality, 'Good');
  t.is(api.store.require('Sim/Mode').value, 'Maintenance');
  // The simulator holds a written value: the next scans report it again.
  api.clock.advance(3000);
  t.is(api.store.require('Sim/Setpoint').value, 42.5);
  t.is(api.store.require('Sim/Run').value, true);
});

test('a written counter goes on counting from the written value', async (t) => {
  const { api, operator } = await setup(t);
  t.is((await write(api, operator, [{ fullTagId: 'Sim/Count', value: 1000 }])).status, 200);
  t.is(api.store.require('Sim/Count').value, 1000);
  api.clock.advance(1000);
  t.is(api.store.require('Sim/Count').value, 1000);
  api.clock.advance(1000);
  t.is(api.store.require('Sim/Count').value, 1001);
});

test('a Viewer gets 403 and nothing is written; no token is 401', async (t) => {
  const { api, viewer } = await setup(t);
  const before = api.store.require('Sim/Setpoint').value;
  const response = await write(api, viewer, [{ fullTagId: 'Sim/Setpoint', value: 1 }]);
  t.is(response.status, 403);
  t.is(response.json.code, 'forbidden');
  t.is(api.store.require('Sim/Setpoint').value, before);
  const anonymous = await api.request('/api/v2/Tags/Write', {
    method: 'POST',
    body: { writes: [{ fullTagId: 'Sim/Setpoint', value: 1 }] },
  });
  t.is(anonymous.status, 401);
});

test('one bad item refuses the whole request with 400 naming every bad item; nothing is written', async (t) => {
  const { api, operator } = await setup(t);
  const before = api.store.require('Sim/Setpoint').value;
  const response = await write(api, operator, [
    { fullTagId: 'Sim/Setpoint', value: 50 },
    { fullTagId: 'Sim/Level', value: 3 },
    { fullTagId: 'Sim/Nope', value: 3 },
    { fullTagId: 'Sim/Setpoint', value: 150 },
    { fullTagId: 'Sim/Setpoint', value: -1 },
    { fullTagId: 'Sim/Run', value: 1 },
    { fullTagId: 'Sim/Setpoint', value: 'hot' },
    { fullTagId: 'bad//path', value: 1 },
  ]);
  t.is(response.status, 400);
  t.regex(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
  t.is(response.json.code, 'validation-failed');
  t.deepEqual(response.json.errors, [
    { path: 'writes[1].fullTagId', message: 'Tag Sim/Level is not writable.' },
    { path: 'writes[2].fullTagId', message: 'Tag Sim/Nope does not exist.' },
    { path: 'writes[3].value', message: 'Tag Sim/Setpoint: 150 is above writeMax 100.' },
    { path: 'writes[4].value', message: 'Tag Sim/Setpoint: -1 is below writeMin 0.' },
    { path: 'writes[5].value', message: 'Tag Sim/Run: the value must be true or false.' },
    { path: 'writes[6].value', message: 'Tag Sim/Setpoint: the value must be a number.' },
    {
      path: 'writes[7].fullTagId',
      message: 'Invalid tag path: it has an empty segment (leading, trailing or double slash)',
    },
  ]);
  t.is(api.store.require('Sim/Setpoint').value, before, 'the valid first item was not written');
  t.true(auditLines(api).every((line) => line.status === 'Refused'));
  t.is(auditLines(api).length, 8);
});

test('NaN and infinities are refused; the body shape is checked', async (t) => {
  const { api, operator } = await setup(t);
  const infinite = await api.request('/api/v2/Tags/Write', {
    method: 'POST',
    token: operator,
    headers: { 'Content-Type': 'application/json' },
    raw: '{"writes":[{"fullTagId":"Sim/Setpoint","value":1e999}]}',
  });
  t.is(infinite.status, 400);
  t.deepEqual(infinite.json.errors, [
    { path: 'writes[0].value', message: 'NaN and infinities cannot be written.' },
  ]);
  t.is((await write(api, operator, [])).status, 400);
  const tooMany = Array.from({ length: 101 }, () => ({ fullTagId: 'Sim/Run', value: true }));
  const response = await write(api, operator, tooMany);
  t.is(response.status, 400);
  t.is((response.json.errors as { path: string }[])[0]?.path, 'writes');
  const extra = await write(api, operator, [{ fullTagId: 'Sim/Run', value: true, retry: 3 }]);
  t.is(extra.status, 400);
});

test('writes are refused while the driver’s allowWrites is false, naming the driver', async (t) => {
  const { api, operator } = await setup(t, { config: { ...simulator, allowWrites: false } });
  const response = await write(api, operator, [{ fullTagId: 'Sim/Setpoint', value: 5 }]);
  t.is(response.status, 400);
  t.deepEqual(response.json.errors, [
    { path: 'writes[0].fullTagId', message: 'Writes are disabled for driver Sim.' },
  ]);
  t.true(
    api.logs.lines.some((line) => /allowWrites is false/.test(String(line.msg))),
    'the start logged that writable tags are switched off',
  );
});

test('the rate limit counts items per account: 429 with Retry-After, nothing written, then allowed again', async (t) => {
  const { api, operator } = await setup(t, { writesPerSecond: 5 });
  const five = Array.from({ length: 5 }, (_, i) => ({ fullTagId: 'Sim/Setpoint', value: i }));
  t.is((await write(api, operator, five)).status, 200);
  const refused = await write(api, operator, [{ fullTagId: 'Sim/Setpoint', value: 99 }]);
  t.is(refused.status, 429);
  t.is(refused.json.code, 'write-rate-exceeded');
  t.is(refused.headers.get('retry-after'), '1');
  t.is(api.store.require('Sim/Setpoint').value, 4);
  // Another account has its own budget.
  await api.addUser('operator2', ['Operators']);
  const other = await api.signIn('operator2');
  t.is((await write(api, other, [{ fullTagId: 'Sim/Setpoint', value: 7 }])).status, 200);
  api.clock.advance(200);
  t.is((await write(api, operator, [{ fullTagId: 'Sim/Setpoint', value: 8 }])).status, 200);
  // A batch larger than one second's budget passes on a full bucket, then the account waits.
  api.clock.advance(1000);
  const batch = Array.from({ length: 20 }, (_, i) => ({ fullTagId: 'Sim/Setpoint', value: i }));
  t.is((await write(api, operator, batch)).status, 200);
  const after = await write(api, operator, [{ fullTagId: 'Sim/Setpoint', value: 1 }]);
  t.is(after.status, 429);
  t.is(after.headers.get('retry-after'), '4');
});

test('every write is audited with account, tag, previous and requested value, status', async (t) => {
  const { api, operator } = await setup(t);
  const previous = api.store.require('Sim/Setpoint').value;
  await write(api, operator, [
    { fullTagId: 'Sim/Setpoint', value: 12 },
    { fullTagId: 'Sim/Run', value: false },
  ]);
  const lines = auditLines(api);
  t.is(lines.length, 2);
  t.like(lines[0], {
    component: 'audit',
    event: 'tag-write',
    account: 'operator',
    fullTagId: 'Sim/Setpoint',
    previousValue: previous,
    requestedValue: 12,
    status: 'Good',
  });
  t.like(lines[1], { fullTagId: 'Sim/Run', requestedValue: false, status: 'Good' });
  t.false(api.logs.text().includes(operator), 'no token in the log');
});

test('a stopped driver answers Bad (Disconnected) per item', async (t) => {
  let writer: TagWriter | undefined;
  const api = await startApi(t, {
    deps: ({ store, clock, logs, audit }) => {
      writer = new TagWriter({ store, audit, logger: logs.logger, now: () => clock.now() });
      return { writer };
    },
  });
  const driver = createSimulatorDriver(simulatorDriverSchema.parse(simulator), {
    store: api.store,
    clock: api.clock,
    logger: api.logs.logger,
    stateDir: api.stateDir,
  });
  await driver.start();
  (writer as TagWriter).register(driver);
  await driver.stop();
  await api.addUser('operator', ['Operators']);
  const token = await api.signIn('operator');
  const response = await write(api, token, [{ fullTagId: 'Sim/Run', value: true }]);
  t.is(response.status, 200);
  t.like((response.json.results as unknown[])[0], { status: 'Bad', reason: 'Disconnected' });
});

test('browse marks the writable tags with their limits; a driver without allowWrites marks none', async (t) => {
  const { api, viewer } = await setup(t);
  const page = await api.request('/api/v2/Tags?pattern=Sim/*', { token: viewer });
  t.is(page.status, 200);
  const metadata = Object.fromEntries(
    (page.json.tags as { fullTagId: string; metadata?: Record<string, unknown> }[]).map(
      (sample) => [sample.fullTagId, sample.metadata ?? {}],
    ),
  );
  t.like(metadata['Sim/Setpoint'], { unit: '°C', writable: true, writeMin: 0, writeMax: 100 });
  t.is(metadata['Sim/Run']?.writable, true);
  t.is(metadata['Sim/Run']?.writeMin, undefined);
  t.is(metadata['Sim/Level']?.writable, undefined);
  // The sample routes stay as the driver wrote them.
  const sample = await api.request('/api/v2/Tags/Sample/Sim/Setpoint', { token: viewer });
  t.is((sample.json.metadata as Record<string, unknown> | undefined)?.writable, undefined);

  const off = await setup(t, { config: { ...simulator, name: 'Off', allowWrites: false } });
  const offPage = await off.api.request('/api/v2/Tags?pattern=Off/*', { token: off.viewer });
  for (const tag of offPage.json.tags as { metadata?: Record<string, unknown> }[]) {
    t.is(tag.metadata?.writable, undefined);
  }
});

/** One audit line for the whole request, a few kilobytes at most, never a value. */
function assertRequestLine(t: ExecutionContext, line: Record<string, unknown> | undefined) {
  t.truthy(line);
  t.like(line, { component: 'audit', event: 'tag-write', account: 'operator', status: 'Refused' });
  t.false('requestedValue' in (line ?? {}), 'no value');
  t.true(JSON.stringify(line).length < 6_000, `${JSON.stringify(line).length} bytes`);
}

test('a request the schema refuses leaves one audit line naming the account and the problems', async (t) => {
  const { api, operator } = await setup(t);
  const long = 'x'.repeat(2_000);
  const bodies: [string, string, Record<string, unknown>][] = [
    ['null', '{"writes":[{"fullTagId":"Sim/Setpoint","value":null}]}', { items: 1 }],
    ['object', '{"writes":[{"fullTagId":"Sim/Setpoint","value":{"a":1}}]}', { items: 1 }],
    ['array', '{"writes":[{"fullTagId":"Sim/Setpoint","value":[1]}]}', { items: 1 }],
    ['missing value', '{"writes":[{"fullTagId":"Sim/Setpoint"}]}', { items: 1 }],
    ['extra key', '{"writes":[{"fullTagId":"Sim/Setpoint","value":1,"retry":3}]}', { items: 1 }],
    ['1e400', '{"writes":[{"fullTagId":"Sim/Setpoint","value":1e400}]}', { items: 1 }],
    [
      '101 items',
      JSON.stringify({
        writes: Array.from({ length: 101 }, (_, i) => ({ fullTagId: `Sim/T${i}`, value: long })),
      }),
      { items: 101, moreTags: 91 },
    ],
    ['no writes', '[]', {}],
  ];
  for (const [name, raw, expected] of bodies) {
    const before = auditLines(api).length;
    const response = await api.request('/api/v2/Tags/Write', {
      method: 'POST',
      token: operator,
      headers: { 'Content-Type': 'application/json' },
      raw,
    });
    t.is(response.status, 400, name);
    const lines = auditLines(api).slice(before);
    t.is(lines.length, 1, name);
    const line = lines[0];
    assertRequestLine(t, line);
    t.like(line, { reason: 'ValidationFailed', code: 'validation-failed', ...expected }, name);
    t.deepEqual(
      line?.errors,
      (response.json.errors as { path: string; message: string }[]).slice(0, 10),
      `${name}: the problems the client got`,
    );
  }
  const many = auditLines(api).find((line) => line.items === 101);
  t.deepEqual(
    many?.fullTagIds,
    Array.from({ length: 10 }, (_, i) => `Sim/T${i}`),
  );
});

test('a body that is not JSON, too large or not application/json leaves one bounded audit line; without a token it is a 401 and none', async (t) => {
  const { api, operator } = await setup(t);
  const send = (raw: string, type = 'application/json', token: string | null = operator) =>
    api.request('/api/v2/Tags/Write', {
      method: 'POST',
      ...(token ? { token } : {}),
      headers: { 'Content-Type': type },
      raw,
    });
  const cases: [string, () => Promise<{ status: number }>, number, string][] = [
    ['broken JSON', () => send('{"writes":[{"fullTagId":"Sim/Setpoint",'), 400, 'bad-request'],
    [
      'over 256 KiB',
      () =>
        send(JSON.stringify({ writes: [{ fullTagId: 'Sim/Mode', value: 'x'.repeat(300_000) }] })),
      413,
      'payload-too-large',
    ],
    ['text/plain', () => send('{"writes":[]}', 'text/plain'), 415, 'unsupported-media-type'],
  ];
  for (const [name, request, status, code] of cases) {
    const before = auditLines(api).length;
    t.is((await request()).status, status, name);
    const lines = auditLines(api).slice(before);
    t.is(lines.length, 1, name);
    assertRequestLine(t, lines[0]);
    t.like(lines[0], { reason: 'UnreadableBody', code }, name);
  }
  t.true((auditLines(api).at(-2)?.bodyBytes as number) > 300_000, 'the declared size');
  const before = auditLines(api).length;
  const anonymous = await send('{"writes":[', 'application/json', null);
  t.is(anonymous.status, 401, 'the caller first, then the body');
  t.is(auditLines(api).length, before, 'no account, no audit line');
  // A path no route serves still refuses the body first, as before.
  const nowhere = await api.request('/api/v2/Nowhere', {
    method: 'POST',
    token: operator,
    headers: { 'Content-Type': 'application/json' },
    raw: '{"broken',
  });
  t.is(nowhere.status, 400);
  t.is(nowhere.json.code, 'bad-request');
});

test('a request refused by the rate limit is one audit line with its count, not one per item', async (t) => {
  const { api, operator } = await setup(t, { writesPerSecond: 5 });
  const five = Array.from({ length: 5 }, (_, i) => ({ fullTagId: 'Sim/Setpoint', value: i }));
  t.is((await write(api, operator, five)).status, 200);
  const before = auditLines(api).length;
  const big = Array.from({ length: 100 }, (_, i) => ({
    fullTagId: i % 2 === 0 ? 'Sim/Mode' : 'Sim/Setpoint',
    value: i % 2 === 0 ? 'x'.repeat(256) : i,
  }));
  for (let i = 0; i < 3; i++) t.is((await write(api, operator, big)).status, 429);
  const lines = auditLines(api).slice(before);
  t.is(lines.length, 3, 'one line per refused request');
  for (const line of lines) {
    assertRequestLine(t, line);
    t.like(line, { reason: 'RateLimited', items: 100, fullTagIds: ['Sim/Mode', 'Sim/Setpoint'] });
  }
  t.regex(String(lines[0]?.msg), /rate limit \(100 items\)/);
});
