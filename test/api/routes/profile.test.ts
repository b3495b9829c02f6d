import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { maxBodyBytes } from '../../../src/api/json-bodies.js';
import { type Json, managedDaemon } from '../../helpers/managed-daemon.js';

async function editProfile(file: string, edit: (profile: Json & { drivers: Json[] }) => void) {
  const profile = JSON.parse(await readFile(file, 'utf8'));
  edit(profile);
  await writeFile(file, JSON.stringify(profile, null, 2));
}

test('the profile routes need ProfileManage: Operators get 403', async (t) => {
  const { request, operator } = await managedDaemon(t);
  t.is((await request('/api/v2/Profile', { token: operator })).status, 403);
  const reload = await request('/api/v2/Profile/Reload', { method: 'POST', token: operator });
  t.is(reload.status, 403);
});

test('GET Profile answers the profile in force with every secret masked', async (t) => {
  const { request } = await managedDaemon(t);
  const profile = await request('/api/v2/Profile');
  t.is(profile.status, 200);
  const webhooks = (profile.json.publishers as { webhooks: Json[] }).webhooks;
  t.is(webhooks[0]?.destinationUrl, '********');
  t.is((profile.json.drivers as Json[])[0]?.name, 'Demo');
  t.false(JSON.stringify(profile.json).includes('127.0.0.1:9000'));
});

test('Reload restarts the changed driver only, and lists what needs a restart', async (t) => {
  const { request, profileFile } = await managedDaemon(t);
  const vehicleSince = (await request('/api/v2/Drivers/Vehicle')).json.since;
  const unchanged = await request('/api/v2/Profile/Reload', { method: 'POST' });
  t.is(unchanged.status, 200);
  t.deepEqual(unchanged.json.restarted, []);
  t.true((unchanged.json.unchanged as string[]).includes('drivers/Demo'));

  await editProfile(profileFile, (profile) => {
    (profile.drivers[0] as Json).scanIntervalMs = 500;
    (profile.collections as Json[]).push({ name: 'Vehicle', members: ['Vehicle/**'] });
    profile.security = { accessTokenMinutes: 30 };
  });
  const reloaded = await request('/api/v2/Profile/Reload', { method: 'POST' });
  t.is(reloaded.status, 200);
  t.deepEqual(reloaded.json.restarted, ['drivers/Demo']);
  t.deepEqual(reloaded.json.started, ['collections/Vehicle']);
  t.deepEqual(reloaded.json.requiresRestart, ['security']);
  t.deepEqual(reloaded.json.failed, []);
  t.true((reloaded.json.unchanged as string[]).includes('drivers/Vehicle'));
  t.is((await request('/api/v2/Drivers/Vehicle')).json.since, vehicleSince);
  t.is((await request('/api/v2/Drivers/Demo')).json.state, 'Running');
  const inForce = (await request('/api/v2/Profile')).json;
  t.is((inForce.drivers as Json[])[0]?.scanIntervalMs, 500);
  t.is((await request('/api/v2/Collections/Vehicle')).status, 200);
});

test('Reload refuses an invalid profile with every error and keeps the running configuration', async (t) => {
  const { request, profileFile } = await managedDaemon(t);
  await editProfile(profileFile, (profile) => {
    (profile.drivers[0] as Json).scanIntervalMs = 'fast';
    (profile.drivers[1] as Json).colour = 'red';
    profile.history = { backend: 'sqlite', retentionDays: -1 };
  });
  const refused = await request('/api/v2/Profile/Reload', { method: 'POST' });
  t.is(refused.status, 400);
  t.is(refused.json.code, 'profile-invalid');
  const paths = (refused.json.errors as { path: string }[]).map((error) => error.path).sort();
  t.deepEqual(paths, ['drivers[0].scanIntervalMs', 'drivers[1].colour', 'history.retentionDays']);
  // Nothing changed: the API answers and the drivers run as before.
  t.is((await request('/api/v2/Drivers/Demo')).json.state, 'Running');
  t.is(((await request('/api/v2/Profile')).json.drivers as Json[])[0]?.scanIntervalMs, 1000);

  await writeFile(profileFile, '{ "drivers": [');
  const corrupt = await request('/api/v2/Profile/Reload', { method: 'POST' });
  t.is(corrupt.status, 400);
  t.is((corrupt.json.errors as { path: string }[])[0]?.path, '(root)');
});

test('Reload restarts history, publishers and the extensions server that changed; a driver that cannot start is reported', async (t) => {
  const { request, profileFile, daemon } = await managedDaemon(t);
  const historyBefore = daemon.history;
  await editProfile(profileFile, (profile) => {
    (profile.history as Json).retentionDays = 3;
    const webhooks = (profile.publishers as { webhooks: Json[] }).webhooks;
    (webhooks[0] as Json).updateIntervalSeconds = 20;
    (profile.extensions as Json).enableDocs = true;
    // The CAN driver now names a DBC file that is not there: left out, the others run.
    (profile.drivers[1] as Json).dbcFile = 'missing.dbc';
  });
  const reloaded = await request('/api/v2/Profile/Reload', { method: 'POST' });
  t.is(reloaded.status, 200);
  t.deepEqual([...(reloaded.json.restarted as string[])].sort(), [
    'extensions',
    'history',
    'publishers.webhooks/demo-receiver',
  ]);
  const failed = reloaded.json.failed as { component: string; message: string }[];
  t.deepEqual(
    failed.map((entry) => entry.component),
    ['drivers/Vehicle'],
  );
  t.regex(failed[0]?.message ?? '', /dbcFile/);
  t.not(daemon.history, historyBefore);
  t.truthy(daemon.history);
  // The extensions server answers on its new listener; the CAN tags left with their driver,
  // which is listed Failed.
  const extensions = daemon.extensionsUrl() as string;
  t.is((await fetch(`${extensions}/swagger/v2/swagger.json`)).status, 200);
  const vehicle = await request('/api/v2/Drivers/Vehicle');
  t.like(vehicle.json, {
    state: 'Failed',
    tagCount: 0,
    message: 'A file the driver names cannot be used (dbcFile); the gateway log says why.',
  });
  t.deepEqual((await request('/api/v2/Tags?pattern=Vehicle/**')).json.tags, []);
  t.is((await request('/api/v2/Drivers/Demo')).json.state, 'Running');

  // Removing the section stops the history; its route then answers as without history.
  await editProfile(profileFile, (profile) => {
    delete profile.history;
  });
  const removed = await request('/api/v2/Profile/Reload', { method: 'POST' });
  t.true((removed.json.stopped as string[]).includes('history'));
  t.is(daemon.history, undefined);
});

test('Reload starts, restarts and stops MQTT publishers like webhooks', async (t) => {
  const { request, profileFile } = await managedDaemon(t);
  const mqtt = {
    name: 'site-broker',
    // Nothing listens there: the publisher runs and keeps retrying, which is all reload needs.
    brokerUrl: 'mqtt://127.0.0.1:9',
    collections: ['Line1'],
    format: 'json',
    loggingMode: 'On Change',
    updateIntervalMs: 1000,
    topicPrefix: 'plant/line1',
  };
  await editProfile(profileFile, (profile) => {
    (profile.publishers as Json).mqtt = [mqtt];
  });
  const added = await request('/api/v2/Profile/Reload', { method: 'POST' });
  t.deepEqual(added.json.started, ['publishers.mqtt/site-broker']);
  await editProfile(profileFile, (profile) => {
    (profile.publishers as Json).mqtt = [{ ...mqtt, topicPrefix: 'plant/line1b' }];
  });
  const changed = await request('/api/v2/Profile/Reload', { method: 'POST' });
  t.deepEqual(changed.json.restarted, ['publishers.mqtt/site-broker']);
  t.true((changed.json.unchanged as string[]).includes('publishers.webhooks/demo-receiver'));
  await editProfile(profileFile, (profile) => {
    (profile.publishers as Json).mqtt = [];
  });
  const removed = await request('/api/v2/Profile/Reload', { method: 'POST' });
  t.deepEqual(removed.json.stopped, ['publishers.mqtt/site-broker']);
});

test('reloads run one at a time, and onReload tells start and end of each', async (t) => {
  const { request, profileFile, daemon } = await managedDaemon(t);
  const events: string[] = [];
  daemon.onReload((event) => {
    events.push(
      `${event.phase}:${event.source}${event.phase === 'end' && event.error ? ':error' : ''}`,
    );
  });
  await editProfile(profileFile, (profile) => {
    (profile.drivers[0] as Json).scanIntervalMs = 750;
  });
  const [first, second] = await Promise.all([
    request('/api/v2/Profile/Reload', { method: 'POST' }),
    daemon.reload('signal'),
  ]);
  t.is(first.status, 200);
  // Whichever ran second found nothing left to change.
  const restarted = [first.json.restarted, second.restarted] as string[][];
  t.deepEqual(restarted.map((list) => list.length).sort(), [0, 1]);
  t.deepEqual(events.filter((event) => event.startsWith('end')).length, 2);
  t.true(events.includes('start:api') && events.includes('start:signal'));

  await writeFile(profileFile, '[]');
  await t.throwsAsync(daemon.reload('signal'), { code: 'profile-invalid' });
  t.is(events.at(-1), 'end:signal:error');
});

test('Check lists schema errors, start-up problems and missing collections at once, changing nothing', async (t) => {
  const { request, operator, stateDir } = await managedDaemon(t);
  const inForce = (await request('/api/v2/Profile')).json as Json & { drivers: Json[] };
  const before = JSON.stringify(inForce);
  const valid = await request('/api/v2/Profile/Check', { method: 'POST', body: inForce });
  t.is(valid.status, 200);
  t.deepEqual(
    { valid: valid.json.valid, problems: valid.json.problems, checks: valid.json.startupChecks },
    { valid: true, problems: [], checks: 'all' },
    'the masked destination URL stands for the running one',
  );

  const edited = structuredClone(inForce);
  (edited.drivers[0] as Json).scanIntervalMs = 'fast';
  (edited.drivers[1] as Json).dbcFile = 'missing.dbc';
  (edited.publishers as { webhooks: Json[] }).webhooks[0] = {
    ...(edited.publishers as { webhooks: Json[] }).webhooks[0],
    collections: ['Nowhere'],
  };
  const checked = await request('/api/v2/Profile/Check', { method: 'POST', body: edited });
  t.is(checked.status, 200);
  t.false(checked.json.valid);
  t.is(checked.json.startupChecks, 'valid-parts');
  const problems = checked.json.problems as { path: string; effect?: string }[];
  t.deepEqual(
    problems.map((problem) => [problem.path, problem.effect ?? 'schema']),
    [
      ['drivers[0].scanIntervalMs', 'schema'],
      ['drivers[1].dbcFile', 'driver-left-out'],
    ],
  );
  const fixed = structuredClone(edited);
  (fixed.drivers[0] as Json).scanIntervalMs = 1000;
  (fixed.drivers[1] as Json).dbcFile = (inForce.drivers[1] as Json).dbcFile;
  const warned = await request('/api/v2/Profile/Check', { method: 'POST', body: fixed });
  t.true(warned.json.valid);
  t.deepEqual(warned.json.warnings, [
    {
      path: 'publishers.webhooks[0].collections[0]',
      message: `Collection 'Nowhere' does not exist in the profile: publisher '${((inForce.publishers as { webhooks: Json[] }).webhooks[0] as Json).name}' stays in Error until it is created.`,
    },
  ]);

  // A check must not become a way to probe the state directory's key files.
  const probe = structuredClone(fixed);
  (probe.drivers[1] as Json).dbcFile = join(stateDir, 'secret.key');
  const refused = await request('/api/v2/Profile/Check', { method: 'POST', body: probe });
  t.is(refused.status, 400);
  t.is((refused.json.errors as { path: string }[])[0]?.path, 'drivers[1].dbcFile');
  t.is(JSON.stringify((await request('/api/v2/Profile')).json), before, 'nothing changed');
  t.is(
    (await request('/api/v2/Profile/Check', { method: 'POST', body: inForce, token: operator }))
      .status,
    403,
  );
});

test('Check takes a plant-sized profile: a driver of 10,000 Modbus tags (over 256 KiB)', async (t) => {
  const { request } = await managedDaemon(t);
  const inForce = (await request('/api/v2/Profile')).json as Json & { drivers: Json[] };
  const plant = {
    type: 'modbus',
    name: 'Plant',
    transport: { kind: 'tcp', host: '127.0.0.1', port: 1 },
    tags: Array.from({ length: 10_000 }, (_, i) => ({
      name: `Area${Math.floor(i / 1000)}/Tag${i}`,
      table: 'holdingRegister',
      address: i,
      type: 'uint16',
      description: `Zone ${i}`,
    })),
  };
  const document = { ...inForce, drivers: [...inForce.drivers, plant] };
  t.true(JSON.stringify(document).length > maxBodyBytes, 'over the default limit');
  const checked = await request('/api/v2/Profile/Check', { method: 'POST', body: document });
  t.is(checked.status, 200);
  t.like(checked.json, { valid: true, problems: [] });
  // A duplicate name is found at its path in the big list.
  (plant.tags[9_999] as Json).name = 'Area0/Tag0';
  const wrong = await request('/api/v2/Profile/Check', { method: 'POST', body: document });
  t.is(wrong.status, 200);
  t.deepEqual(
    [...new Set((wrong.json.problems as { path: string }[]).map((problem) => problem.path))],
    [`drivers[${inForce.drivers.length}].tags[9999].name`],
  );
});
