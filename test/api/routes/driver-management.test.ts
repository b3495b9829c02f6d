import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { configurationBodyBytes, maxBodyBytes } from '../../../src/api/json-bodies.js';
import { requireDerivedTagManage } from '../../../src/api/routes/driver-management.js';
import type { Permission } from '../../../src/auth/permissions.js';
import { managedDaemon } from '../../helpers/managed-daemon.js';
import { answerTo, closed, openSocket } from '../../helpers/raw-http.js';

type Json = Record<string, unknown>;

const press = {
  type: 'simulator',
  name: 'Press',
  scanIntervalMs: 1000,
  tags: [{ name: 'Line2/Force', kind: 'sine' }],
};

test("a serial port named in tagd's state directory is refused: a key is never opened as a device", async (t) => {
  const { request, profileFile, stateDir } = await managedDaemon(t);
  const saved = await readFile(profileFile, 'utf8');
  const rtu = {
    type: 'modbus',
    name: 'Line',
    transport: { kind: 'rtu', path: join(stateDir, 'jwt.key') },
    tags: [{ name: 'Speed', table: 'holdingRegister', address: 0, type: 'uint16' }],
  };
  const refusedRtu = await request('/api/v2/Drivers', { method: 'POST', body: rtu });
  t.is(refusedRtu.status, 400);
  t.deepEqual(refusedRtu.json.errors, [
    {
      path: 'transport.path',
      message: "Files in tagd's state directory cannot be named through the API.",
    },
  ]);
  const slcan = {
    type: 'can',
    name: 'Bus',
    dbcFile: 'can/demo-vehicle.dbc',
    transport: { kind: 'slcan', port: join(stateDir, 'secret.key'), bitrate: 500_000 },
  };
  const refusedCan = await request('/api/v2/Drivers', { method: 'POST', body: slcan });
  t.is(refusedCan.status, 400);
  t.deepEqual(
    (refusedCan.json.errors as { path: string }[]).map((error) => error.path),
    ['transport.port'],
  );
  t.is(await readFile(profileFile, 'utf8'), saved, 'nothing saved, nothing opened');
});

test('driver management needs DriverManage: Operators get 403', async (t) => {
  const { request, operator } = await managedDaemon(t);
  const calls = [
    { path: '/api/v2/Drivers', method: 'POST', body: press },
    { path: '/api/v2/Drivers/Demo', method: 'PUT', body: { ...press, name: 'Demo' } },
    { path: '/api/v2/Drivers/Demo', method: 'DELETE' },
    { path: '/api/v2/Drivers/Demo/Configuration', method: 'GET' },
  ];
  for (const call of calls) {
    const response = await request(call.path, { ...call, token: operator });
    t.is(response.status, 403, `${call.method} ${call.path}`);
  }
  // What they may do stays: reading the drivers' states.
  t.is((await request('/api/v2/Drivers', { token: operator })).status, 200);
});

test('a simulator added over the API starts at once; PUT restarts it alone; DELETE removes its tags', async (t) => {
  const { request, clock, logs, profileFile } = await managedDaemon(t);
  const demoSince = (await request('/api/v2/Drivers/Demo')).json.since;

  const created = await request('/api/v2/Drivers', { method: 'POST', body: press });
  t.is(created.status, 201);
  t.deepEqual((created.json.reload as Json).started, ['drivers/Press']);
  t.true(((created.json.reload as Json).unchanged as string[]).includes('drivers/Demo'));
  t.is((created.json.report as Json).state, 'Running');
  const force = await request('/api/v2/Tags/Sample/Press/Line2/Force');
  t.is(force.status, 200);
  t.is(force.json.quality, 'Good');
  t.true((await readFile(profileFile, 'utf8')).includes('"Press"'));

  const again = await request('/api/v2/Drivers', { method: 'POST', body: press });
  t.is(again.status, 409);
  t.is(again.json.code, 'already-exists');

  const replaced = await request('/api/v2/Drivers/Press', {
    method: 'PUT',
    body: { ...press, scanIntervalMs: 500, tags: [{ name: 'Line2/Stroke', kind: 'counter' }] },
  });
  t.is(replaced.status, 200);
  t.deepEqual((replaced.json.reload as Json).restarted, ['drivers/Press']);
  t.is((replaced.json.configuration as Json).scanIntervalMs, 500);
  // The tag it no longer has is gone; the new one is there; the other driver never restarted.
  t.is((await request('/api/v2/Tags/Sample/Press/Line2/Force')).status, 404);
  t.is((await request('/api/v2/Tags/Sample/Press/Line2/Stroke')).status, 200);
  t.is((await request('/api/v2/Drivers/Demo')).json.since, demoSince);
  const demoTag = '/api/v2/Tags/Sample/Demo/Line1/Temperature';
  const before = (await request(demoTag)).json.utcTimestamp as string;
  clock.advance(1000);
  const after = (await request(demoTag)).json.utcTimestamp as string;
  t.true(Date.parse(after) > Date.parse(before), 'the other driver keeps scanning');

  const config = await request('/api/v2/Drivers/Press/Configuration');
  t.is(config.status, 200);
  // As saved: defaults filled in.
  t.like((config.json.tags as Json[])[0], { name: 'Line2/Stroke', kind: 'counter', start: 0 });

  const removed = await request('/api/v2/Drivers/Press', { method: 'DELETE' });
  t.is(removed.status, 204);
  t.is((await request('/api/v2/Tags/Sample/Press/Line2/Stroke')).status, 404);
  t.is((await request('/api/v2/Drivers/Press')).status, 404);
  t.false((await readFile(profileFile, 'utf8')).includes('"Press"'));
  t.is((await request('/api/v2/Drivers/Press', { method: 'DELETE' })).status, 404);

  const events = logs.lines.filter((line) => line.component === 'audit' && line.driver === 'Press');
  t.deepEqual(
    events.map((line) => line.event),
    ['driver-created', 'driver-replaced', 'driver-deleted'],
  );
});

test('an invalid driver entry is refused with every error at its path in the body', async (t) => {
  const { request, profileFile } = await managedDaemon(t);
  const saved = await readFile(profileFile, 'utf8');
  const schemaErrors = await request('/api/v2/Drivers', {
    method: 'POST',
    body: { ...press, scanIntervalMs: -5, colour: 'red' },
  });
  t.is(schemaErrors.status, 400);
  t.deepEqual((schemaErrors.json.errors as { path: string }[]).map((error) => error.path).sort(), [
    'colour',
    'scanIntervalMs',
  ]);
  // A rule of the whole profile (unique tag names) is answered at the body's path too.
  const duplicate = await request('/api/v2/Drivers', {
    method: 'POST',
    body: { ...press, tags: [press.tags[0], press.tags[0]] },
  });
  t.is(duplicate.status, 400);
  t.true(
    (duplicate.json.errors as { path: string }[]).every((error) => error.path.startsWith('tags[')),
  );
  const renamed = await request('/api/v2/Drivers/Demo', { method: 'PUT', body: press });
  t.is(renamed.status, 400);
  t.is(await readFile(profileFile, 'utf8'), saved);
});

test('a driver added, replaced or removed over the API takes its writable tags with it', async (t) => {
  const { request } = await managedDaemon(t);
  const writable = {
    type: 'simulator',
    name: 'Oven',
    allowWrites: true,
    scanIntervalMs: 1000,
    tags: [{ name: 'Setpoint', kind: 'sine', writable: true, writeMin: 0, writeMax: 100 }],
  };
  const write = (value: number) =>
    request('/api/v2/Tags/Write', {
      method: 'POST',
      body: { writes: [{ fullTagId: 'Oven/Setpoint', value }] },
    });
  t.is((await write(10)).status, 400, 'no such driver yet');
  t.is((await request('/api/v2/Drivers', { method: 'POST', body: writable })).status, 201);
  const written = await write(42);
  t.is(written.status, 200);
  t.deepEqual(written.json.results, [{ fullTagId: 'Oven/Setpoint', status: 'Good' }]);
  t.is((await request('/api/v2/Tags/Sample/Oven/Setpoint')).json.value, 42);

  // Restarted with writes switched off: the new driver's routes are the ones in force.
  const replaced = await request('/api/v2/Drivers/Oven', {
    method: 'PUT',
    body: { ...writable, allowWrites: false },
  });
  t.is(replaced.status, 200);
  t.is((await write(43)).status, 400);
  await request('/api/v2/Drivers/Oven', { method: 'PUT', body: writable });
  t.is((await write(44)).status, 200);

  t.is((await request('/api/v2/Drivers/Oven', { method: 'DELETE' })).status, 204);
  t.is((await write(45)).status, 400);
  // The demo's own writable tag was never touched by any of this.
  const demo = await request('/api/v2/Tags/Write', {
    method: 'POST',
    body: { writes: [{ fullTagId: 'Demo/Controls/Setpoint', value: 50 }] },
  });
  t.is(demo.status, 200);
});

test("a driver entry naming a file in tagd's state directory is refused: its keys stay unread", async (t) => {
  const { request, profileFile, stateDir } = await managedDaemon(t);
  const saved = await readFile(profileFile, 'utf8');
  const can = {
    type: 'can',
    name: 'Bus',
    dbcFile: join(stateDir, 'secret.key'),
    transport: { kind: 'replay', file: join(stateDir, '.', 'users.json') },
  };
  const refused = await request('/api/v2/Drivers', { method: 'POST', body: can });
  t.is(refused.status, 400);
  t.deepEqual((refused.json.errors as { path: string }[]).map((error) => error.path).sort(), [
    'dbcFile',
    'transport.file',
  ]);
  const replaced = await request('/api/v2/Drivers/Demo', {
    method: 'PUT',
    body: { ...can, name: 'Demo', transport: { kind: 'replay', file: 'can/x.candump' } },
  });
  t.is(replaced.status, 400);
  t.deepEqual(replaced.json.errors, [
    {
      path: 'dbcFile',
      message: "Files in tagd's state directory cannot be named through the API.",
    },
  ]);
  t.is(await readFile(profileFile, 'utf8'), saved);
});

test('a derived-tag driver entry needs DerivedTagManage on top of DriverManage', (t) => {
  const holding = (...granted: Permission[]) => ({ permissions: new Set(granted) });
  const refused = t.throws(() =>
    requireDerivedTagManage(holding('DriverManage'), { type: 'derived' }),
  );
  t.is((refused as { code?: string }).code, 'forbidden');
  t.is(refused?.message, 'Changing derived tags needs the DerivedTagManage permission.');
  t.notThrows(() =>
    requireDerivedTagManage(holding('DriverManage', 'DerivedTagManage'), { type: 'derived' }),
  );
  // Field drivers need DriverManage alone (the route's own check).
  t.notThrows(() => requireDerivedTagManage(holding('DriverManage'), { type: 'modbus' }));
});

test('DriverConfigurations lists every entry, disabled ones too; Check validates an entry and saves nothing', async (t) => {
  const { request, operator, profileFile } = await managedDaemon(t);
  t.is((await request('/api/v2/DriverConfigurations', { token: operator })).status, 403);
  t.is(
    (
      await request('/api/v2/DriverConfigurations/Check', {
        method: 'POST',
        body: press,
        token: operator,
      })
    ).status,
    403,
  );
  await request('/api/v2/Drivers', { method: 'POST', body: { ...press, enabled: false } });
  const listed = await request('/api/v2/DriverConfigurations');
  t.is(listed.status, 200);
  const entries = listed.json.drivers as Json[];
  t.deepEqual(
    entries.map((entry) => [entry.name, entry.enabled]),
    [
      ['Demo', true],
      ['Vehicle', true],
      ['Derived', true],
      ['Press', false],
    ],
  );
  t.false(
    ((await request('/api/v2/Drivers')).json.drivers as Json[]).some((d) => d.name === 'Press'),
  );

  const saved = await readFile(profileFile, 'utf8');
  const fresh = { ...press, name: 'Stamp' };
  const ok = await request('/api/v2/DriverConfigurations/Check', { method: 'POST', body: fresh });
  t.is(ok.status, 200);
  t.is(ok.json.replaces, false);
  t.like(ok.json.configuration as Json, { name: 'Stamp', type: 'simulator' });
  // The whole profile's rules too, at the body's paths: a repeated tag name.
  const duplicate = await request('/api/v2/DriverConfigurations/Check', {
    method: 'POST',
    body: { ...fresh, tags: [press.tags[0], { name: 'Line2/Force', kind: 'ramp' }] },
  });
  t.is(duplicate.status, 400);
  t.deepEqual(
    (duplicate.json.errors as { path: string }[]).map((error) => error.path),
    ['tags[1].name'],
  );
  const modbusErrors = await request('/api/v2/DriverConfigurations/Check', {
    method: 'POST',
    body: {
      type: 'modbus',
      name: 'Line',
      transport: { kind: 'tcp', host: '127.0.0.1', port: 502 },
      tags: [
        { name: 'A', table: 'coil', address: 0, type: 'float32' },
        { name: 'B', table: 'holdingRegister', address: 70_000 },
      ],
    },
  });
  t.is(modbusErrors.status, 400);
  t.deepEqual(
    [
      ...new Set((modbusErrors.json.errors as { path: string }[]).map((error) => error.path)),
    ].sort(),
    ['tags[0].type', 'tags[1].address'],
  );
  const taken = await request('/api/v2/DriverConfigurations/Check?intent=create', {
    method: 'POST',
    body: press,
  });
  t.is(taken.status, 409);
  const replacing = await request('/api/v2/DriverConfigurations/Check?intent=replace', {
    method: 'POST',
    body: press,
  });
  t.is(replacing.status, 200);
  t.is(replacing.json.replaces, true);
  const missing = await request('/api/v2/DriverConfigurations/Check?intent=replace', {
    method: 'POST',
    body: fresh,
  });
  t.is(missing.status, 404);
  t.is(await readFile(profileFile, 'utf8'), saved, 'a check saves nothing');
  t.is((await request('/api/v2/Drivers/Stamp')).status, 404, 'and starts nothing');
});

test("GET Drivers/{name}/Tags.csv answers the tag list as RFC 4180 CSV, the console's import format", async (t) => {
  const { request, url, admin, operator } = await managedDaemon(t);
  const line = {
    type: 'modbus',
    name: 'Line',
    enabled: false,
    transport: { kind: 'tcp', host: '127.0.0.1', port: 1502 },
    tags: [
      {
        name: 'Oven/Temp',
        table: 'holdingRegister',
        address: 4,
        type: 'float32',
        order: 'CDAB',
        unit: '°C',
        description: 'Zone 1, "front"',
      },
    ],
  };
  t.is((await request('/api/v2/Drivers', { method: 'POST', body: line })).status, 201);
  const csv = (name: string, token = admin) =>
    fetch(`${url}/api/v2/Drivers/${name}/Tags.csv`, {
      headers: { Authorization: `Bearer ${token}` },
    });
  const answer = await csv('Line');
  t.is(answer.status, 200);
  t.is(answer.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.is(
    await answer.text(),
    'name,table,address,type,bit,length,order,unitId,scale,offset,unit,description,pollIntervalMs,deadband,writable,writeMin,writeMax\r\n' +
      'Oven/Temp,holdingRegister,4,float32,,,CDAB,,1,0,°C,"Zone 1, ""front""",,,,,\r\n',
  );
  t.is((await csv('Line', operator)).status, 403);
  const can = await csv('Vehicle');
  t.is(can.status, 404);
  t.regex(((await can.json()) as { detail: string }).detail, /has no tag list/);
  t.is((await csv('Nothing')).status, 404);
});

test('an MQTT driver: broker URL and password sealed and masked; kept only for the same broker', async (t) => {
  const { request, profileFile } = await managedDaemon(t);
  const entry = {
    type: 'mqtt',
    name: 'Remote',
    brokerUrl: 'mqtt://gw:pw-in-url@127.0.0.1:1',
    authentication: { mode: 'Username password', username: 'central', password: 'broker-pw' },
    subscriptions: [{ topic: 'plant/gw1/#', tag: '{1}', format: 'tagd' }],
  };
  const created = await request('/api/v2/Drivers', { method: 'POST', body: entry });
  t.is(created.status, 201, JSON.stringify(created.json));
  const saved = await readFile(profileFile, 'utf8');
  t.false(saved.includes('pw-in-url'));
  t.false(saved.includes('broker-pw'));
  const read = await request('/api/v2/Drivers/Remote/Configuration');
  t.like(read.json, {
    type: 'mqtt',
    brokerUrl: '********',
    authentication: { username: 'central', password: '********' },
  });
  const masked = read.json as Json;
  const elsewhere = await request('/api/v2/Drivers/Remote', {
    method: 'PUT',
    body: { ...masked, brokerUrl: 'mqtt://broker.elsewhere.example:1883' },
  });
  t.is(elsewhere.status, 400);
  t.deepEqual(
    (elsewhere.json.errors as { path: string }[]).map((error) => error.path),
    ['authentication.password'],
  );
  const same = await request('/api/v2/Drivers/Remote', {
    method: 'PUT',
    body: { ...masked, staleAfterMs: 5000 },
  });
  t.is(same.status, 200, JSON.stringify(same.json));
  const report = await request('/api/v2/Drivers/Remote');
  t.like(report.json, { type: 'mqtt', state: 'Reconnecting' });
});

test('without the data relay license a relay driver does not run (Failed, saying why) and cannot be added or replaced; a reload follows the license', async (t) => {
  const licenseFile = fileURLToPath(new URL('../../../config/demo-license.json', import.meta.url));
  const subscriber = {
    type: 'mqtt',
    name: 'Remote',
    // Nothing listens there: a started driver only tries to connect.
    brokerUrl: 'mqtt://127.0.0.1:1',
    subscriptions: [{ topic: 'plant/gw1/#', tag: '{1}', format: 'tagd' }],
  };
  const { request, profileFile, logs } = await managedDaemon(t, (demo: Json) => {
    demo.license = undefined;
    (demo.drivers as unknown[]).push(subscriber);
  });
  const why =
    'The MQTT subscriber driver (`mqtt`) needs the data relay feature of the server or enterprise edition; this installation is not licensed.';
  const report = await request('/api/v2/Drivers/Remote');
  t.like(report.json, { name: 'Remote', type: 'mqtt', state: 'Failed', message: why, tagCount: 0 });
  t.like((await request('/api/v2/Drivers/Demo')).json, { state: 'Running' }, 'the rest runs');
  t.true(
    logs.lines.some(
      (line) => line.component === 'Remote' && line.msg === `driver not started: ${why}`,
    ),
  );

  const saved = await readFile(profileFile, 'utf8');
  const sparkplug = {
    type: 'sparkplug',
    name: 'Site',
    brokerUrl: 'mqtt://127.0.0.1:1',
    hostId: 'scada',
  };
  const refusals = [
    await request('/api/v2/Drivers', { method: 'POST', body: sparkplug }),
    await request('/api/v2/Drivers/Remote', {
      method: 'PUT',
      body: { ...subscriber, staleAfterMs: 5000 },
    }),
    await request('/api/v2/DriverConfigurations/Check', { method: 'POST', body: sparkplug }),
  ];
  for (const refused of refusals) {
    t.is(refused.status, 403);
    t.like(refused.json, { code: 'feature-unavailable', status: 403 });
  }
  t.regex(
    String(refusals[0]?.json.detail),
    /^The Sparkplug host driver \(`sparkplug`\) needs the data relay feature of the server or enterprise edition; this installation is not licensed\.$/,
  );
  t.is(await readFile(profileFile, 'utf8'), saved, 'nothing saved');
  // Other drivers are added as ever.
  t.is((await request('/api/v2/Drivers', { method: 'POST', body: press })).status, 201);

  // The license installed and the profile reloaded: the relay driver starts.
  const withLicense = JSON.parse(await readFile(profileFile, 'utf8'));
  withLicense.license = { file: licenseFile };
  await writeFile(profileFile, JSON.stringify(withLicense));
  const licensed = await request('/api/v2/Profile/Reload', { method: 'POST' });
  t.is(licensed.status, 200, JSON.stringify(licensed.json));
  t.true((licensed.json.restarted as string[]).includes('license'));
  t.true((licensed.json.started as string[]).includes('drivers/Remote'));
  t.like((await request('/api/v2/Drivers/Remote')).json, { state: 'Reconnecting' });

  // And removed again: the running relay driver stops and is Failed, saying why.
  withLicense.license = undefined;
  await writeFile(profileFile, JSON.stringify(withLicense));
  const unlicensedAgain = await request('/api/v2/Profile/Reload', { method: 'POST' });
  t.deepEqual(unlicensedAgain.json.failed, [{ component: 'drivers/Remote', message: why }]);
  t.like((await request('/api/v2/Drivers/Remote')).json, { state: 'Failed', message: why });
  t.is(
    (await request('/api/v2/Drivers/Remote', { method: 'DELETE' })).status,
    204,
    'one can always be removed',
  );
});

/** A Modbus TCP driver with `count` holding-register tags, each with a unit and a description. */
function plantDriver(name: string, count: number) {
  return {
    type: 'modbus',
    name,
    transport: { kind: 'tcp', host: '127.0.0.1', port: 1 },
    tags: Array.from({ length: count }, (_, i) => ({
      name: `Area${Math.floor(i / 1000)}/Tag${String(i).padStart(5, '0')}`,
      table: 'holdingRegister',
      address: i,
      type: 'uint16',
      unit: '°C',
      description: `Temperature of zone ${i}, line ${i % 7}`,
    })),
  };
}

test('a Modbus driver of 10,000 tags (1.4 MB) is saved, checked, replaced and read back', async (t) => {
  const { request } = await managedDaemon(t);
  const plant = plantDriver('Plant', 10_000);
  t.true(JSON.stringify(plant).length > 4 * maxBodyBytes, 'far over the default limit');
  const created = await request('/api/v2/Drivers', { method: 'POST', body: plant });
  t.is(created.status, 201, JSON.stringify(created.json).slice(0, 300));
  const tagsOf = (entry: Json) =>
    (entry.tags as Json[]).map((tag) => [tag.name, tag.address, tag.description]);
  const read = await request('/api/v2/Drivers/Plant/Configuration');
  t.is(read.status, 200);
  t.deepEqual(tagsOf(read.json), tagsOf(plant));
  // The driver runs with all of them.
  t.is((await request('/api/v2/Tags/Sample/Plant/Area9/Tag09999')).status, 200);

  const check = await request('/api/v2/DriverConfigurations/Check?intent=replace', {
    method: 'POST',
    body: plant,
  });
  t.is(check.status, 200);
  t.is(check.json.replaces, true);
  const changed = structuredClone(plant);
  (changed.tags[9_999] as Json).description = 'Outlet';
  const replaced = await request('/api/v2/Drivers/Plant', { method: 'PUT', body: changed });
  t.is(replaced.status, 200, JSON.stringify(replaced.json).slice(0, 300));
  const again = await request('/api/v2/Drivers/Plant/Configuration');
  t.deepEqual(tagsOf(again.json), tagsOf(changed));
});

test("a body over a route's limit is 413 naming that limit: 16 MiB for a driver, 256 KiB elsewhere", async (t) => {
  const { url, admin } = await managedDaemon(t);
  /** A JSON document of exactly `bytes` bytes. */
  const sized = (bytes: number) => {
    const start = '{"type":"modbus","name":"Huge","pad":"';
    return `${start}${'a'.repeat(bytes - start.length - 2)}"}`;
  };
  const post = async (path: string, body: string) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
      body,
    });
    return { status: response.status, json: (await response.json()) as Json };
  };
  const overDriver = await post('/api/v2/Drivers', sized(configurationBodyBytes + 1));
  t.is(overDriver.status, 413);
  t.like(overDriver.json, {
    code: 'payload-too-large',
    detail: `The request body is larger than ${configurationBodyBytes} bytes (16 MiB), this route's limit.`,
  });
  // At the limit, the body is read and judged by the schema.
  const atLimit = await post('/api/v2/Drivers', sized(configurationBodyBytes));
  t.is(atLimit.status, 400);
  t.is(atLimit.json.code, 'validation-failed');
  const overQuery = await post('/api/v2/TagQuerySet', sized(maxBodyBytes + 1));
  t.is(overQuery.status, 413);
  t.like(overQuery.json, {
    code: 'payload-too-large',
    detail: `The request body is larger than ${maxBodyBytes} bytes (256 KiB), this route's limit.`,
  });
});

test('a 16 MiB POST without a token (401) or without DriverManage (403) is refused before its body is sent', async (t) => {
  const { url, operator } = await managedDaemon(t);
  for (const [who, authorization, status] of [
    ['no token', '', 401],
    ['an Operator', `Authorization: Bearer ${operator}\r\n`, 403],
  ] as const) {
    const socket = await openSocket(url);
    const head =
      'POST /api/v2/Drivers HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
      `${authorization}Content-Length: ${configurationBodyBytes}\r\n\r\n`;
    // The first 64 KiB of the body, then nothing: the answer cannot wait for the rest.
    const answer = await answerTo(socket, `${head}{"pad":"${'a'.repeat(65_536)}`);
    t.is(answer.status, status, who);
    t.is(answer.headers['content-type'], 'application/problem+json', who);
    t.is(answer.headers.connection, 'close', `${who}: the rest of the body is not awaited`);
    // The client gives up its upload: the connection closes at once.
    const gone = closed(socket);
    socket.end();
    await gone;
  }
});
