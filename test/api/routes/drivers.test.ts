import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { CanDriver } from '../../../drivers/can/can-driver.js';
import { canDriverSchema } from '../../../drivers/can/schema.js';
import type { Driver, DriverStatus } from '../../../drivers/driver.js';
import { createSimulatorDriver } from '../../../drivers/simulator/index.js';
import { simulatorDriverSchema } from '../../../drivers/simulator/schema.js';
import { apiStateOf, DriverReports } from '../../../src/runtime/driver-reports.js';
import { startApi } from '../../helpers/api-harness.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** A driver whose status the test sets. */
function fakeDriver(
  name: string,
  status: DriverStatus,
): Driver & { status(): DriverStatus; set(next: DriverStatus): void } {
  let current = status;
  return {
    name,
    type: 'modbus',
    start: async () => undefined,
    stop: async () => undefined,
    status: () => current,
    set: (next) => {
      current = next;
    },
  };
}

test('drivers list a simulator with state, counters and tags by quality', async (t) => {
  const drivers: Driver[] = [];
  const api = await startApi(t, {
    deps: ({ store, clock }) => ({
      drivers: new DriverReports({ drivers: () => drivers, store, clock }),
    }),
  });
  const config = simulatorDriverSchema.parse({
    type: 'simulator',
    name: 'Demo',
    scanIntervalMs: 1000,
    tags: [
      { name: 'Line1/Temperature', kind: 'sine' },
      { name: 'Line1/Count', kind: 'counter' },
    ],
  });
  const simulator = createSimulatorDriver(config, {
    store: api.store,
    clock: api.clock,
    logger: api.logs.logger,
    stateDir: api.stateDir,
  });
  await simulator.start();
  t.teardown(() => simulator.stop());
  drivers.push(simulator);
  api.store.write([
    {
      fullTagId: 'Demo/Line1/Count',
      utcTimestamp: '2026-01-01T00:00:00.000Z',
      quality: 'Bad',
      reason: 'DecodeError',
    },
  ]);

  const operator = await api.signIn((await api.addUser('olga', ['Operators'])).username);
  const list = await api.request('/api/v2/Drivers', { token: operator });
  t.is(list.status, 200);
  t.deepEqual(list.json, {
    drivers: [
      {
        name: 'Demo',
        type: 'simulator',
        state: 'Running',
        driverState: 'Running',
        since: simulator.status().since,
        counters: {},
        tagCount: 2,
        tagsByQuality: { Good: 1, Stale: 0, Unavailable: 0, Bad: 1 },
      },
    ],
  });
  const one = await api.request('/api/v2/Drivers/Demo', { token: operator });
  t.deepEqual(one.json, (list.json.drivers as unknown[])[0]);
  const missing = await api.request('/api/v2/Drivers/Nope', { token: operator });
  t.is(missing.status, 404);
  t.is(missing.json.detail, "No driver named 'Nope'.");

  const viewer = await api.signIn((await api.addUser('vera', ['Viewers'])).username);
  t.is((await api.request('/api/v2/Drivers', { token: viewer })).status, 403);
  t.is((await api.request('/api/v2/Drivers/Demo', { token: viewer })).status, 403);
  const admin = await api.signIn((await api.addUser('root', ['Administrators'])).username);
  t.is((await api.request('/api/v2/Drivers', { token: admin })).status, 200);
});

test('states map to the API words; the last error is kept after recovery, with its time', async (t) => {
  const drivers: Driver[] = [];
  const api = await startApi(t, {
    deps: ({ store, clock }) => ({
      drivers: new DriverReports({ drivers: () => drivers, store, clock }),
    }),
  });
  const reports = api.deps.drivers as DriverReports;
  await reports.start();
  t.teardown(() => reports.stop());
  const boiler = fakeDriver('Boiler', {
    state: 'Starting',
    since: '2026-01-01T00:00:00.000Z',
    tagCount: 0,
  });
  drivers.push(boiler);
  const token = await api.signIn((await api.addUser('olga', ['Operators'])).username);
  const starting = await api.request('/api/v2/Drivers/Boiler', { token });
  t.like(starting.json, { state: 'Reconnecting', driverState: 'Starting' });
  t.is(starting.json.lastError, undefined);

  boiler.set({
    state: 'Reconnecting',
    since: '2026-01-01T00:00:05.000Z',
    message: 'connect ECONNREFUSED 192.168.10.30:502',
    tagCount: 3,
    counters: { requests: 4, timeouts: 1 },
  });
  api.clock.advance(1000); // the sampler sees it, without any request
  boiler.set({
    state: 'Running',
    since: '2026-01-01T00:00:09.000Z',
    tagCount: 3,
    counters: { requests: 9, timeouts: 1 },
  });
  const running = await api.request('/api/v2/Drivers/Boiler', { token });
  t.like(running.json, {
    state: 'Running',
    lastError: {
      message: 'connect ECONNREFUSED 192.168.10.30:502',
      utcTimestamp: '2026-01-01T00:00:05.000Z',
    },
    counters: { requests: 9, timeouts: 1 },
  });
  t.is(running.json.message, undefined);

  boiler.set({
    state: 'Error',
    since: '2026-01-01T00:01:00.000Z',
    message: 'dbc-invalid',
    tagCount: 3,
  });
  t.like((await api.request('/api/v2/Drivers/Boiler', { token })).json, {
    state: 'Failed',
    driverState: 'Error',
    message: 'dbc-invalid',
  });
  t.is(apiStateOf('Stopped'), 'Stopped');
});

test('a report names a file by its name, never the folder it is in (no configuration)', async (t) => {
  const drivers: Driver[] = [];
  const api = await startApi(t, {
    deps: ({ store, clock }) => ({
      drivers: new DriverReports({ drivers: () => drivers, store, clock }),
    }),
  });
  const folder = await tempDir(t);
  await mkdir(join(folder, 'secret-plant-layout'));
  const dbcFile = join(folder, 'secret-plant-layout', 'bus.dbc');
  const bus = new CanDriver(
    canDriverSchema.parse({
      type: 'can',
      name: 'Bus',
      dbcFile,
      transport: { kind: 'replay', file: 'replay.candump' },
    }),
    { store: api.store, clock: api.clock, logger: api.logs.logger, stateDir: api.stateDir },
  );
  await t.throwsAsync(bus.start());
  drivers.push(bus);
  t.regex(bus.status().message ?? '', /secret-plant-layout/, 'the driver itself says where');
  const token = await api.signIn((await api.addUser('olga', ['Operators'])).username);
  const report = await api.request('/api/v2/Drivers/Bus', { token });
  t.like(report.json, {
    state: 'Failed',
    message: 'Cannot read the DBC file bus.dbc.',
    lastError: { message: 'Cannot read the DBC file bus.dbc.' },
  });
  const list = await api.request('/api/v2/Drivers', { token });
  t.false(JSON.stringify(list.json).includes(folder), 'no folder anywhere in the list');
});

test('without drivers wired in, the list is empty', async (t) => {
  const api = await startApi(t);
  const token = await api.signIn((await api.addUser('olga', ['Operators'])).username);
  t.deepEqual((await api.request('/api/v2/Drivers', { token })).json, { drivers: [] });
});
