/**
 * The Modbus driver against modbus-serial's ServerTCP on loopback: the driver contract, every
 * type and byte order, the request count of the block planner, refused blocks, deadband, a
 * device that never answers, and a thousand reconnects that leave nothing behind.
 */
import { spawnSync } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { pino } from 'pino';
import { createDriver, driverConfigSchema } from '../../../drivers/registry.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import {
  expectedText,
  expectedValue,
  layoutCases,
  modbusSubject,
  typedCases,
} from '../../helpers/modbus-harness.js';
import { pymodbusMissing } from '../../helpers/modbus-peer.js';
import { startModbusSerialServer } from '../../helpers/modbus-serial-server.js';
import { until } from '../../helpers/until.js';
import { driverContract } from '../contract.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const quality = (store: TagStore, id: string) => store.get(id)?.quality;
const missing = pymodbusMissing();
if (missing !== undefined) console.warn(`Typed Modbus tests skipped: ${missing}`);
const encoderTest = missing === undefined ? test.serial : test.serial.skip;

const contractTags = [
  { name: 'Level', table: 'holdingRegister', address: 0 },
  { name: 'Flow', table: 'inputRegister', address: 2, type: 'float32' },
  { name: 'Running', table: 'coil', address: 1 },
  { name: 'Alarm', table: 'discreteInput', address: 0 },
];

driverContract(test, {
  type: 'modbus (modbus-serial ServerTCP)',
  hasPeer: true,
  async setup() {
    const server = await startModbusSerialServer({
      hr: [42],
      ir: [0, 0, 0x3fc0, 0],
      co: [0, 1],
      di: [1],
    });
    let alive = true;
    const { driver, store, clock } = modbusSubject({
      transport: { kind: 'tcp', host: '127.0.0.1', port: server.port },
      tags: contractTags,
    });
    const tagIds = contractTags.map((tag) => `Dev/${tag.name}`);
    return {
      driver,
      store,
      clock,
      tagIds,
      async produce() {
        if (!alive) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          return;
        }
        // The first poll runs on connecting. (Advancing the clock while a request is in
        // flight would time it out: the answer comes in real time.)
        await until(() => tagIds.every((id) => quality(store, id) === 'Good'), 'every tag is Good');
      },
      async disconnect() {
        alive = false;
        await server.close();
        await until(
          () => tagIds.every((id) => quality(store, id) === 'Unavailable'),
          'every tag is Unavailable',
        );
      },
      teardown: () => server.close(),
    };
  },
});

encoderTest('every type in every byte order reads the value pymodbus encoded', async (t) => {
  const cases = typedCases();
  const { tags, hr } = layoutCases(cases, 3);
  const server = await startModbusSerialServer({
    hr: [0x8001, 1234, ...hr.slice(2)],
    co: [1, 0, 1],
    di: [0, 1],
  });
  t.teardown(() => server.close());
  const { driver, store } = modbusSubject({
    transport: { kind: 'tcp', host: '127.0.0.1', port: server.port },
    tags: [
      ...tags,
      { name: 'Bits/b0', table: 'holdingRegister', address: 0, type: 'bit', bit: 0 },
      { name: 'Bits/b1', table: 'holdingRegister', address: 0, type: 'bit', bit: 1 },
      { name: 'Bits/b15', table: 'holdingRegister', address: 0, type: 'bit', bit: 15 },
      {
        name: 'Scaled',
        table: 'holdingRegister',
        address: 1,
        scale: 0.5,
        offset: -10,
        unit: 'bar',
      },
      { name: 'Coil0', table: 'coil', address: 0 },
      { name: 'Coil1', table: 'coil', address: 1 },
      { name: 'Coil2', table: 'coil', address: 2 },
      { name: 'Input1', table: 'discreteInput', address: 1 },
    ],
  });
  t.teardown(() => driver.stop());
  await driver.start();
  await until(
    () =>
      quality(store, 'Dev/Input1') === 'Good' && quality(store, 'Dev/Typed/string_DCBA') === 'Good',
    'values arrive',
  );
  for (const typed of cases) {
    const sample = store.require(`Dev/Typed/${typed.name}`);
    t.is(sample.quality, 'Good', typed.name);
    t.is(sample.value, expectedValue(typed), typed.name);
    t.is(sample.metadata?.valueText, expectedText(typed), typed.name);
  }
  const value = (name: string) => store.require(`Dev/${name}`).value;
  t.is(value('Bits/b0'), true);
  t.is(value('Bits/b1'), false);
  t.is(value('Bits/b15'), true);
  t.is(value('Scaled'), 1234 * 0.5 - 10);
  t.deepEqual(store.require('Dev/Scaled').metadata, {
    source: `modbus:127.0.0.1:${server.port}/1/HR1`,
    unit: 'bar',
  });
  t.deepEqual(['Coil0', 'Coil1', 'Coil2', 'Input1'].map(value), [true, false, true, true]);
  // Registers 0 … end in one table, 125 at most per request: ⌈span / 125⌉ requests.
  const span = hr.length;
  t.is(server.requests[3], Math.ceil(span / 125));
});

test.serial(
  'one poll sends exactly the minimum number of requests for a hand-made layout',
  async (t) => {
    const hr = Array.from({ length: 2000 }, (_, i) => i);
    const server = await startModbusSerialServer({ hr, ir: hr });
    t.teardown(() => server.close());
    const contiguous = Array.from({ length: 300 }, (_, i) => ({
      name: `A/r${i}`,
      table: 'holdingRegister',
      address: i,
    }));
    const sparse = Array.from({ length: 20 }, (_, i) => ({
      name: `B/r${i}`,
      table: 'holdingRegister',
      // every 17th register: gaps of 16 are read through
      address: 1000 + i * 17,
    }));
    const far = [
      { name: 'C/x', table: 'holdingRegister', address: 1500, type: 'float64' },
      // a gap of 17 after C/x: a request of its own
      { name: 'C/y', table: 'holdingRegister', address: 1521 },
      { name: 'D/in', table: 'inputRegister', address: 10, type: 'int32' },
      { name: 'E/slow', table: 'inputRegister', address: 11, pollIntervalMs: 5000 },
    ];
    const { driver, store, clock } = modbusSubject({
      transport: { kind: 'tcp', host: '127.0.0.1', port: server.port },
      tags: [...contiguous, ...sparse, ...far],
    });
    t.teardown(() => driver.stop());
    await driver.start();
    // Holding: 0–299 → 3; 1000–1323 (span 324) → 3; 1500–1503 → 1; 1521 → 1. Input: 10–11 → 1.
    // Slow group: input 11 → 1.
    t.deepEqual(
      driver.plannedRequests().map((group) => [group.intervalMs, group.requests.length]),
      [
        [1000, 9],
        [5000, 1],
      ],
    );
    await until(
      () => quality(store, 'E/slow'.replace(/^/, 'Dev/')) === 'Good',
      'the first polls are done',
    );
    t.is(server.requests[3], 8);
    t.is(server.requests[4], 2);
    clock.advance(1000);
    await until(
      () => (server.requests[3] ?? 0) === 16 && (server.requests[4] ?? 0) === 3,
      'the second poll is done',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    t.is(server.requests[4], 3, 'the slow group is not due yet');
    t.is(store.require('Dev/A/r299').value, 299);
    t.is(store.require('Dev/B/r19').value, 1000 + 19 * 17);
    t.is(store.require('Dev/D/in').value, 10 * 65536 + 11);
    t.is(driver.status().counters?.requests, 19);
  },
);

test.serial(
  'a refused block is read tag by tag: only the missing addresses turn Bad',
  async (t) => {
    // 10 holding registers; tags at 8 and 12 are planned into one block 8–12, which is refused.
    const server = await startModbusSerialServer({
      hr: Array.from({ length: 10 }, (_, i) => i * 10),
    });
    t.teardown(() => server.close());
    const { driver, store, clock } = modbusSubject({
      transport: { kind: 'tcp', host: '127.0.0.1', port: server.port },
      tags: [
        { name: 'First', table: 'holdingRegister', address: 0 },
        { name: 'Eight', table: 'holdingRegister', address: 8 },
        { name: 'Twelve', table: 'holdingRegister', address: 12 },
        { name: 'Nine', table: 'holdingRegister', address: 9 },
      ],
    });
    t.teardown(() => driver.stop());
    await driver.start();
    await until(() => quality(store, 'Dev/Twelve') === 'Bad', 'the missing tag is Bad');
    await until(() => quality(store, 'Dev/Nine') === 'Good', 'the others are Good');
    t.is(store.require('Dev/First').value, 0);
    t.is(store.require('Dev/Eight').value, 80);
    t.is(store.require('Dev/Nine').value, 90);
    const bad = store.require('Dev/Twelve');
    t.is(bad.reason, 'DeviceException');
    t.regex(bad.message ?? '', /exception 2 \(illegal data address\)/);
    t.is(bad.value, undefined);
    // One block 0–12 refused, then 4 single reads.
    t.is(server.requests[3], 5);
    t.is(driver.status().counters?.blocksSplit, 1);
    clock.advance(1000);
    await until(() => server.requests[3] === 9, 'the next poll reads tag by tag again');
    t.is(driver.status().counters?.blocksSplit, 1);
    t.is(driver.status().state, 'Running');
  },
);

test.serial('deadband: moves within it re-report the last value, so nothing changes', async (t) => {
  const hr = [1000];
  const server = await startModbusSerialServer({ hr });
  t.teardown(() => server.close());
  const { driver, store, clock } = modbusSubject({
    transport: { kind: 'tcp', host: '127.0.0.1', port: server.port },
    tags: [{ name: 'T', table: 'holdingRegister', address: 0, scale: 0.1, deadband: 0.5 }],
  });
  t.teardown(() => driver.stop());
  const changes: number[] = [];
  store.subscribe((updates) => {
    for (const update of updates)
      if (update.changed && update.sample.quality === 'Good')
        changes.push(update.sample.value as number);
  });
  await driver.start();
  await until(() => changes.length === 1, 'the first value');
  for (const raw of [1003, 1005, 1006, 1010, 1001]) {
    hr[0] = raw;
    const before = server.requests[3];
    clock.advance(1000);
    await until(
      () =>
        server.requests[3] !== before &&
        store.require('Dev/T').utcTimestamp === new Date(clock.now()).toISOString(),
      'a poll',
    );
  }
  // 100 → 100.3 (within), 100.5 (within, not more than 0.5), 100.6 (reported), 101 (within of
  // 100.6), 100.1 (0.5 from 100.6: within).
  t.deepEqual(
    changes.map((v) => Math.round(v * 10) / 10),
    [100, 100.6],
  );
});

test.serial(
  '64-bit integers beyond 2^53: the nearest double as value, the exact decimal in metadata.valueText',
  async (t) => {
    // uint64 2^53 + 1, int64 −(2^53 + 1), int64 5, and the first again scaled.
    const hr = [0x0020, 0, 0, 1, 0xffdf, 0xffff, 0xffff, 0xffff, 0, 0, 0, 5];
    const server = await startModbusSerialServer({ hr });
    t.teardown(() => server.close());
    const { driver, store, clock } = modbusSubject({
      transport: { kind: 'tcp', host: '127.0.0.1', port: server.port },
      tags: [
        { name: 'Big', table: 'holdingRegister', address: 0, type: 'uint64', unit: 'Wh' },
        { name: 'Negative', table: 'holdingRegister', address: 4, type: 'int64' },
        { name: 'Small', table: 'holdingRegister', address: 8, type: 'int64' },
        { name: 'Scaled', table: 'holdingRegister', address: 0, type: 'uint64', scale: 2 },
      ],
    });
    t.teardown(() => driver.stop());
    await driver.start();
    await until(() => quality(store, 'Dev/Scaled') === 'Good', 'values arrive');
    const big = store.require('Dev/Big');
    t.is(big.value, 9_007_199_254_740_992);
    t.deepEqual(big.metadata, {
      source: `modbus:127.0.0.1:${server.port}/1/HR0`,
      unit: 'Wh',
      valueText: '9007199254740993',
    });
    t.is(store.require('Dev/Negative').value, -9_007_199_254_740_992);
    t.is(store.require('Dev/Negative').metadata?.valueText, '-9007199254740993');
    t.is(store.require('Dev/Small').value, 5);
    t.false('valueText' in (store.require('Dev/Small').metadata ?? {}));
    // A scaled value is a measurement, not a count: no exact text.
    t.is(store.require('Dev/Scaled').value, 2 * 9_007_199_254_740_992);
    t.false('valueText' in (store.require('Dev/Scaled').metadata ?? {}));
    // Back within 2^53: the text goes away.
    hr[3] = 0;
    clock.advance(1000);
    await until(() => store.require('Dev/Big').metadata?.valueText === undefined, 'the next poll');
    t.is(store.require('Dev/Big').value, 9_007_199_254_740_992);
    t.deepEqual(store.require('Dev/Big').metadata, {
      source: `modbus:127.0.0.1:${server.port}/1/HR0`,
      unit: 'Wh',
    });
  },
);

test.serial('a device that never answers: Bad (Timeout), then a new connection', async (t) => {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const port = (server.address() as { port: number }).port;
  const { driver, store, clock } = modbusSubject({
    transport: { kind: 'tcp', host: '127.0.0.1', port },
    timeoutMs: 500,
    timeoutsBeforeReconnect: 2,
    reconnectDelayMs: 100,
    tags: [
      { name: 'A', table: 'holdingRegister', address: 0 },
      { name: 'B', table: 'coil', address: 0 },
    ],
  });
  t.teardown(() => driver.stop());
  await driver.start();
  // One request in flight: its timeout and the poll timer are pending.
  await until(
    () => driver.status().state === 'Running' && clock.pendingTimers() === 2,
    'A is sent',
  );
  clock.advance(499);
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.is(quality(store, 'Dev/A'), 'Unavailable', 'not yet timed out');
  t.is(driver.status().counters?.timeouts, 0);
  clock.advance(1);
  await until(() => driver.status().counters?.timeouts === 1, 'A timed out');
  clock.advance(500);
  await until(() => quality(store, 'Dev/B') === 'Bad', 'B timed out');
  const sample = store.require('Dev/A');
  t.is(sample.quality, 'Bad');
  t.is(sample.reason, 'Timeout');
  t.is(sample.message, 'No answer within 500 ms');
  t.is(driver.status().counters?.timeouts, 2);
  t.is(driver.status().state, 'Reconnecting');
  t.is(driver.status().counters?.disconnects, 1);
  await until(() => sockets.size === 0, 'the connection is closed');
  clock.advance(100);
  await until(() => connections === 2, 'a new connection is made');
  t.is(
    quality(store, 'Dev/A'),
    'Bad',
    'still Bad (Timeout), not Unavailable: the device is reachable',
  );
});

test.serial('a thousand reconnects leave no sockets and no timers behind', async (t) => {
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as { port: number }).port;
  const count = () => {
    const resources = process.getActiveResourcesInfo();
    return {
      sockets: resources.filter((name) => /TCPSocketWrap|TCPWrap|Pipe/.test(name)).length,
      timers: resources.filter((name) => name === 'Timeout').length,
    };
  };
  const before = count();
  const { driver, clock, logs } = modbusSubject({
    transport: { kind: 'tcp', host: '127.0.0.1', port },
    reconnectDelayMs: 10,
    maxReconnectDelayMs: 10,
    tags: [{ name: 'A', table: 'holdingRegister', address: 0 }],
  });
  await driver.start();
  const ended = () => {
    const counters = driver.status().counters ?? {};
    return (counters.disconnects ?? 0) + (counters.connectsFailed ?? 0);
  };
  for (let i = 1; i <= 1000; i++) {
    await until(() => ended() >= i, `connection ${i} ended`);
    t.is(clock.pendingTimers(), 1, 'only the reconnect timer is pending');
    clock.advance(10);
  }
  await until(() => ended() >= 1001, 'the last connection ended');
  t.true(accepted >= 1000, `${accepted} connections accepted`);
  await new Promise((resolve) => setImmediate(resolve));
  const after = count();
  t.true(
    after.sockets <= before.sockets,
    `sockets: ${before.sockets} before, ${after.sockets} after`,
  );
  t.true(after.timers <= before.timers, `timers: ${before.timers} before, ${after.timers} after`);
  t.is(driver.status().state, 'Reconnecting');
  // The repeated failure is logged once, not a thousand times.
  t.true(logs.lines.filter((line) => line.level === 40).length <= 2, 'warnings');
  await driver.stop();
  t.is(clock.pendingTimers(), 0);
});

test.serial('the registry builds it lazily and a TCP profile never loads serialport', async (t) => {
  const config = driverConfigSchema.parse({
    type: 'modbus',
    name: 'M',
    transport: { kind: 'tcp', host: '127.0.0.1' },
    tags: [{ name: 'A', table: 'holdingRegister', address: 0 }],
  });
  const store = new TagStore();
  const driver = await createDriver(config, {
    store,
    clock: new ManualClock(),
    logger: pino({ level: 'silent' }),
    stateDir: '/nonexistent',
  });
  t.is(driver.type, 'modbus');
  t.is(store.size, 0);
  const script = [
    "import { createRequire } from 'node:module';",
    "const { createDriver, driverConfigSchema } = await import('./drivers/registry.ts');",
    "const { TagStore } = await import('./src/tags/tag-store.ts');",
    "const { systemClock } = await import('./src/clock.ts');",
    "const { pino } = await import('pino');",
    "const config = driverConfigSchema.parse({ type: 'modbus', name: 'M', transport: { kind: 'tcp', host: '127.0.0.1', port: 1 }, tags: [{ name: 'A', table: 'holdingRegister', address: 0 }] });",
    "const driver = await createDriver(config, { store: new TagStore(), clock: systemClock, logger: pino({ level: 'silent' }), stateDir: '/x' });",
    'await driver.start(); await new Promise((r) => setTimeout(r, 200)); await driver.stop();',
    'const loaded = Object.keys(createRequire(import.meta.url).cache);',
    "console.log(JSON.stringify({ serialport: loaded.filter((p) => p.includes('serialport')).length, state: driver.status().state }));",
  ].join('\n');
  const result = spawnSync(
    process.execPath,
    ['--import=tsx', '--input-type=module', '-e', script],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  t.is(result.status, 0, result.stderr);
  t.deepEqual(JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}'), {
    serialport: 0,
    state: 'Stopped',
  });
});

test('the schema rejects impossible tags with their paths', (t) => {
  const result = driverConfigSchema.safeParse({
    type: 'modbus',
    name: 'M',
    transport: { kind: 'tcp', host: 'plc' },
    maxRegistersPerRequest: 2,
    tags: [
      { name: 'A', table: 'coil', address: 0, type: 'uint16' },
      { name: 'B', table: 'holdingRegister', address: 0, type: 'bit' },
      { name: 'C', table: 'holdingRegister', address: 0, type: 'string' },
      { name: 'D', table: 'holdingRegister', address: 65535, type: 'float32' },
      { name: 'E', table: 'holdingRegister', address: 0, type: 'float64' },
      // A repeated name is the profile's rule, for every driver type (validate-profile.test.ts).
      { name: 'E', table: 'holdingRegister', address: 0 },
    ],
  });
  t.false(result.success);
  const paths = result.error?.issues.map((issue) => issue.path.join('.')).sort();
  t.deepEqual(paths, [
    'tags.0.type',
    'tags.1.bit',
    'tags.2.length',
    'tags.3.address',
    'tags.4.length',
  ]);
  const defaults = driverConfigSchema.parse({
    type: 'modbus',
    name: 'M',
    transport: { kind: 'tcp', host: 'plc' },
    tags: [{ name: 'A', table: 'holdingRegister', address: 0 }],
  });
  t.like(defaults, {
    unitId: 1,
    pollIntervalMs: 1000,
    timeoutMs: 1000,
    maxRegistersPerRequest: 125,
    maxBitsPerRequest: 2000,
    maxGap: 16,
    maxConcurrentRequests: 1,
    transport: { port: 502 },
  });
});

test.serial(
  'maxConcurrentRequests: that many requests in flight at once, never more',
  async (t) => {
    const received: number[] = [];
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      // Never answers: what is in flight stays in flight.
      socket.on('data', (chunk: Buffer) => {
        for (let at = 0; at + 12 <= chunk.length; at += 12)
          received.push(chunk.readUInt16BE(at + 8));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          server.close(() => resolve());
        }),
    );
    const port = (server.address() as { port: number }).port;
    const { driver, clock } = modbusSubject({
      transport: { kind: 'tcp', host: '127.0.0.1', port },
      maxConcurrentRequests: 3,
      maxGap: 0,
      timeoutsBeforeReconnect: 100,
      // Five blocks: registers 0, 10, 20, 30, 40.
      tags: [0, 10, 20, 30, 40].map((address) => ({
        name: `R${address}`,
        table: 'holdingRegister',
        address,
      })),
    });
    t.teardown(() => driver.stop());
    await driver.start();
    await until(() => received.length === 3, 'three requests arrive');
    await new Promise((resolve) => setTimeout(resolve, 50));
    t.deepEqual(received, [0, 10, 20], 'the fourth waits for a free slot');
    // The poll timer and three request timeouts.
    t.is(clock.pendingTimers(), 4);
    clock.advance(1000);
    await until(() => received.length === 5, 'the other two follow once the first time out');
    t.deepEqual(received, [0, 10, 20, 30, 40]);
  },
);

test.serial('stop during a connection attempt abandons it: no timer, no socket left', async (t) => {
  let signalled: AbortSignal | undefined;
  const { driver, clock, store } = modbusSubject(
    {
      transport: { kind: 'tcp', host: '127.0.0.1', port: 502 },
      tags: [{ name: 'A', table: 'coil', address: 0 }],
    },
    {
      opener: (_handlers, signal) => {
        signalled = signal;
        // An attempt that never completes on its own (a host that drops SYNs).
        return new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(new Error('abandoned'))),
        );
      },
    },
  );
  await driver.start();
  t.is(driver.status().state, 'Starting');
  await driver.stop();
  t.true(signalled?.aborted);
  t.is(clock.pendingTimers(), 0);
  t.is(store.require('Dev/A').quality, 'Unavailable');
  t.is(driver.status().counters?.connectsFailed, 0, 'an abandoned attempt is not a failure');

  // The TCP opener itself: aborted before the connection completes.
  const { tcpStreamOpener } = await import('../../../drivers/modbus/transports/tcp-stream.js');
  const server = await startModbusSerialServer({ hr: [1] });
  t.teardown(() => server.close());
  const manual = new ManualClock();
  const controller = new AbortController();
  const opening = tcpStreamOpener({
    host: '127.0.0.1',
    port: server.port,
    timeoutMs: 1000,
    clock: manual,
  })({ data: () => {}, closed: () => {} }, controller.signal);
  controller.abort();
  await t.throwsAsync(opening, { message: 'The connection attempt was abandoned.' });
  t.is(manual.pendingTimers(), 0);
});
