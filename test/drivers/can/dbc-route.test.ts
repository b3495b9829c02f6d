import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { CanDriver } from '../../../drivers/can/can-driver.js';
import { canDriverSchema } from '../../../drivers/can/schema.js';
import { DbcSignalCatalog } from '../../../src/tags/dbc-signal-catalog.js';
import { startApi } from '../../helpers/api-harness.js';
import { dbcFixtures } from '../../helpers/dbc.js';
import { adminToken, demoDaemon } from '../../helpers/demo-daemon.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { until } from '../../helpers/until.js';

test('the DBC route answers the demo CAN bus with decoded values, unit, label and raw', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 6));
  // demoDaemon serves the demo as `tagd start --demo` does: its CAN files by absolute path.
  const { daemon, url, stateDir } = await demoDaemon(t, { clock });
  const store = daemon.store;
  if (store === undefined) return t.fail('no store');
  await until(
    () => store.get('Vehicle/EngineData/EngineState')?.quality === 'Good',
    'the replay starts',
  );
  const started = clock.now();
  const token = await adminToken(url, stateDir);
  const get = async (path: string) => {
    const response = await fetch(`${url}/api/v2/DBC/${path}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  // The first EngineData frame, 75 17 64 32 01 00 00 00: state = 1, labelled Cranking.
  t.deepEqual(await get('Vehicle/EngineData/EngineState'), {
    status: 200,
    body: {
      component: 'Vehicle',
      message: 'EngineData',
      signal: 'EngineState',
      fullTagId: 'Vehicle/EngineData/EngineState',
      utcTimestamp: new Date(started).toISOString(),
      quality: 'Good',
      value: 1,
      valueText: 'Cranking',
      raw: 1,
    },
  });
  // Byte 2 = 0x64 = 100, offset −40; the unit is Windows-1252 "°C" in the DBC file.
  t.like((await get('Vehicle/EngineData/CoolantTemp')).body, {
    quality: 'Good',
    value: 60,
    unit: '°C',
    raw: 100,
  });
  // DoorStatus first plays 10 ms after the first frame (and BatteryStatus 8 ms): known, but not received yet.
  t.deepEqual((await get('Vehicle/DoorStatus/DriverDoor')).body, {
    component: 'Vehicle',
    message: 'DoorStatus',
    signal: 'DriverDoor',
    fullTagId: 'Vehicle/DoorStatus/DriverDoor',
    utcTimestamp: new Date(started).toISOString(),
    quality: 'Unavailable',
  });

  // 2.013 s into the log (2010 ms after its first frame) the driver's door opens.
  clock.advance(2010);
  t.like((await get('Vehicle/DoorStatus/DriverDoor')).body, {
    quality: 'Good',
    value: 1,
    valueText: 'Open',
    raw: 1,
    utcTimestamp: new Date(started + 2010).toISOString(),
  });
  t.like((await get('Vehicle/EngineData/EngineState')).body, { value: 2, valueText: 'Running' });
  // The extended-identifier message, every second; at 2.011 s: EE FC, 0xFCEE = −786 × 0.1 A.
  t.like((await get('Vehicle/BatteryStatus/PackCurrent')).body, {
    quality: 'Good',
    value: -786 * 0.1,
    unit: 'A',
    raw: -786,
  });

  const missingMessage = await get('Vehicle/Transmission/Gear');
  t.is(missingMessage.status, 404);
  t.is(
    missingMessage.body.detail,
    "Message 'Transmission' is not defined in the DBC of component 'Vehicle'.",
  );
  t.is((await get('Demo/EngineData/EngineState')).status, 404, 'the simulator has no DBC');
});

test('the DBC route carries the exact digits of a 64-bit signal beyond 2^53', async (t) => {
  // A CAN driver replays one MSG4 frame of padding_bit_order.dbc (M: 64 bits, Intel, unsigned,
  // factor 1, offset 0) into the API's store; 01 02 … 08 little-endian is 0x0807060504030201.
  const folder = await tempDir(t);
  await writeFile(join(folder, 'bus.log'), '(1.000) can0 005#0102030405060708\n');
  const catalog = new DbcSignalCatalog();
  let driver: CanDriver | undefined;
  const api = await startApi(t, {
    deps: ({ store, clock, logs }) => {
      driver = new CanDriver(
        canDriverSchema.parse({
          type: 'can',
          name: 'Bus',
          dbcFile: fileURLToPath(new URL('padding_bit_order.dbc', dbcFixtures)),
          transport: { kind: 'replay', file: join(folder, 'bus.log') },
        }),
        { store, clock, logger: logs.logger, stateDir: folder, dbc: catalog },
      );
      return { dbc: catalog };
    },
  });
  t.teardown(() => driver?.stop());
  await driver?.start();
  await until(() => api.store.get('Bus/MSG4/M')?.quality === 'Good', 'the frame is replayed');
  const token = await api.serviceToken('hmi', ['Operators']);
  const response = await api.request('/api/v2/DBC/Bus/MSG4/M', { token });
  t.is(response.status, 200);
  t.like(response.body, {
    quality: 'Good',
    value: 578437695752307200,
    raw: 578437695752307200,
    rawText: '578437695752307201',
    valueText: '578437695752307201',
  });
});
