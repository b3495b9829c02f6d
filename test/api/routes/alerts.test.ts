import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { AlarmJournal } from '../../../src/alarms/alarm-journal.js';
import { AlarmService } from '../../../src/alarms/alarm-service.js';
import { ProfileService } from '../../../src/profile/profile-service.js';
import { ProfileStore } from '../../../src/profile/profile-store.js';
import type { TagValue } from '../../../src/tags/sample.js';
import { signInRoles, startApi } from '../../helpers/api-harness.js';
import { openSse } from '../../helpers/sse-client.js';
import { tempDir } from '../../helpers/temp-dir.js';

const basePath = '/api/v2/Alerts';

const baseProfile = {
  alarms: [
    {
      name: 'Hot',
      source: 'Line/Temp',
      condition: 'High',
      limit: 90,
      priority: 'High',
      area: 'Hall2/Ovens',
    },
    {
      name: 'Door',
      source: 'Line/Door',
      condition: 'Digital',
      value: true,
      priority: 'Urgent',
      area: 'Hall1',
    },
    {
      name: 'Level',
      source: 'Line/Level',
      condition: 'Low',
      limit: 10,
      priority: 'Low',
      maxShelveMinutes: 5,
    },
  ],
};

async function setup(t: ExecutionContext) {
  const folder = await tempDir(t);
  const profileFile = join(folder, 'profile.json');
  await writeFile(profileFile, JSON.stringify(baseProfile));
  let service: AlarmService | undefined;
  let journal: AlarmJournal | undefined;
  const api = await startApi(t, {
    deps: async (base) => {
      const store = new ProfileStore({ file: profileFile, secretBox: base.secretBox });
      const loaded = await store.load();
      const profile = new ProfileService(store, loaded, base.audit);
      journal = new AlarmJournal({ file: join(base.stateDir, 'alarms.db') });
      service = new AlarmService({
        store: base.store,
        clock: base.clock,
        logger: base.logs.logger,
        journal,
        definitions: loaded.alarms,
      });
      await service.start();
      const running = service;
      t.teardown(() => running.stop());
      return { profile, alarms: service };
    },
  });
  const tokens = await signInRoles(api);
  const call = (path: string, options: { method?: string; body?: unknown; token?: string } = {}) =>
    api.request(`${basePath}${path}`, { token: tokens.operator, ...options });
  const post = (path: string, body: unknown = {}, token = tokens.operator) =>
    call(path, { method: 'POST', body, token });
  const write = (path: string, value: TagValue) =>
    api.store.write([
      {
        fullTagId: path,
        utcTimestamp: new Date(api.clock.now()).toISOString(),
        quality: 'Good',
        value,
      },
    ]);
  write('Line/Temp', 50);
  write('Line/Door', false);
  write('Line/Level', 50);
  const audit = () => api.logs.lines.filter((line) => line.component === 'audit');
  return {
    api,
    call,
    post,
    write,
    tokens,
    audit,
    profileFile,
    service: service as AlarmService,
    journal: journal as AlarmJournal,
  };
}

test('the list holds alarms that need attention, by priority then newest change; filters apply', async (t) => {
  const { call, write, api } = await setup(t);
  t.deepEqual((await call('')).body, []);
  write('Line/Temp', 95);
  api.clock.advance(1000);
  write('Line/Level', 5);
  api.clock.advance(1000);
  write('Line/Door', true);
  const list = await call('');
  t.is(list.status, 200);
  t.deepEqual(
    (list.body as { name: string }[]).map((alarm) => alarm.name),
    ['Door', 'Hot', 'Level'],
  );
  t.like((list.body as object[])[1], {
    name: 'Hot',
    state: 'Unacknowledged',
    active: true,
    acknowledged: false,
    value: 95,
    limit: 90,
    priority: 'High',
    severity: 750,
    area: 'Hall2/Ovens',
    quality: 'Good',
    message: 'Hot: 95 is above the high limit 90.',
  });
  const names = async (query: string) =>
    ((await call(query)).body as { name: string }[]).map((alarm) => alarm.name);
  t.deepEqual(await names('?area=Hall2'), ['Hot']);
  t.deepEqual(await names('?priority=Low,Urgent'), ['Door', 'Level']);
  write('Line/Level', 50);
  t.deepEqual(await names('?state=ReturnedUnacknowledged'), ['Level']);
  const bad = await call('?state=Sleeping');
  t.is(bad.status, 400);
  t.is((bad.json.errors as { path: string }[])[0]?.path, 'state[0]');
  await call('/Level/Acknowledge', { method: 'POST', body: {} });
  t.deepEqual(await names(''), ['Door', 'Hot']);
  t.deepEqual(await names('?all=true'), ['Door', 'Hot', 'Level']);
});

test('acknowledge: answered once journaled, audited; nothing to acknowledge is 409', async (t) => {
  const { post, write, audit, call, journal } = await setup(t);
  write('Line/Temp', 95);
  const done = await post('/Hot/Acknowledge', { comment: 'Door open, closing it.' });
  t.is(done.status, 200);
  t.like(done.json, { name: 'Hot', state: 'Acknowledged', acknowledged: true });
  const last = journal.query({ fromMs: 0, toMs: Number.MAX_SAFE_INTEGER, limit: 1 })[0];
  t.like(last, { event: 'Acknowledged', account: 'operator', comment: 'Door open, closing it.' });
  t.like(audit().at(-1), {
    event: 'alarm-acknowledged',
    alarm: 'Hot',
    username: 'operator',
    comment: 'Door open, closing it.',
    state: 'Acknowledged',
  });
  const again = await post('/Hot/Acknowledge');
  t.is(again.status, 409);
  t.is(again.json.code, 'alarm-state-conflict');
  const unknown = await post('/Nope/Acknowledge');
  t.is(unknown.status, 404);
  t.is((await call('/Nope')).status, 404);
  t.is((await call('/Hot')).json.state, 'Acknowledged');
  const badBody = await post('/Hot/Acknowledge', { comment: 5 });
  t.is(badBody.status, 400);
  t.is((badBody.json.errors as { path: string }[])[0]?.path, 'comment');
});

test('bulk acknowledge answers one result per name', async (t) => {
  const { post, write } = await setup(t);
  write('Line/Temp', 95);
  write('Line/Door', true);
  const response = await post('/Acknowledge', {
    names: ['Hot', 'Nope', 'Level', 'Door'],
    comment: 'Shift start',
  });
  t.is(response.status, 200);
  const results = response.json.results as {
    name: string;
    status: number;
    code?: string;
    alert?: { state: string };
  }[];
  t.deepEqual(
    results.map(({ name, status, code }) => [name, status, code]),
    [
      ['Hot', 200, undefined],
      ['Nope', 404, 'not-found'],
      ['Level', 409, 'alarm-state-conflict'],
      ['Door', 200, undefined],
    ],
  );
  t.is(results[0]?.alert?.state, 'Acknowledged');
  t.is((await post('/Acknowledge', { names: [] })).status, 400);
});

test('shelve (timed, one-shot), unshelve; durations are checked against maxShelveMinutes', async (t) => {
  const { post, write, api, call } = await setup(t);
  write('Line/Level', 5);
  const tooLong = await post('/Level/Shelve', { durationMinutes: 6, reason: 'x' });
  t.is(tooLong.status, 400);
  t.deepEqual(tooLong.json.errors, [
    {
      path: 'durationMinutes',
      message:
        "A timed shelve lasts more than 0 and at most 5 minutes (maxShelveMinutes of alarm 'Level').",
    },
  ]);
  t.deepEqual(
    ((await post('/Level/Shelve', { kind: 'Timed' })).json.errors as { path: string }[]).map(
      (e) => e.path,
    ),
    ['durationMinutes'],
  );
  t.is((await post('/Level/Shelve', { kind: 'OneShot', durationMinutes: 1 })).status, 400);
  const shelved = await post('/Level/Shelve', {
    durationMinutes: 5,
    reason: 'Sensor being replaced',
  });
  t.is(shelved.status, 200);
  t.like(shelved.json, {
    state: 'Shelved',
    shelve: {
      kind: 'Timed',
      account: 'operator',
      reason: 'Sensor being replaced',
      until: new Date(api.clock.now() + 5 * 60_000).toISOString(),
    },
  });
  api.clock.advance(5 * 60_000);
  t.is((await call('/Level')).json.state, 'Unacknowledged', 'ended by itself');
  t.is((await post('/Level/Shelve', { kind: 'OneShot' })).json.state, 'Shelved');
  t.is((await post('/Level/Unshelve', { comment: 'Back' })).json.state, 'Unacknowledged');
  const notShelved = await post('/Level/Unshelve');
  t.is(notShelved.status, 409);
  t.is(notShelved.json.code, 'alarm-state-conflict');
});

test('permissions: viewers read, operators acknowledge and shelve, administrators manage', async (t) => {
  const { post, call, tokens, write } = await setup(t);
  write('Line/Temp', 95);
  t.is((await call('', { token: tokens.viewer })).status, 200);
  t.is((await call('/Journal', { token: tokens.viewer })).status, 200);
  t.is((await call('/Definitions', { token: tokens.viewer })).status, 200);
  t.is((await post('/Hot/Acknowledge', {}, tokens.viewer)).status, 403);
  t.is((await post('/Acknowledge', { names: ['Hot'] }, tokens.viewer)).status, 403);
  t.is((await post('/Hot/Shelve', { durationMinutes: 1 }, tokens.viewer)).status, 403);
  t.is((await post('/Hot/OutOfService', {}, tokens.operator)).status, 403);
  const definition = { name: 'X', source: 'Line/Temp', condition: 'BadQuality' };
  t.is((await call('/Definitions/X', { method: 'PUT', body: definition })).status, 403);
  t.is((await call('/Definitions/Hot', { method: 'DELETE' })).status, 403);
  t.is((await call('', { token: '' })).status, 401);

  const out = await post('/Hot/OutOfService', { comment: 'Calibration' }, tokens.admin);
  t.is(out.status, 200);
  t.is(out.json.state, 'OutOfService');
  t.is((await post('/Hot/OutOfService', {}, tokens.admin)).json.code, 'alarm-state-conflict');
  t.is((await post('/Hot/InService', {}, tokens.admin)).json.state, 'Unacknowledged');
});

test('the journal: filters, paging, and a CSV export a spreadsheet cannot run', async (t) => {
  const { post, write, call, api } = await setup(t);
  write('Line/Temp', 95);
  api.clock.advance(1000);
  write('Line/Door', true);
  api.clock.advance(1000);
  await post('/Hot/Acknowledge', { comment: '=HYPERLINK("http://evil")' });
  const all = await call('/Journal');
  const entries = all.json.entries as { seq: number; name: string; event: string }[];
  t.deepEqual(
    entries.map((entry) => `${entry.name}:${entry.event}`),
    ['Hot:Acknowledged', 'Door:Activated', 'Hot:Activated'],
  );
  const page = await call(`/Journal?limit=1&afterSeq=${entries[0]?.seq}`);
  t.deepEqual(
    (page.json.entries as { name: string }[]).map((entry) => entry.name),
    ['Door'],
  );
  t.deepEqual(
    (
      (await call('/Journal?event=Activated&area=Hall1&order=asc')).json.entries as {
        name: string;
      }[]
    ).map((entry) => entry.name),
    ['Door'],
  );
  const old = await call('/Journal?from=now-1d&to=now-1h');
  t.deepEqual(old.json.entries, []);
  const bad = await call('/Journal?from=yesterday&limit=0');
  t.is(bad.status, 400);
  t.deepEqual((bad.json.errors as { path: string }[]).map((e) => e.path).sort(), ['from', 'limit']);

  const csv = await call('/Journal?format=csv&order=asc');
  t.is(csv.status, 200);
  t.regex(csv.headers.get('content-type') ?? '', /^text\/csv/);
  t.regex(csv.headers.get('content-disposition') ?? '', /attachment; filename="alarm-journal.csv"/);
  const lines = String(csv.body).trimEnd().split('\r\n');
  t.is(
    lines[0],
    'seq,time,name,event,from,to,active,acknowledged,value,limit,account,comment,priority,severity,area,message',
  );
  t.is(lines.length, 4);
  t.true(lines[3]?.includes(`"'=HYPERLINK(""http://evil"")"`), lines[3]);
});

test('the stream sends every transition once journaled, with its seq', async (t) => {
  const { api, write, post, tokens } = await setup(t);
  const stream = await openSse(`${api.baseUrl}${basePath}/Stream`, {
    Authorization: `Bearer ${tokens.viewer}`,
  });
  t.teardown(() => stream.close());
  t.is(stream.status, 200);
  await stream.until((blocks) => blocks.some((block) => block.data !== undefined));
  t.deepEqual(stream.events()[0], []);
  write('Line/Temp', 95);
  await post('/Hot/Acknowledge', { comment: 'ok' });
  await stream.until(() => stream.events().length >= 3, 'two transitions');
  const [activated, acknowledged] = stream.events().slice(1).flat() as {
    seq: number;
    event: string;
    account?: string;
  }[];
  t.like(activated, { event: 'Activated' });
  t.like(acknowledged, { event: 'Acknowledged', account: 'operator' });
  t.is(acknowledged?.seq, (activated?.seq ?? 0) + 1);
  const refused = await openSse(`${api.baseUrl}${basePath}/Stream`);
  t.is(refused.status, 401);
});

test('definitions: PUT creates or replaces in the profile and in force; DELETE removes', async (t) => {
  const { call, tokens, write, profileFile, audit } = await setup(t);
  const admin = { token: tokens.admin };
  const created = await call('/Definitions/Pressure', {
    ...admin,
    method: 'PUT',
    body: {
      name: 'Pressure',
      source: 'Line/Temp',
      condition: 'High',
      limit: 40,
      priority: 'Urgent',
    },
  });
  t.is(created.status, 201);
  t.like(created.json, { name: 'Pressure', limit: 40, onDelayMs: 0, enabled: true });
  t.like((await call('/Pressure', admin)).json, { state: 'Unacknowledged', value: 50 });
  t.like(audit().at(-1), { event: 'alarm-definition-saved', alarm: 'Pressure', username: 'admin' });
  const onDisk = JSON.parse(await readFile(profileFile, 'utf8')) as { alarms: { name: string }[] };
  t.deepEqual(
    onDisk.alarms.map((alarm) => alarm.name),
    ['Hot', 'Door', 'Level', 'Pressure'],
  );

  const replaced = await call('/Definitions/Pressure', {
    ...admin,
    method: 'PUT',
    body: { name: 'Pressure', source: 'Line/Temp', condition: 'High', limit: 45, priority: 'High' },
  });
  t.is(replaced.status, 200);
  // The state stays; `limit` is that of its last transition until the next one.
  t.like((await call('/Pressure', admin)).json, {
    state: 'Unacknowledged',
    priority: 'High',
    limit: 40,
  });
  write('Line/Temp', 44);
  t.like((await call('/Pressure', admin)).json, { state: 'ReturnedUnacknowledged', limit: 45 });

  const invalid = await call('/Definitions/Pressure', {
    ...admin,
    method: 'PUT',
    body: { name: 'Pressure', source: 'Line/Temp', condition: 'High' },
  });
  t.is(invalid.status, 400);
  t.deepEqual(invalid.json.errors, [{ path: 'limit', message: 'Required for condition High.' }]);
  const renamed = await call('/Definitions/Pressure', {
    ...admin,
    method: 'PUT',
    body: { name: 'Other', source: 'Line/Temp', condition: 'BadQuality' },
  });
  t.is(renamed.status, 400);
  t.is((renamed.json.errors as { path: string }[])[0]?.path, 'name');
  const reserved = await call('/Definitions/Journal', {
    ...admin,
    method: 'PUT',
    body: { name: 'Journal', source: 'Line/Temp', condition: 'BadQuality' },
  });
  t.is(reserved.status, 400);

  t.is((await call('/Definitions/Pressure', { ...admin, method: 'DELETE' })).status, 204);
  t.is((await call('/Pressure', admin)).status, 404);
  t.is((await call('/Definitions/Pressure', admin)).status, 404);
  t.is((await call('/Definitions/Pressure', { ...admin, method: 'DELETE' })).status, 404);
  t.deepEqual(
    ((await call('/Definitions', admin)).body as { name: string }[]).map((d) => d.name),
    ['Hot', 'Door', 'Level'],
  );
});

test('statistics: rates per 10 minutes, floods, most frequent, chattering, stale, shelving', async (t) => {
  const { call, write, api, post } = await setup(t);
  const start = api.clock.now();
  // 12 activations of Hot within 10 minutes: a flood, and chattering.
  for (let i = 0; i < 12; i++) {
    write('Line/Temp', 95);
    api.clock.advance(10_000);
    write('Line/Temp', 50);
    api.clock.advance(10_000);
  }
  write('Line/Door', true);
  await post('/Level/Shelve', { durationMinutes: 1 });
  api.clock.advance(25 * 3_600_000);
  const iso = (ms: number) => new Date(ms).toISOString();
  // A day later the operator's token has expired: sign in again.
  const token = await api.signIn('operator');
  const response = await call(`/Statistics?from=${iso(start)}&to=${iso(start + 26 * 3_600_000)}`, {
    token,
  });
  t.is(response.status, 200);
  t.like(response.json, {
    activations: 13,
    byPriority: { Low: 0, Medium: 0, High: 12, Urgent: 1 },
    windows: 156,
    floodWindows: 1,
    perTenMinutes: { peak: 13 },
    mostFrequent: [
      { name: 'Hot', activations: 12 },
      { name: 'Door', activations: 1 },
    ],
    // One every 20 s: four within any 60 s, both ends included.
    chattering: [{ name: 'Hot', mostIn60s: 4 }],
    shelved: { actions: 1, now: 0 },
  });
  t.deepEqual(
    (response.json.stale as { name: string }[]).map((alarm) => alarm.name),
    ['Door'],
  );
  t.is((response.json.floodShare as number).toFixed(4), (1 / 156).toFixed(4));
  // The series of the console's chart: one count per window, summing to the activations.
  const perWindow = response.json.perWindow as number[];
  t.is(perWindow.length, 156);
  t.is(
    perWindow.reduce((sum, count) => sum + count, 0),
    13,
  );
  t.is(Math.max(...perWindow), 13);
  const reversed = await call('/Statistics?from=now&to=now-1h', { token });
  t.is(reversed.status, 400);
});

test('a journal that cannot be written refuses the action: 503, and nothing changed', async (t) => {
  const { post, write, journal, call } = await setup(t);
  write('Line/Temp', 95);
  journal.close();
  const refused = await post('/Hot/Acknowledge', { comment: 'x' });
  t.is(refused.status, 503);
  t.is(refused.json.code, 'alarm-journal-unavailable');
  t.is((await call('/Hot')).json.state, 'Unacknowledged');
  journal.open();
  t.is((await post('/Hot/Acknowledge')).status, 200);
});
