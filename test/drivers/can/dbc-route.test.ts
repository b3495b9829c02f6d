import test from 'ava';
import { adminToken, demoDaemon } from '../../helpers/demo-daemon.js';
import { ManualClock } from '../../helpers/manual-clock.js';

test('the DBC route answers the demo CAN bus with decoded values, unit, label and raw', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 6));
  // demoDaemon serves the demo as `tagd start --demo` does: its CAN files by absolute path.
  const { daemon, url, stateDir } = await demoDaemon(t, { clock });
  const store = daemon.store;
  if (store === undefined) return t.fail('no store');
  const deadline = Date.now() + 5000;
  while (store.get('Vehicle/EngineData/EngineState')?.quality !== 'Good') {
    if (Date.now() > deadline) return t.fail('the replay did not start');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
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
