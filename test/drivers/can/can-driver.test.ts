/**
 * The CAN driver end to end: DBC file → tags, frames from a real SLCAN peer (python-can) or a
 * replayed candump log → decoded samples in the store, lost adapters → Unavailable and back.
 * Expected values are worked out from the frame bytes by hand, not by running the decoder.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import { CanDriver, type CanSampleMetadata } from '../../../drivers/can/can-driver.js';
import type { CanFrame } from '../../../drivers/can/frame.js';
import { createCanDriver } from '../../../drivers/can/index.js';
import { type CanDriverConfig, canDriverSchema } from '../../../drivers/can/schema.js';
import type { CanTransport, TransportHandlers } from '../../../drivers/can/transports/transport.js';
import { CanTransportError } from '../../../drivers/can/transports/transport.js';
import type { DriverDeps } from '../../../drivers/driver.js';
import { createDriver, driverConfigSchema } from '../../../drivers/registry.js';
import { DbcSignalCatalog } from '../../../src/tags/dbc-signal-catalog.js';
import type { Sample } from '../../../src/tags/sample.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { dbcFixtures } from '../../helpers/dbc.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { type PeerFrame, pythonCanMissing, SlcanPeer } from '../../helpers/slcan-peer.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { until } from '../../helpers/until.js';
import { driverContract } from '../contract.js';

const configDir = fileURLToPath(new URL('../../../config', import.meta.url));
const silent = pino({ level: 'silent' });
const missing = pythonCanMissing();
if (missing !== undefined) console.warn(`SLCAN driver tests skipped: ${missing}`);
const peerTest = missing === undefined ? test.serial : test.serial.skip;

/** Every signal of config/can/demo-vehicle.dbc, as tags of component `Bus`. */
const demoTags = [
  'EngineData/EngineSpeed',
  'EngineData/CoolantTemp',
  'EngineData/ThrottlePosition',
  'EngineData/EngineState',
  'VehicleDynamics/VehicleSpeed',
  'VehicleDynamics/SteeringAngle',
  'VehicleDynamics/LateralAccel',
  'BatteryStatus/PackVoltage',
  'BatteryStatus/PackCurrent',
  'BatteryStatus/StateOfCharge',
  'BatteryStatus/ChargeMode',
  'DoorStatus/DriverDoor',
  'DoorStatus/PassengerDoor',
].map((path) => `Bus/${path}`);

/** One frame of each demo message (the first of config/can/demo-vehicle.candump). */
const demoFrames: PeerFrame[] = [
  { id: 0x100, data: '7517643201000000' },
  { id: 0x200, data: '0BC1000500200000' },
  { id: 0x18ff50e5, extended: true, data: '780F0AFEA0020000' },
  { id: 0x300, data: '00' },
];

function config(input: Record<string, unknown>): CanDriverConfig {
  return canDriverSchema.parse({
    type: 'can',
    name: 'Bus',
    dbcFile: 'can/demo-vehicle.dbc',
    ...input,
  });
}

interface Setup {
  driver: CanDriver;
  store: TagStore;
  clock: ManualClock;
  catalog: DbcSignalCatalog;
  logs: ReturnType<typeof captureLogs>;
}

function setup(input: Record<string, unknown>, options: { transport?: CanTransport } = {}): Setup {
  const clock = new ManualClock();
  const store = new TagStore({ clock });
  const catalog = new DbcSignalCatalog();
  const logs = captureLogs();
  const deps: DriverDeps = {
    store,
    clock,
    logger: logs.logger,
    stateDir: '/nonexistent',
    profileDir: configDir,
    dbc: catalog,
  };
  const driver = new CanDriver(config(input), deps, options);
  return { driver, store, clock, catalog, logs };
}

const quality = (store: TagStore, id: string) => store.get(id)?.quality;

/** Waits until the driver's first connection attempt is over (start resolves before it). */
const connected = (driver: CanDriver) =>
  until(() => driver.status().state !== 'Starting', 'the first connection attempt is over');

async function slcanDriver(t: ExecutionContext, input: Record<string, unknown> = {}) {
  const peer = await SlcanPeer.start();
  t.teardown(() => peer.kill());
  const subject = setup({
    transport: { kind: 'slcan', port: peer.address, bitrate: 500_000 },
    ...input,
  });
  t.teardown(() => subject.driver.stop());
  await subject.driver.start();
  await until(() => subject.driver.status().state === 'Running', 'the driver runs');
  return { ...subject, peer };
}

if (missing === undefined) {
  driverContract(test, {
    type: 'can (SLCAN peer)',
    hasPeer: true,
    async setup() {
      const peer = await SlcanPeer.start();
      let alive = true;
      const { driver, store, clock } = setup({
        transport: { kind: 'slcan', port: peer.address, bitrate: 500_000 },
      });
      return {
        driver,
        store,
        clock,
        tagIds: demoTags,
        async produce() {
          if (!alive) {
            await new Promise((resolve) => setTimeout(resolve, 50));
            return;
          }
          await until(() => driver.status().state === 'Running', 'the driver runs');
          await peer.send(demoFrames);
          await until(
            () => demoTags.every((id) => quality(store, id) === 'Good'),
            'every signal is Good',
          );
        },
        async disconnect() {
          alive = false;
          await peer.kill();
          await until(
            () => demoTags.every((id) => quality(store, id) === 'Unavailable'),
            'every signal is Unavailable',
          );
        },
        teardown: () => peer.kill(),
      };
    },
  });
}

peerTest('frames from the SLCAN peer become samples with value, unit, label and raw', async (t) => {
  const { store, peer, driver, clock } = await slcanDriver(t);
  await peer.send(demoFrames);
  await until(() => demoTags.every((id) => quality(store, id) === 'Good'), 'all Good');
  const value = (path: string) => store.require(`Bus/${path}`).value;
  const metadata = (path: string) => store.require(`Bus/${path}`).metadata as CanSampleMetadata;
  // EngineData 75 17 64 32 01 …, Intel: speed 0x1775 = 6005 × 0.25, coolant 0x64 = 100 − 40,
  // throttle 0x32 = 50 × 0.4, state = low 3 bits of byte 4 = 1.
  t.is(value('EngineData/EngineSpeed'), 1501.25);
  t.is(value('EngineData/CoolantTemp'), 60);
  t.is(value('EngineData/ThrottlePosition'), 50 * 0.4);
  t.is(value('EngineData/EngineState'), 1);
  // VehicleDynamics 0B C1 00 05 00 20 …, Motorola: speed 0x0BC1 = 3009, steering 0x0005 = 5,
  // lateral = byte 4 and the high nibble of byte 5: 0x002 = 2.
  t.is(value('VehicleDynamics/VehicleSpeed'), 3009 * 0.01);
  t.is(value('VehicleDynamics/SteeringAngle'), 5 * 0.1);
  t.is(value('VehicleDynamics/LateralAccel'), 2 * 0.01);
  // BatteryStatus 78 0F 0A FE A0 02 …: 0x0F78 = 3960, 0xFE0A = −502, 0xA0 = 160, 2.
  t.is(value('BatteryStatus/PackVoltage'), 3960 * 0.1);
  t.is(value('BatteryStatus/PackCurrent'), -502 * 0.1);
  t.is(value('BatteryStatus/StateOfCharge'), 80);
  t.is(value('BatteryStatus/ChargeMode'), 2);
  t.is(value('DoorStatus/DriverDoor'), 0);
  t.deepEqual(metadata('EngineData/EngineSpeed'), {
    unit: 'rpm',
    raw: 6005,
    description: 'Crankshaft speed.',
  });
  t.deepEqual(metadata('EngineData/CoolantTemp'), {
    unit: '°C',
    raw: 100,
    description: 'Engine coolant temperature.',
  });
  t.deepEqual(metadata('EngineData/EngineState'), { raw: 1, valueText: 'Cranking' });
  t.deepEqual(metadata('BatteryStatus/PackCurrent'), {
    unit: 'A',
    raw: -502,
    description: 'Positive while charging.',
  });
  t.deepEqual(metadata('BatteryStatus/ChargeMode'), { raw: 2, valueText: 'Discharging' });
  t.deepEqual(metadata('DoorStatus/PassengerDoor'), { raw: 0, valueText: 'Closed' });
  t.deepEqual(metadata('VehicleDynamics/LateralAccel'), { unit: 'm/s²', raw: 2 });
  t.is(
    store.require('Bus/EngineData/EngineSpeed').utcTimestamp,
    new Date(clock.now()).toISOString(),
  );
  t.like(driver.status(), {
    state: 'Running',
    tagCount: 13,
    counters: {
      framesReceived: 4,
      framesDecoded: 4,
      framesUnknown: 0,
      framesRemote: 0,
      signalsTruncated: 0,
      malformed: 0,
      disconnects: 0,
    },
  });
});

peerTest('the frames of one read are one store write', async (t) => {
  const { store, peer } = await slcanDriver(t);
  const writes: string[][] = [];
  store.subscribe((updates) => writes.push(updates.map((update) => update.sample.fullTagId)));
  await peer.send(demoFrames);
  await until(() => demoTags.every((id) => quality(store, id) === 'Good'), 'all Good');
  t.is(writes.flat().length, 13);
  t.true(writes.length <= 2, `${writes.length} writes (one per TCP read)`);
});

peerTest(
  'a frame shorter than its message: the signals that fit decode, the others are Bad',
  async (t) => {
    const { store, peer, driver } = await slcanDriver(t);
    await peer.send([{ id: 0x100, data: '751764' }]);
    await until(() => quality(store, 'Bus/EngineData/EngineState') === 'Bad', 'EngineState is Bad');
    t.is(store.require('Bus/EngineData/EngineSpeed').value, 1501.25);
    t.is(store.require('Bus/EngineData/CoolantTemp').value, 60);
    for (const name of ['ThrottlePosition', 'EngineState']) {
      const sample = store.require(`Bus/EngineData/${name}`);
      t.like(sample, {
        quality: 'Bad',
        reason: 'DecodeError',
        message: 'The frame of EngineData carried 3 of its 8 bytes, too few for this signal.',
      });
      t.is(sample.value, undefined);
    }
    t.is(driver.status().counters?.signalsTruncated, 2);
  },
);

peerTest('frames of identifiers not in the DBC are counted and logged once', async (t) => {
  const { store, peer, driver, logs } = await slcanDriver(t);
  await peer.send([
    { id: 0x555, data: '01' },
    { id: 0x556, data: '02' },
    { id: 0x100, extended: true, data: '7517643201000000' },
    { id: 0x123, remote: true, dlc: 8 },
  ]);
  await peer.send([{ id: 0x555, data: '03' }, demoFrames[0] as PeerFrame]);
  await until(() => driver.status().counters?.framesReceived === 6, 'six frames');
  t.like(driver.status().counters, {
    framesReceived: 6,
    framesDecoded: 1,
    framesUnknown: 4,
    framesRemote: 1,
  });
  const notes = logs.lines.filter((line) => String(line.msg).includes('not in the DBC'));
  t.is(notes.length, 1);
  t.is(
    notes[0]?.msg,
    'frame 0x555 is not in the DBC; such frames are counted (status counters.framesUnknown), not logged',
  );
  t.is(quality(store, 'Bus/EngineData/EngineSpeed'), 'Good', 'an extended 0x100 is not EngineData');
});

peerTest(
  'a lost adapter: every signal Unavailable, then reconnect with doubling waits',
  async (t) => {
    const { store, peer, driver, clock } = await slcanDriver(t, {
      reconnectDelayMs: 1000,
      maxReconnectDelayMs: 3000,
    });
    await peer.send(demoFrames);
    await until(() => demoTags.every((id) => quality(store, id) === 'Good'), 'all Good');
    await peer.refuse('S6');
    await peer.drop();
    await until(() => driver.status().state === 'Reconnecting', 'reconnecting');
    for (const id of demoTags) {
      t.like(store.require(id), { quality: 'Unavailable', reason: 'Disconnected' }, id);
      t.is(store.require(id).value, undefined);
    }
    t.regex(store.require(demoTags[0] as string).message ?? '', /the adapter connection was lost/);
    t.is(driver.status().counters?.disconnects, 1);
    const attempts = () => peer.commands.filter((command) => command === 'S6').length;
    t.is(attempts(), 1);
    // The adapter now refuses the bitrate: each attempt fails, the wait doubles up to 3 s.
    for (const [wait, expected] of [
      [999, 1],
      [1, 2],
      [1999, 2],
      [1, 3],
      [2999, 3],
      [1, 4],
      [2999, 4],
      [1, 5],
    ] as const) {
      clock.advance(wait);
      if (expected > attempts()) await peer.commandCount('S6', expected);
      await until(() => driver.status().state === 'Reconnecting', 'the attempt failed');
      await new Promise((resolve) => setTimeout(resolve, 20));
      t.is(attempts(), expected, `after ${wait} ms`);
    }
    t.regex(driver.status().message ?? '', /refused or did not answer 'S6'/);
    t.is(clock.pendingTimers(), 1, 'one reconnect pending');
  },
);

peerTest('after a dropped connection the driver reconnects and values flow again', async (t) => {
  const { store, peer, driver, clock } = await slcanDriver(t);
  await peer.send(demoFrames);
  await until(() => demoTags.every((id) => quality(store, id) === 'Good'), 'all Good');
  await peer.drop();
  await until(() => driver.status().state === 'Reconnecting', 'reconnecting');
  t.is(quality(store, 'Bus/EngineData/EngineSpeed'), 'Unavailable');
  clock.advance(1000);
  await until(() => driver.status().state === 'Running', 'running again');
  t.deepEqual(peer.commands, ['C', 'S6', 'O', 'C', 'S6', 'O']);
  await peer.send(demoFrames);
  await until(() => demoTags.every((id) => quality(store, id) === 'Good'), 'all Good again');
  t.is(clock.pendingTimers(), 0, 'no reconnect pending');
});

peerTest('stop closes the channel, unregisters the DBC and leaves no timer', async (t) => {
  const { peer, driver, catalog, clock, store } = await slcanDriver(t);
  t.true(catalog.has('Bus'));
  await driver.stop();
  await peer.commandCount('C', 2);
  t.false(catalog.has('Bus'));
  t.is(clock.pendingTimers(), 0);
  t.like(store.require('Bus/DoorStatus/DriverDoor'), {
    quality: 'Unavailable',
    reason: 'Disconnected',
    message: 'The driver is stopped.',
  });
});

test('start declares one tag per signal with 3 × GenMsgCycleTime staleness and DBC metadata', async (t) => {
  const { driver, store, catalog } = setup({
    transport: { kind: 'replay', file: 'can/demo-vehicle.candump' },
    staleAfterMs: 7000,
  });
  t.teardown(() => driver.stop());
  const defined: Sample[] = [];
  store.subscribe((updates) => {
    for (const update of updates)
      if (update.sample.reason === 'NeverRead') defined.push(update.sample);
  });
  await driver.start();
  t.deepEqual(
    defined.map((sample) => sample.fullTagId),
    demoTags,
  );
  t.deepEqual(defined[0]?.metadata, { unit: 'rpm', description: 'Crankshaft speed.' });
  t.is(defined[3]?.metadata, undefined, 'EngineState has neither unit nor comment');
  t.deepEqual(catalog.lookup('Bus', 'BatteryStatus', 'PackVoltage'), {
    found: true,
    signal: { name: 'PackVoltage', unit: 'V' },
    fullTagId: 'Bus/BatteryStatus/PackVoltage',
  });
  t.deepEqual(catalog.lookup('Bus', 'EngineData', 'EngineState'), {
    found: true,
    signal: { name: 'EngineState' },
    fullTagId: 'Bus/EngineData/EngineState',
  });
});

test('replay: staleness follows the cycle time; a message without one uses staleAfterMs', async (t) => {
  const folder = await tempDir(t);
  // One frame of each message, then nothing.
  await writeFile(
    join(folder, 'once.log'),
    [
      '(1.000) can0 100#7517643201000000',
      '(1.000) can0 200#0BC1000500200000',
      '(1.000) can0 18FF50E5#780F0AFEA0020000',
      '(1.000) can0 300#03',
      '',
    ].join('\n'),
  );
  const { driver, store, clock } = setup({
    transport: { kind: 'replay', file: join(folder, 'once.log') },
    staleAfterMs: 5000,
  });
  t.teardown(() => driver.stop());
  await driver.start();
  await connected(driver);
  t.like(driver.status(), {
    state: 'Running',
    message: 'The replay log has ended; the signals keep their last values.',
  });
  t.deepEqual(
    [
      store.require('Bus/DoorStatus/DriverDoor').metadata,
      store.require('Bus/DoorStatus/PassengerDoor').value,
    ],
    [{ raw: 1, valueText: 'Open' }, 1],
  );
  const stale = () =>
    demoTags.filter((id) => quality(store, id) === 'Stale').map((id) => id.split('/')[1]);
  clock.advance(59);
  store.sweepStale();
  t.deepEqual(stale(), []);
  clock.advance(1);
  store.sweepStale();
  t.deepEqual([...new Set(stale())], ['VehicleDynamics'], '3 × 20 ms');
  clock.advance(240);
  store.sweepStale();
  t.deepEqual([...new Set(stale())], ['EngineData', 'VehicleDynamics'], '3 × 100 ms');
  clock.advance(2700);
  store.sweepStale();
  t.deepEqual([...new Set(stale())], ['EngineData', 'VehicleDynamics', 'BatteryStatus'], '3 × 1 s');
  clock.advance(2000);
  store.sweepStale();
  t.deepEqual(
    [...new Set(stale())],
    ['EngineData', 'VehicleDynamics', 'BatteryStatus', 'DoorStatus'],
    'staleAfterMs for DoorStatus, which has no cycle time',
  );
  t.is(clock.pendingTimers(), 0, 'a finished replay leaves no timer');
});

test('replay of the bundled demo log drives the tags on the injected clock', async (t) => {
  const { driver, store, clock } = setup({
    transport: { kind: 'replay', file: 'can/demo-vehicle.candump', loop: true },
  });
  t.teardown(() => driver.stop());
  await driver.start();
  await connected(driver);
  t.is(driver.status().state, 'Running');
  t.is(store.require('Bus/EngineData/EngineSpeed').value, 1501.25, 'the first frame at once');
  t.is(store.require('Bus/EngineData/EngineState').metadata?.valueText, 'Cranking');
  t.is(quality(store, 'Bus/DoorStatus/DriverDoor'), 'Unavailable', 'not before 13 ms');
  clock.advance(2010);
  // The driver door opened at 2.013 s of the log, 2010 ms after its first frame.
  t.is(store.require('Bus/DoorStatus/DriverDoor').metadata?.valueText, 'Open');
  t.is(store.require('Bus/EngineData/EngineState').metadata?.valueText, 'Running');
  // The next pass starts at 10000.26 ms (see the replay tests); its door frame plays at 10010.26.
  clock.advance(8001);
  t.is(store.require('Bus/DoorStatus/DriverDoor').metadata?.valueText, 'Closed');
  t.like(driver.status().counters, { framesDecoded: 615 + 4, framesUnknown: 0, malformed: 0 });
});

test('multiplexed signals: only those of the active multiplexer value are written, Stale after 3 cycles × the switch values', async (t) => {
  const folder = await tempDir(t);
  await writeFile(
    join(folder, 'mux.dbc'),
    [
      'VERSION ""',
      'BU_: A',
      'BO_ 1280 Diag: 3 A',
      ' SG_ Page M : 0|8@1+ (1,0) [0|255] "" A',
      ' SG_ Voltage m1 : 8|16@1+ (0.01,0) [0|655.35] "V" A',
      ' SG_ Temperature m2 : 8|8@1- (1,0) [-128|127] "degC" A',
      'BA_DEF_ BO_ "GenMsgCycleTime" INT 0 65535;',
      'BA_ "GenMsgCycleTime" BO_ 1280 50;',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(folder, 'mux.log'),
    ['(1.000) can0 500#01D204', '(1.010) can0 500#02F6', ''].join('\n'),
  );
  const { driver, store, clock } = setup({
    dbcFile: join(folder, 'mux.dbc'),
    transport: { kind: 'replay', file: join(folder, 'mux.log') },
  });
  t.teardown(() => driver.stop());
  const written: string[][] = [];
  store.subscribe((updates) =>
    written.push(updates.filter((u) => u.sample.quality === 'Good').map((u) => u.sample.fullTagId)),
  );
  await driver.start();
  await connected(driver);
  clock.advance(10);
  t.deepEqual(
    written.filter((ids) => ids.length > 0),
    [
      ['Bus/Diag/Page', 'Bus/Diag/Voltage'],
      ['Bus/Diag/Page', 'Bus/Diag/Temperature'],
    ],
  );
  // 0x04D2 = 1234 × 0.01; 0xF6 = −10 as a signed byte.
  t.is(store.require('Bus/Diag/Voltage').value, 1234 * 0.01);
  t.is(store.require('Bus/Diag/Temperature').value, -10);
  t.is(store.require('Bus/Diag/Page').value, 2);
  // The switch comes in every frame: 3 × 50 ms. A multiplexed signal comes once per round of
  // the two pages the DBC defines: 3 × 50 ms × 2, with no staleAfterMs set.
  t.is(store.staleLimitMs('Bus/Diag/Page'), 150);
  t.is(store.staleLimitMs('Bus/Diag/Voltage'), 300);
  clock.advance(150);
  store.sweepStale();
  t.is(quality(store, 'Bus/Diag/Page'), 'Stale');
  t.is(quality(store, 'Bus/Diag/Temperature'), 'Good');
  clock.advance(149);
  store.sweepStale();
  t.is(quality(store, 'Bus/Diag/Temperature'), 'Good', '299 ms after its frame');
  clock.advance(1);
  store.sweepStale();
  t.is(quality(store, 'Bus/Diag/Temperature'), 'Stale', '300 ms after its frame');
  t.like(store.require('Bus/Diag/Temperature'), { reason: 'NoUpdate', value: -10 });
});

/** The cantools DBC fixtures (test/fixtures/dbc), by absolute path. */
const dbcFixture = (name: string) => fileURLToPath(new URL(name, dbcFixtures));

/** Runs a replay of `lines` (candump -L) against `dbcFile` until the log has ended. */
async function replayed(t: ExecutionContext, dbcFile: string, lines: string[]): Promise<Setup> {
  const folder = await tempDir(t);
  await writeFile(join(folder, 'bus.log'), [...lines, ''].join('\n'));
  const subject = setup({ dbcFile, transport: { kind: 'replay', file: join(folder, 'bus.log') } });
  t.teardown(() => subject.driver.stop());
  await subject.driver.start();
  await connected(subject.driver);
  t.is(
    subject.driver.status().message,
    'The replay log has ended; the signals keep their last values.',
  );
  return subject;
}

test('a 64-bit signal beyond 2^53 carries its exact raw value and decimal (replay)', async (t) => {
  // padding_bit_order.dbc: MSG3 (id 4) L, Motorola 64 bits from byte 0 bit 7, so big-endian;
  // MSG4 (id 5) M, Intel 64 bits from bit 0, so little-endian; both unsigned, factor 1, offset 0.
  const { store } = await replayed(t, dbcFixture('padding_bit_order.dbc'), [
    '(1.000) can0 004#0102030405060708',
    '(1.000) can0 005#0102030405060708',
  ]);
  // M = 0x0807060504030201 = 578437695752307201; a double holds …200 (it steps by 128 there).
  const m = store.require('Bus/MSG4/M');
  t.is(m.quality, 'Good');
  t.is(m.value, 578437695752307200);
  t.deepEqual(m.metadata, {
    raw: 578437695752307200,
    rawText: '578437695752307201',
    valueText: '578437695752307201',
  });
  // L = 0x0102030405060708 = 72623859790382856; the nearest double is …850 (steps of 8).
  t.like(store.require('Bus/MSG3/L'), {
    value: 72623859790382850,
    metadata: { rawText: '72623859790382856', valueText: '72623859790382856' },
  });
});

test('a 64-bit signal within 2^53, or scaled by a fraction, carries no decimal text (replay)', async (t) => {
  const folder = await tempDir(t);
  const dbcFile = join(folder, 'wide.dbc');
  await writeFile(
    dbcFile,
    [
      'VERSION ""',
      'BU_: A',
      'BO_ 16 Counters: 8 A',
      ' SG_ Odometer : 0|64@1+ (0.001,0) [0|0] "km" A',
      '',
    ].join('\n'),
  );
  const { store } = await replayed(t, dbcFile, [
    // 2^53 + 1 = 9007199254740993 = 0x0020000000000001, little-endian bytes.
    '(1.000) can0 010#0100000000002000',
  ]);
  // × 0.001: a measurement; the value is the double nearest the exact raw × 0.001 (Python:
  // float(Fraction(2**53 + 1) * Fraction(0.001)), where Number(raw) × 0.001 would give
  // …740.992), no valueText, while the raw value's exact digits still come along.
  t.deepEqual(store.require('Bus/Counters/Odometer').metadata, {
    unit: 'km',
    raw: 2 ** 53,
    rawText: '9007199254740993',
  });
  t.is(store.require('Bus/Counters/Odometer').value, 9007199254740.994);
});

test('a frame shorter than its message: the signals that fit decode, the others are Bad (replay)', async (t) => {
  // EngineData is 8 bytes; 3 arrive: EngineSpeed (bytes 0–1) and CoolantTemp (byte 2) fit,
  // ThrottlePosition (byte 3) and EngineState (byte 4) do not.
  const { store, driver } = await replayed(t, join(configDir, 'can/demo-vehicle.dbc'), [
    '(1.000) can0 100#751764',
  ]);
  t.like(store.require('Bus/EngineData/EngineSpeed'), { quality: 'Good', value: 1501.25 });
  t.like(store.require('Bus/EngineData/CoolantTemp'), { quality: 'Good', value: 60 });
  for (const name of ['ThrottlePosition', 'EngineState']) {
    const sample = store.require(`Bus/EngineData/${name}`);
    t.like(sample, {
      quality: 'Bad',
      reason: 'DecodeError',
      message: 'The frame of EngineData carried 3 of its 8 bytes, too few for this signal.',
    });
    t.is(sample.value, undefined);
    t.is((sample.metadata as CanSampleMetadata | undefined)?.raw, undefined);
  }
  t.is(driver.status().counters?.signalsTruncated, 2);
});

test('a float signal holding NaN or an infinity is Bad (DecodeError), its neighbours Good (replay)', async (t) => {
  // floating_point.dbc: Message1 (0x400) Signal1 float64, bits 0–63; Message2 (0x401) Signal1
  // float32 bits 0–31 and Signal2 float32 bits 32–63, all Intel (little-endian bytes).
  const { store } = await replayed(t, dbcFixture('floating_point.dbc'), [
    // 0x7FC00000 (NaN) then 0x3F800000 (1.0f).
    '(1.000) can0 401#0000C07F0000803F',
    // 0x7FF0000000000000: +Infinity as a double.
    '(1.000) can0 400#000000000000F07F',
  ]);
  for (const id of ['Bus/Message2/Signal1', 'Bus/Message1/Signal1']) {
    const sample = store.require(id);
    t.like(sample, {
      quality: 'Bad',
      reason: 'DecodeError',
      message: 'The signal holds NaN or an infinity.',
    });
    t.is(sample.value, undefined, id);
  }
  t.like(store.require('Bus/Message2/Signal2'), { quality: 'Good', value: 1 });
});

test('a missing replay log stops the driver in Error without retrying', async (t) => {
  const { driver, store, clock, logs } = setup({
    transport: { kind: 'replay', file: 'can/no-such.candump' },
  });
  t.teardown(() => driver.stop());
  await driver.start();
  await until(() => driver.status().state === 'Error', 'Error');
  t.regex(
    driver.status().message ?? '',
    /^Cannot read the replay log .*no-such\.candump: no such file\.$/,
  );
  t.is(clock.pendingTimers(), 0);
  t.like(store.require('Bus/EngineData/EngineSpeed'), {
    quality: 'Unavailable',
    reason: 'Disconnected',
  });
  t.is(logs.lines.filter((line) => line.level === 50).length, 1);
});

test('a missing DBC file fails the start with its path', async (t) => {
  const { driver, catalog } = setup({
    dbcFile: 'can/missing.dbc',
    transport: { kind: 'replay', file: 'can/demo-vehicle.candump' },
  });
  const error = await t.throwsAsync(driver.start());
  t.is(
    error?.message,
    `Cannot read the DBC file ${join(configDir, 'can/missing.dbc')}: no such file.`,
  );
  t.is(driver.status().state, 'Error');
  t.false(catalog.has('Bus'));
  await driver.stop();
});

test('a malformed DBC fails the start with file, line and column', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'broken.dbc');
  await writeFile(file, 'VERSION ""\nBO_ 100 Broken 8 A\n');
  const { driver } = setup({
    dbcFile: file,
    transport: { kind: 'replay', file: 'can/demo-vehicle.candump' },
  });
  const error = await t.throwsAsync(driver.start());
  t.is((error as { code?: string }).code, 'dbc-invalid');
  t.true(error?.message.startsWith(`${file}:2:`), error?.message);
  t.is(driver.status().state, 'Error');
});

test('a DBC with no message fails the start: Error naming the file, no tags', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'shadow');
  await writeFile(file, 'root:$y$j9T$salt$hash:19000:0:99999:7:::\n');
  const { driver, catalog } = setup({
    dbcFile: file,
    transport: { kind: 'replay', file: 'can/demo-vehicle.candump' },
  });
  const error = await t.throwsAsync(driver.start());
  t.is((error as { code?: string }).code, 'dbc-invalid');
  t.regex(error?.message ?? '', new RegExp(`^${file}:2:1: the file defines no message`));
  t.is(driver.status().state, 'Error');
  t.is(driver.status().message, error?.message);
  t.is(driver.status().tagCount, 0);
  t.false(catalog.has('Bus'));
  await driver.stop();
});

test('bus-off from the transport: Unavailable, then a reconnect after the wait', async (t) => {
  const opens: TransportHandlers[] = [];
  const transport: CanTransport = {
    description: 'fake bus',
    open: async (handlers) => {
      opens.push(handlers);
    },
    close: async () => {},
  };
  const { driver, store, clock } = setup(
    { transport: { kind: 'socketcan', interface: 'can0' }, reconnectDelayMs: 250 },
    { transport },
  );
  t.teardown(() => driver.stop());
  await driver.start();
  await until(() => driver.status().state === 'Running', 'running');
  const frame: CanFrame = {
    id: 0x300,
    extended: false,
    data: Uint8Array.from([2]),
    length: 1,
    timestamp: clock.now(),
  };
  opens[0]?.onFrames([frame]);
  t.is(store.require('Bus/DoorStatus/PassengerDoor').metadata?.valueText, 'Open');
  opens[0]?.onEnd({
    kind: 'lost',
    error: new CanTransportError('connection', "CAN interface 'can0' went bus-off."),
  });
  t.like(store.require('Bus/DoorStatus/PassengerDoor'), {
    quality: 'Unavailable',
    reason: 'Disconnected',
    message: "CAN interface 'can0' went bus-off.",
  });
  t.like(driver.status(), { state: 'Reconnecting', message: "CAN interface 'can0' went bus-off." });
  // Frames of the lost connection are ignored if any straggle in.
  clock.advance(249);
  t.is(opens.length, 1);
  clock.advance(1);
  await until(() => driver.status().state === 'Running', 'running again');
  t.is(opens.length, 2);
});

test('relative paths resolve from the profile folder; the registry builds the driver', async (t) => {
  const store = new TagStore();
  const config = driverConfigSchema.parse({
    type: 'can',
    name: 'Bus',
    dbcFile: 'can/demo-vehicle.dbc',
    transport: { kind: 'replay', file: 'can/demo-vehicle.candump' },
  });
  const driver = await createDriver(config, {
    store,
    clock: new ManualClock(),
    logger: silent,
    stateDir: '/nonexistent',
    profileDir: configDir,
  });
  t.is(driver.type, 'can');
  t.is(driver.status().state, 'Stopped');
  t.is(store.size, 0, 'constructing reads nothing');
  await driver.start();
  t.is(store.size, 13);
  await driver.stop();
  if (config.type !== 'can') return t.fail('a CAN config');
  t.is(
    createCanDriver(config, { store, clock: new ManualClock(), logger: silent, stateDir: '/x' })
      .name,
    'Bus',
  );
});

test('the schema refuses unknown transports, bitrates and keys', (t) => {
  const base = { type: 'can', name: 'Bus', dbcFile: 'a.dbc' };
  const errors = (input: Record<string, unknown>) =>
    canDriverSchema
      .safeParse({ ...base, ...input })
      .error?.issues.map((issue) => issue.path.join('.'));
  t.deepEqual(errors({ transport: { kind: 'slcan', port: '/dev/ttyACM0', bitrate: 300_000 } }), [
    'transport.bitrate',
  ]);
  t.deepEqual(errors({ transport: { kind: 'slcan', port: 'socket://nohost', bitrate: 500_000 } }), [
    'transport.port',
  ]);
  t.deepEqual(errors({ transport: { kind: 'kvaser' } }), ['transport.kind']);
  t.deepEqual(errors({ transport: { kind: 'socketcan', interface: 'can0', bitrate: 1 } }), [
    'transport',
  ]);
  t.deepEqual(errors({ transport: { kind: 'replay', file: 'x', speed: 0 } }), ['transport.speed']);
  t.deepEqual(
    errors({
      transport: { kind: 'socketcan', interface: 'can0' },
      reconnectDelayMs: 5000,
      maxReconnectDelayMs: 1000,
    }),
    ['maxReconnectDelayMs'],
  );
  t.deepEqual(
    canDriverSchema.parse({
      ...base,
      transport: { kind: 'slcan', port: '/dev/ttyACM0', bitrate: 500_000 },
    }),
    {
      ...base,
      enabled: true,
      transport: {
        kind: 'slcan',
        port: '/dev/ttyACM0',
        bitrate: 500_000,
        baudRate: 115_200,
        timestamps: false,
      },
      reconnectDelayMs: 1000,
      maxReconnectDelayMs: 30_000,
    },
  );
});
