/**
 * The Modbus driver against Debian's python3-pymodbus server (an implementation independent of
 * modbus-serial, zero-based addressing): over TCP, and as RTU on a socat pseudo-terminal pair.
 * Register contents are encoded by pymodbus's own payload builder. A server stopped with SIGSTOP
 * is a device that hangs with its connection (or serial line) still open.
 */
import test, { type ExecutionContext } from 'ava';
import { pollRefreshBoundMs } from '../../../drivers/driver.js';
import { systemClock } from '../../../src/clock.js';
import type { Sample } from '../../../src/tags/sample.js';
import type { TagStore } from '../../../src/tags/tag-store.js';
import {
  expectedText,
  expectedValue,
  layoutCases,
  modbusSubject,
  typedCases,
} from '../../helpers/modbus-harness.js';
import {
  ModbusPeer,
  type PeerData,
  PtyPair,
  pymodbusMissing,
  socatMissing,
} from '../../helpers/modbus-peer.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { until } from '../../helpers/until.js';

const missing = pymodbusMissing();
if (missing !== undefined) console.warn(`pymodbus tests skipped: ${missing}`);
const rtuMissing = missing ?? socatMissing();
const peerTest = missing === undefined ? test.serial : test.serial.skip;
const rtuTest = rtuMissing === undefined ? test.serial : test.serial.skip;
const quality = (store: TagStore, id: string) => store.get(id)?.quality;

/** Typed values in holding registers, plus bits, an input register and a scaled value. */
function typedLayout() {
  const cases = typedCases();
  const { tags, hr } = layoutCases(cases, 2);
  hr[0] = 0x8001;
  hr[1] = 2500;
  const data: PeerData = { hr, ir: [7, 0xfffe], co: [0, 1, 1], di: [1, 0] };
  const extra = [
    { name: 'Bits/b0', table: 'holdingRegister', address: 0, type: 'bit', bit: 0 },
    { name: 'Bits/b15', table: 'holdingRegister', address: 0, type: 'bit', bit: 15 },
    { name: 'Bits/b1', table: 'holdingRegister', address: 0, type: 'bit', bit: 1 },
    { name: 'Scaled', table: 'holdingRegister', address: 1, scale: 0.01, offset: 1 },
    { name: 'In/int', table: 'inputRegister', address: 1, type: 'int16' },
    { name: 'In/u', table: 'inputRegister', address: 0 },
    { name: 'Coil1', table: 'coil', address: 1 },
    { name: 'Coil0', table: 'coil', address: 0 },
    { name: 'Di0', table: 'discreteInput', address: 0 },
  ];
  return { cases, tags: [...tags, ...extra], data };
}

async function checkTyped(
  t: ExecutionContext,
  store: TagStore,
  cases: ReturnType<typeof typedCases>,
): Promise<void> {
  await until(
    () =>
      cases.every((c) => quality(store, `Dev/Typed/${c.name}`) === 'Good') &&
      quality(store, 'Dev/Di0') === 'Good',
    'every tag is Good',
    20_000,
  );
  for (const typed of cases) {
    const sample = store.require(`Dev/Typed/${typed.name}`);
    t.is(sample.value, expectedValue(typed), typed.name);
    t.is(sample.metadata?.valueText, expectedText(typed), typed.name);
  }
  const value = (name: string) => store.require(`Dev/${name}`).value;
  t.deepEqual(['Bits/b0', 'Bits/b15', 'Bits/b1', 'Coil0', 'Coil1', 'Di0'].map(value), [
    true,
    true,
    false,
    false,
    true,
    true,
  ]);
  t.is(value('Scaled'), 2500 * 0.01 + 1);
  t.is(value('In/int'), -2);
  t.is(value('In/u'), 7);
}

peerTest('TCP: every type in every byte order, bits and scaling against pymodbus', async (t) => {
  const { cases, tags, data } = typedLayout();
  const peer = await ModbusPeer.start({ kind: 'tcp' }, data);
  t.teardown(() => peer.kill());
  const { driver, store } = modbusSubject({
    transport: { kind: 'tcp', host: '127.0.0.1', port: peer.port },
    tags,
  });
  t.teardown(() => driver.stop());
  await driver.start();
  await checkTyped(t, store, cases);
  // Holding registers 0 … end contiguous (gaps of one), input 0–1, coils 0–1, inputs 0: the
  // minimum is ⌈span / 125⌉ + 1 + 1 + 1.
  const span = data.hr?.length ?? 0;
  t.is(driver.status().counters?.requests, Math.ceil(span / 125) + 3);
});

peerTest(
  'TCP: a block pymodbus refuses is split, only the missing addresses turn Bad',
  async (t) => {
    const peer = await ModbusPeer.start({ kind: 'tcp' }, { hr: [5, 6, 7, 8], ir: [1] });
    t.teardown(() => peer.kill());
    const { driver, store } = modbusSubject({
      transport: { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      timeoutMs: 2000,
      tags: [
        { name: 'H0', table: 'holdingRegister', address: 0 },
        { name: 'H3', table: 'holdingRegister', address: 3 },
        { name: 'H6', table: 'holdingRegister', address: 6 },
        { name: 'H4', table: 'holdingRegister', address: 4, type: 'int16' },
        { name: 'I0', table: 'inputRegister', address: 0 },
      ],
    });
    t.teardown(() => driver.stop());
    await driver.start();
    await until(() => quality(store, 'Dev/I0') === 'Good', 'the poll is done');
    await until(
      () => quality(store, 'Dev/H6') === 'Bad' && quality(store, 'Dev/H3') === 'Good',
      'the split reads are done',
    );
    t.is(store.require('Dev/H0').value, 5);
    t.is(store.require('Dev/H3').value, 8);
    t.is(store.require('Dev/H4').reason, 'DeviceException');
    t.is(store.require('Dev/H6').reason, 'DeviceException');
    t.is(store.require('Dev/I0').value, 1);
    t.is(driver.status().counters?.blocksSplit, 1);
  },
);

peerTest(
  'TCP: a server killed and restarted: Unavailable (Disconnected), then Good again',
  async (t) => {
    const data: PeerData = { hr: [11, 22] };
    let peer = await ModbusPeer.start({ kind: 'tcp' }, data);
    const port = peer.port;
    t.teardown(() => peer.kill());
    const { driver, store, clock } = modbusSubject({
      transport: { kind: 'tcp', host: '127.0.0.1', port },
      reconnectDelayMs: 100,
      maxReconnectDelayMs: 400,
      tags: [
        { name: 'A', table: 'holdingRegister', address: 0 },
        { name: 'B', table: 'holdingRegister', address: 1 },
      ],
    });
    t.teardown(() => driver.stop());
    await driver.start();
    await until(() => quality(store, 'Dev/B') === 'Good', 'values arrive');
    await peer.kill();
    await until(() => quality(store, 'Dev/A') === 'Unavailable', 'the tags are Unavailable');
    t.is(store.require('Dev/B').reason, 'Disconnected');
    t.is(driver.status().state, 'Reconnecting');
    // While the server is down, attempts fail and the wait doubles: 100, 200, 400, 400 ms.
    const failures = () => driver.status().counters?.connectsFailed ?? 0;
    for (const delay of [100, 200, 400, 400]) {
      const before = failures();
      t.is(clock.pendingTimers(), 1);
      clock.advance(delay - 1);
      await new Promise((resolve) => setTimeout(resolve, 10));
      t.is(failures(), before, `no attempt before ${delay} ms`);
      clock.advance(1);
      await until(() => failures() === before + 1, 'the attempt failed');
    }
    t.is(quality(store, 'Dev/A'), 'Unavailable');
    peer = await ModbusPeer.start({ kind: 'tcp', port }, { hr: [33, 44] });
    clock.advance(400);
    await until(() => quality(store, 'Dev/B') === 'Good', 'Good again after the restart');
    t.is(store.require('Dev/A').value, 33);
    t.is(store.require('Dev/B').value, 44);
    t.is(driver.status().state, 'Running');
    t.is(driver.status().counters?.disconnects, 1);
  },
);

rtuTest(
  'RTU over a socat pty pair: every type and order against pymodbus’s serial server',
  async (t) => {
    const dir = await tempDir(t);
    const pair = await PtyPair.open(dir);
    t.teardown(() => pair.close());
    const { cases, tags, data } = typedLayout();
    const peer = await ModbusPeer.start(
      { kind: 'rtu', device: pair.device, baudRate: 19_200, parity: 'E' },
      data,
      7,
    );
    t.teardown(() => peer.kill());
    const { driver, store } = modbusSubject({
      transport: { kind: 'rtu', path: pair.host, baudRate: 19_200, parity: 'even' },
      unitId: 7,
      timeoutMs: 3000,
      tags: [...tags, { name: 'Missing', table: 'inputRegister', address: 50 }],
    });
    t.teardown(() => driver.stop());
    await driver.start();
    await checkTyped(t, store, cases);
    await until(() => quality(store, 'Dev/Missing') === 'Bad', 'the missing register is Bad');
    t.is(store.require('Dev/Missing').reason, 'DeviceException');
    t.is(store.require('Dev/In/u').value, 7, 'its block neighbours stay Good');
    t.is(driver.status().counters?.timeouts, 0);
    t.is(driver.status().counters?.malformed, 0);
  },
);

rtuTest('RTU: a serial line that goes away turns the tags Unavailable', async (t) => {
  const dir = await tempDir(t);
  const pair = await PtyPair.open(dir);
  t.teardown(() => pair.close());
  const peer = await ModbusPeer.start({ kind: 'rtu', device: pair.device }, { hr: [5] });
  t.teardown(() => peer.kill());
  const { driver, store } = modbusSubject({
    transport: { kind: 'rtu', path: pair.host },
    tags: [{ name: 'A', table: 'holdingRegister', address: 0 }],
  });
  t.teardown(() => driver.stop());
  await driver.start();
  await until(() => quality(store, 'Dev/A') === 'Good', 'the value arrives');
  t.is(store.require('Dev/A').value, 5);
  await peer.kill();
  await pair.close();
  await until(() => quality(store, 'Dev/A') === 'Unavailable', 'the tag is Unavailable');
  t.is(store.require('Dev/A').reason, 'Disconnected');
  t.is(driver.status().state, 'Reconnecting');
});

/** Five tags in five blocks (further apart than maxGap); register a holds a + 1. */
const silentTags = [0, 100, 200, 300, 400].map((address, index) => ({
  name: `S${index + 1}`,
  table: 'holdingRegister',
  address,
}));
const silentIds = silentTags.map((tag) => `Dev/${tag.name}`);
const silentData: PeerData = { hr: Array.from({ length: 401 }, (_, address) => address + 1) };
const silentPoll = { pollIntervalMs: 500, timeoutMs: 500 };
/** The refresh bound the driver declares: max(1000, 3 × 500, 500 + 5 requests × 500) ms. */
const silentBound = pollRefreshBoundMs(
  silentPoll.pollIntervalMs,
  silentTags.length * silentPoll.timeoutMs,
);
/**
 * Real-time room on top of the bound before a tag that is still Good fails the test: timers on a
 * loaded machine fire late, so this only catches a tag that never leaves Good. The exact bound
 * is proven on the manual clock (silent-device.test.ts); here the time is only logged.
 */
const busyMachineRoomMs = 20_000;

/**
 * On the real clock, with the store's sweep running: reads the five tags, stops the peer, and
 * checks that every tag leaves Good (logging how long after its last Good value, against the
 * refresh bound), then that the driver's own verdict, Bad (Timeout) or Unavailable, replaces
 * any Stale. Returns the store, for what the caller checks after resuming the peer.
 */
async function stopAnswering(
  t: ExecutionContext,
  peer: ModbusPeer,
  transport: Record<string, unknown>,
): Promise<TagStore> {
  const { driver, store } = modbusSubject(
    {
      transport,
      ...silentPoll,
      reconnectDelayMs: 100,
      maxReconnectDelayMs: 1000,
      tags: silentTags,
    },
    {},
    { clock: systemClock, staleSweepIntervalMs: 50 },
  );
  t.teardown(() => store.stop());
  t.teardown(() => driver.stop());
  await store.start();
  t.is(store.staleLimitMs(silentIds[0] as string), undefined, 'not defined before the start');
  // Real time of each tag's last Good write, and of the first other sample after the pause.
  const lastGood = new Map<string, number>();
  const leftGood = new Map<string, { at: number; sample: Sample }>();
  let paused = false;
  store.subscribe((updates) => {
    const now = performance.now();
    for (const { sample } of updates) {
      if (sample.quality === 'Good') {
        // An answer already on its way when the peer stopped: the clock starts again.
        lastGood.set(sample.fullTagId, now);
        leftGood.delete(sample.fullTagId);
      } else if (paused && !leftGood.has(sample.fullTagId))
        leftGood.set(sample.fullTagId, { at: now, sample });
    }
  });
  await driver.start();
  t.is(store.staleLimitMs(silentIds[0] as string), silentBound);
  await until(
    () => silentIds.every((id) => quality(store, id) === 'Good'),
    'every tag is Good',
    20_000,
  );
  t.deepEqual(
    silentIds.map((id) => store.require(id).value),
    [1, 101, 201, 301, 401],
  );

  peer.pause();
  paused = true;
  await until(
    () => silentIds.every((id) => leftGood.has(id)),
    'every tag has left Good',
    silentBound + busyMachineRoomMs,
  );
  for (const id of silentIds) {
    const left = leftGood.get(id) as { at: number; sample: Sample };
    const after = Math.round(left.at - (lastGood.get(id) as number));
    t.log(
      `${id}: ${left.sample.quality} (${left.sample.reason}) ${after} ms after its last Good (bound ${silentBound} ms)`,
    );
    t.true(
      after <= silentBound + busyMachineRoomMs,
      `${id} left Good ${after} ms after its last Good value (bound ${silentBound} ms): ${left.sample.quality} ${left.sample.reason}`,
    );
  }
  await until(
    () =>
      silentIds.every((id) => {
        const sample = store.get(id);
        return (
          (sample?.quality === 'Bad' && sample.reason === 'Timeout') ||
          sample?.quality === 'Unavailable'
        );
      }),
    'every tag is Bad (Timeout) or Unavailable',
    20_000,
  );
  t.true(silentIds.every((id) => store.require(id).value === undefined));
  return store;
}

peerTest(
  'TCP: a server that stops answering with its connection open: no tag stays Good',
  async (t) => {
    const peer = await ModbusPeer.start({ kind: 'tcp' }, silentData);
    // SIGCONT before the kill, whatever happened: no stopped process is left behind.
    t.teardown(() => peer.kill());
    t.teardown(() => peer.resume());
    const store = await stopAnswering(t, peer, {
      kind: 'tcp',
      host: '127.0.0.1',
      port: peer.port,
    });
    peer.resume();
    await until(
      () => silentIds.every((id) => quality(store, id) === 'Good'),
      'every tag is Good again',
      20_000,
    );
    t.deepEqual(
      silentIds.map((id) => store.require(id).value),
      [1, 101, 201, 301, 401],
    );
  },
);

rtuTest('RTU: a device that falls silent on an open line: no tag stays Good', async (t) => {
  const dir = await tempDir(t);
  const pair = await PtyPair.open(dir);
  t.teardown(() => pair.close());
  const peer = await ModbusPeer.start({ kind: 'rtu', device: pair.device }, silentData);
  t.teardown(() => peer.kill());
  t.teardown(() => peer.resume());
  await stopAnswering(t, peer, { kind: 'rtu', path: pair.host });
});
