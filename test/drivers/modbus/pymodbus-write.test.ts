/**
 * Modbus writes through the API against Debian's python3-pymodbus server, over TCP and as RTU on
 * a socat pty pair. The registers a write leaves are read back independently — with a pymodbus
 * client over TCP, from the server's own store on RTU — and compared with what Python's struct
 * module encodes (test/helpers/modbus-write-oracle.py). Also FC 22 and its read-modify-write
 * fallback, exception answers, and a device that never answers (Uncertain, never re-sent).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import type { ByteOrder } from '../../../drivers/modbus/codec.js';
import { ModbusDriver } from '../../../drivers/modbus/modbus-driver.js';
import { modbusDriverSchema } from '../../../drivers/modbus/schema.js';
import {
  ModbusPeer,
  type PeerData,
  PtyPair,
  pymodbusMissing,
  socatMissing,
  systemPython,
} from '../../helpers/modbus-peer.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { until } from '../../helpers/until.js';
import { startWriteHarness } from '../../helpers/write-harness.js';

const missing = pymodbusMissing();
if (missing !== undefined) console.warn(`pymodbus write tests skipped: ${missing}`);
const rtuMissing = missing ?? socatMissing();
const peerTest = missing === undefined ? test.serial : test.serial.skip;
const rtuTest = rtuMissing === undefined ? test.serial : test.serial.skip;

const oracleScript = fileURLToPath(
  new URL('../../helpers/modbus-write-oracle.py', import.meta.url),
);

/** One written value: its tag, and what it is (the oracle reads the same fields). */
interface WriteCase {
  name: string;
  type: string;
  order: ByteOrder;
  /** 64-bit integers as decimal strings, so they reach Python (and the API) exactly. */
  value: number | string;
  length?: number;
  scale?: number;
  offset?: number;
  address: number;
}

const orders: ByteOrder[] = ['ABCD', 'CDAB', 'BADC', 'DCBA'];
const values: [string, number | string][] = [
  ['int16', -12_345],
  ['uint16', 54_321],
  ['int32', -123_456_789],
  ['uint32', 3_456_789_012],
  // Beyond 2^53 both: only a decimal string carries them exactly.
  ['int64', '-1234567890123456789'],
  ['uint64', '12345678901234567'],
  ['float32', -2.5],
  ['float64', Math.PI],
  ['string', 'Pump-7'],
];
const registersOf: Record<string, number> = {
  int16: 1,
  uint16: 1,
  int32: 2,
  uint32: 2,
  int64: 4,
  uint64: 4,
  float32: 2,
  float64: 4,
  string: 4,
};

/** Every type in every order, then scaled values; one register apart, from address 10. */
function writeCases(): WriteCase[] {
  const cases: WriteCase[] = [];
  let address = 10;
  const add = (c: Omit<WriteCase, 'address'>) => {
    cases.push({ ...c, address });
    address += (registersOf[c.type] as number) + 1;
  };
  for (const order of orders)
    for (const [type, value] of values)
      add({
        name: `${type}_${order}`,
        type,
        order,
        value,
        ...(type === 'string' ? { length: 4 } : {}),
      });
  add({ name: 'scaled_int16', type: 'int16', order: 'ABCD', value: 30.3, scale: 0.1, offset: 5 });
  add({ name: 'scaled_uint32', type: 'uint32', order: 'CDAB', value: 1234.56, scale: 0.01 });
  add({ name: 'scaled_float32', type: 'float32', order: 'DCBA', value: 7, scale: 2, offset: 1 });
  return cases;
}

function caseTags(cases: readonly WriteCase[]) {
  return cases.map((c) => ({
    name: `W/${c.name}`,
    table: 'holdingRegister',
    address: c.address,
    type: c.type,
    order: c.order,
    writable: true,
    ...(c.length !== undefined ? { length: c.length } : {}),
    ...(c.scale !== undefined ? { scale: c.scale } : {}),
    ...(c.offset !== undefined ? { offset: c.offset } : {}),
  }));
}

/** What Python says each case must leave in the registers, and (over TCP) what is there. */
function oracle(
  cases: readonly WriteCase[],
  port?: number,
): { expected: number[]; actual: number[] | null }[] {
  const request = {
    ...(port !== undefined ? { host: '127.0.0.1', port, unit: 1 } : {}),
    specs: cases.map((c) => ({ ...c, scale: c.scale ?? 1, offset: c.offset ?? 0 })),
  };
  const result = spawnSync(systemPython, [oracleScript, JSON.stringify(request)], {
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`modbus-write-oracle.py failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** The value a case reads back as, through the driver's read path. */
function readBack(c: WriteCase): number | string {
  if (c.type === 'uint64') return 12_345_678_901_234_568;
  if (c.type === 'int64') return -1_234_567_890_123_456_800;
  if (c.name === 'scaled_int16') return 253 * 0.1 + 5;
  if (c.name === 'scaled_uint32') return 123_456 * 0.01;
  if (c.type === 'float32' && c.scale === undefined) return -2.5;
  return c.value;
}

async function modbusWrites(t: ExecutionContext, transport: Record<string, unknown>, extra = {}) {
  return startWriteHarness(t, (deps) => {
    const config = modbusDriverSchema.parse({
      type: 'modbus',
      name: 'Dev',
      allowWrites: true,
      transport,
      ...extra,
    });
    return new ModbusDriver(config, deps);
  });
}

peerTest(
  'TCP: every type in every byte order, scaled values, written as Python encodes them',
  async (t) => {
    const cases = writeCases();
    const last = cases[cases.length - 1] as WriteCase;
    const peer = await ModbusPeer.start(
      { kind: 'tcp' },
      { hr: new Array(last.address + 4).fill(0) },
    );
    t.teardown(() => peer.kill());
    const h = await modbusWrites(
      t,
      { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      { tags: caseTags(cases) },
    );
    const store = h.api.store;
    await until(() => store.get('Dev/W/int16_ABCD')?.quality === 'Good', 'the first poll');
    const results = await h.results(
      cases.map((c) => ({ fullTagId: `Dev/W/${c.name}`, value: c.value })),
    );
    t.deepEqual(
      results.map((r) => r.status),
      cases.map(() => 'Good'),
      JSON.stringify(results.filter((r) => r.status !== 'Good')),
    );
    const answers = oracle(cases, peer.port);
    cases.forEach((c, index) => {
      const answer = answers[index] as { expected: number[]; actual: number[] };
      t.deepEqual(answer.actual, answer.expected, c.name);
    });
    // A read followed each write at once: the store holds the values without another poll.
    await until(
      () => cases.every((c) => store.get(`Dev/W/${c.name}`)?.value === readBack(c)),
      'every value read back',
    );
    t.is(store.require('Dev/W/uint64_ABCD').metadata?.valueText, '12345678901234567');
    t.is(store.require('Dev/W/int64_DCBA').metadata?.valueText, '-1234567890123456789');
    t.is(h.driver.status().counters?.writeRequests, cases.length);
    t.is(h.driver.status().counters?.polls, 1, 'no poll ran besides the first');
  },
);

/** POSTs a write request exactly as `body` spells it (JSON.stringify cannot spell 2^53 + 1). */
function rawWrite(h: Awaited<ReturnType<typeof modbusWrites>>, body: string) {
  return h.api.request('/api/v2/Tags/Write', {
    method: 'POST',
    token: h.token,
    raw: body,
    headers: { 'Content-Type': 'application/json' },
  });
}

peerTest(
  'TCP: 64-bit integers: a JSON number JSON.parse would round is refused, its decimal string written exactly in every order',
  async (t) => {
    // Per order: two int64 and two uint64 tags, 4 registers each and one apart.
    const exact: WriteCase[] = [];
    let address = 10;
    for (const order of orders)
      for (const [type, name, value] of [
        ['int64', 'odd', '9007199254740993'],
        ['int64', 'least', '-9223372036854775808'],
        ['uint64', 'odd', '9007199254740993'],
        ['uint64', 'most', '18446744073709551615'],
      ] as const) {
        exact.push({ name: `${type}_${name}_${order}`, type, order, value, address });
        address += 5;
      }
    const small: WriteCase = { name: 'small', type: 'int16', order: 'ABCD', value: 0, address };
    const peer = await ModbusPeer.start({ kind: 'tcp' }, { hr: new Array(address + 2).fill(0) });
    t.teardown(() => peer.kill());
    const h = await modbusWrites(
      t,
      { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      { tags: caseTags([...exact, small]) },
    );
    await until(() => h.api.store.get('Dev/W/small')?.quality === 'Good', 'the first poll');
    // JSON numbers whose text no double holds: JSON.parse makes 2^53 + 1 into 2^53, and the
    // fractions into whole numbers. Each alone in its request, so each refusal is its own.
    const refused: [string, string, RegExp][] = [
      ['int64_odd_ABCD', '9007199254740993', /decimal string/],
      ['uint64_odd_CDAB', '9007199254740993', /decimal string/],
      ['int64_least_BADC', '-9007199254740993', /decimal string/],
      ['int64_odd_DCBA', '9007199254740992', /decimal string/],
      ['uint64_most_ABCD', '1.8446744073709551615e19', /decimal string/],
      ['int64_odd_CDAB', '4503599627370495.5', /whole number/],
      ['small', '1.0000000000000001', /whole number/],
    ];
    for (const [tag, literal, message] of refused) {
      const response = await rawWrite(
        h,
        `{"writes":[{"fullTagId":"Dev/W/${tag}","value":${literal}}]}`,
      );
      t.is(response.status, 400, `${tag} ${literal}: ${JSON.stringify(response.body)}`);
      const errors = (response.json.errors ?? []) as { path: string; message: string }[];
      t.is(errors[0]?.path, 'writes[0].value', literal);
      t.regex(errors[0]?.message ?? '', message, literal);
    }
    t.is(h.driver.status().counters?.writeRequests, 0, 'nothing was sent');
    t.deepEqual(await peer.get('hr', 0, address + 2), new Array(address + 2).fill(0));
    const audit = h.api.logs.lines.filter((line) => line.event === 'tag-write');
    t.is(audit.length, refused.length);
    t.true(audit.every((line) => line.status === 'Refused' && line.reason === 'ValidationFailed'));

    // The same values as decimal strings, exact in every byte order, as Python encodes them.
    const results = await h.results(
      exact.map((c) => ({ fullTagId: `Dev/W/${c.name}`, value: c.value })),
    );
    t.deepEqual(
      results.map((r) => r.status),
      exact.map(() => 'Good'),
      JSON.stringify(results.filter((r) => r.status !== 'Good')),
    );
    const answers = oracle(exact, peer.port);
    exact.forEach((c, index) => {
      const answer = answers[index] as { expected: number[]; actual: number[] };
      t.deepEqual(answer.actual, answer.expected, c.name);
    });
    await until(
      () => exact.every((c) => h.api.store.get(`Dev/W/${c.name}`)?.metadata?.valueText === c.value),
      'every value read back exactly',
    );
  },
);

peerTest('TCP: coils by FC 5, bits by FC 22 Mask Write, in both byte orders', async (t) => {
  const peer = await ModbusPeer.start({ kind: 'tcp' }, { co: [0, 0, 1], hr: [0x00f0, 0x00f0] });
  t.teardown(() => peer.kill());
  const h = await modbusWrites(
    t,
    { kind: 'tcp', host: '127.0.0.1', port: peer.port },
    {
      tags: [
        { name: 'Coil0', table: 'coil', address: 0, writable: true },
        { name: 'Coil2', table: 'coil', address: 2, writable: true },
        { name: 'Bit0', table: 'holdingRegister', address: 0, type: 'bit', bit: 0, writable: true },
        { name: 'Bit4', table: 'holdingRegister', address: 0, type: 'bit', bit: 4, writable: true },
        {
          name: 'Swapped0',
          table: 'holdingRegister',
          address: 1,
          type: 'bit',
          bit: 0,
          order: 'BADC',
          writable: true,
        },
      ],
    },
  );
  await until(() => h.api.store.get('Dev/Bit0')?.quality === 'Good', 'the first poll');
  const results = await h.results([
    { fullTagId: 'Dev/Coil0', value: true },
    { fullTagId: 'Dev/Coil2', value: false },
    { fullTagId: 'Dev/Bit0', value: true },
    { fullTagId: 'Dev/Bit4', value: false },
    { fullTagId: 'Dev/Swapped0', value: true },
  ]);
  t.true(
    results.every((r) => r.status === 'Good'),
    JSON.stringify(results),
  );
  t.deepEqual(await peer.get('co', 0, 3), [1, 0, 0]);
  // 0x00F0 | bit 0 = 0x00F1, then bit 4 cleared = 0x00E1; BADC bit 0 is bit 8 on the wire.
  t.deepEqual(await peer.get('hr', 0, 2), [0x00e1, 0x01f0]);
  await until(() => h.api.store.get('Dev/Swapped0')?.value === true, 'the bit read back');
  t.is(h.api.store.require('Dev/Bit4').value, false);
  t.is(h.driver.status().counters?.writeRequests, 5);
});

peerTest(
  'TCP: writeFunctions "multiple" writes single coils and registers by FC 15 and FC 16',
  async (t) => {
    const peer = await ModbusPeer.start({ kind: 'tcp' }, { co: [0, 0], hr: [0, 0] });
    t.teardown(() => peer.kill());
    const h = await modbusWrites(
      t,
      { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      {
        writeFunctions: 'multiple',
        tags: [
          { name: 'Coil1', table: 'coil', address: 1, writable: true },
          { name: 'Reg1', table: 'holdingRegister', address: 1, type: 'int16', writable: true },
        ],
      },
    );
    await until(() => h.api.store.get('Dev/Reg1')?.quality === 'Good', 'the first poll');
    const results = await h.results([
      { fullTagId: 'Dev/Coil1', value: true },
      { fullTagId: 'Dev/Reg1', value: -2 },
    ]);
    t.true(
      results.every((r) => r.status === 'Good'),
      JSON.stringify(results),
    );
    t.deepEqual(await peer.get('co', 0, 2), [0, 1]);
    t.deepEqual(await peer.get('hr', 0, 2), [0, 0xfffe]);
  },
);

peerTest(
  'TCP: FC 22 refused with illegal function falls back to read-modify-write, once learnt',
  async (t) => {
    const peer = await ModbusPeer.start({ kind: 'tcp' }, { hr: [0x1000] }, 1, {
      noMaskWrite: true,
    });
    t.teardown(() => peer.kill());
    const h = await modbusWrites(
      t,
      { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      {
        tags: [
          { name: 'B1', table: 'holdingRegister', address: 0, type: 'bit', bit: 1, writable: true },
          {
            name: 'B12',
            table: 'holdingRegister',
            address: 0,
            type: 'bit',
            bit: 12,
            writable: true,
          },
        ],
      },
    );
    await until(() => h.api.store.get('Dev/B1')?.quality === 'Good', 'the first poll');
    t.deepEqual(await h.results([{ fullTagId: 'Dev/B1', value: true }]), [
      { fullTagId: 'Dev/B1', status: 'Good' },
    ]);
    t.deepEqual(await peer.get('hr', 0, 1), [0x1002]);
    // FC 22 (refused) and FC 6: two write requests; the refusal is logged once.
    t.is(h.driver.status().counters?.writeRequests, 2);
    t.deepEqual(await h.results([{ fullTagId: 'Dev/B12', value: false }]), [
      { fullTagId: 'Dev/B12', status: 'Good' },
    ]);
    t.deepEqual(await peer.get('hr', 0, 1), [0x0002]);
    t.is(h.driver.status().counters?.writeRequests, 3, 'no second FC 22 attempt');
    t.is(h.api.logs.lines.filter((line) => /refused FC 22/.test(String(line.msg))).length, 1);
  },
);

peerTest(
  'TCP: an exception answer is Bad (DeviceException) with its name; the rest go on',
  async (t) => {
    const data: PeerData = { hr: [1, 2] };
    const peer = await ModbusPeer.start({ kind: 'tcp' }, data);
    t.teardown(() => peer.kill());
    const h = await modbusWrites(
      t,
      { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      {
        tags: [
          { name: 'A', table: 'holdingRegister', address: 0, writable: true },
          { name: 'Far', table: 'holdingRegister', address: 40, type: 'int32', writable: true },
          { name: 'B', table: 'holdingRegister', address: 1, writable: true },
        ],
      },
    );
    await until(() => h.api.store.get('Dev/A')?.quality === 'Good', 'the first poll');
    const results = await h.results([
      { fullTagId: 'Dev/A', value: 11 },
      { fullTagId: 'Dev/Far', value: 5 },
      { fullTagId: 'Dev/B', value: 22 },
    ]);
    t.like(results[0], { status: 'Good' });
    t.like(results[1], { status: 'Bad', reason: 'DeviceException' });
    t.regex(results[1]?.message ?? '', /Modbus exception 2 \(illegal data address\)/);
    t.like(results[2], { status: 'Good' });
    t.deepEqual(await peer.get('hr', 0, 2), [11, 22]);
    const audit = h.api.logs.lines.filter((line) => line.event === 'tag-write');
    t.like(audit[1], { fullTagId: 'Dev/Far', status: 'Bad', reason: 'DeviceException' });
  },
);

peerTest(
  'TCP: a device that never answers: Uncertain (OutcomeUnknown), and never sent again',
  async (t) => {
    const peer = await ModbusPeer.start({ kind: 'tcp' }, { hr: [1] });
    t.teardown(() => peer.kill());
    const h = await modbusWrites(
      t,
      { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      {
        timeoutMs: 500,
        timeoutsBeforeReconnect: 1,
        reconnectDelayMs: 100,
        tags: [{ name: 'A', table: 'holdingRegister', address: 0, writable: true }],
      },
    );
    const store = h.api.store;
    await until(() => store.get('Dev/A')?.quality === 'Good', 'the first poll');
    peer.pause();
    t.teardown(() => peer.resume());
    const pending = h.results([{ fullTagId: 'Dev/A', value: 77 }]);
    await until(() => h.driver.status().counters?.writeRequests === 1, 'the write is sent');
    h.api.clock.advance(500);
    const results = await pending;
    t.like(results[0], { fullTagId: 'Dev/A', status: 'Uncertain', reason: 'OutcomeUnknown' });
    t.is(h.driver.status().counters?.writesUncertain, 1);
    // The device comes back: it applied the write late (the request was on its socket), its
    // late answer is dropped as unmatched, the next poll reads the value, and the write is
    // never sent again.
    peer.resume();
    await until(() => h.driver.status().counters?.unmatchedAnswers === 1, 'the late answer');
    // To the next poll (1000 ms after the first), short of that poll's own timeout.
    h.api.clock.advance(500);
    await until(
      () => store.get('Dev/A')?.value === 77 && store.get('Dev/A')?.quality === 'Good',
      'read again',
    );
    t.is(h.driver.status().counters?.writeRequests, 1);
    const line = h.api.logs.lines.find((l) => l.event === 'tag-write');
    t.like(line, {
      status: 'Uncertain',
      reason: 'OutcomeUnknown',
      previousValue: 1,
      requestedValue: 77,
    });
  },
);

peerTest(
  'TCP: a connection that drops with a write in flight: Uncertain, never re-sent on reconnect',
  async (t) => {
    let peer = await ModbusPeer.start({ kind: 'tcp' }, { hr: [1] });
    const port = peer.port;
    t.teardown(() => peer.kill());
    const h = await modbusWrites(
      t,
      { kind: 'tcp', host: '127.0.0.1', port },
      {
        reconnectDelayMs: 100,
        tags: [{ name: 'A', table: 'holdingRegister', address: 0, writable: true }],
      },
    );
    const store = h.api.store;
    await until(() => store.get('Dev/A')?.quality === 'Good', 'the first poll');
    peer.pause();
    const pending = h.results([{ fullTagId: 'Dev/A', value: 55 }]);
    await until(() => h.driver.status().counters?.writeRequests === 1, 'the write is sent');
    // The device dies with the request unanswered: the connection closes under it.
    await peer.kill();
    const results = await pending;
    t.like(results[0], { status: 'Uncertain', reason: 'OutcomeUnknown' });
    peer = await ModbusPeer.start({ kind: 'tcp', port }, { hr: [1] });
    h.api.clock.advance(100);
    await until(
      () => store.get('Dev/A')?.quality === 'Good' && h.driver.status().state === 'Running',
      'connected and read again',
    );
    t.is(store.require('Dev/A').value, 1, 'the new connection did not send the write');
    t.deepEqual(await peer.get('hr', 0, 1), [1]);
    t.is(h.driver.status().counters?.writeRequests, 1);
  },
);

peerTest('TCP: no connection: Bad (Disconnected), nothing sent', async (t) => {
  // A port nobody listens on: the driver never connects.
  const peer = await ModbusPeer.start({ kind: 'tcp' }, { hr: [1] });
  const port = peer.port;
  await peer.kill();
  const h = await modbusWrites(
    t,
    { kind: 'tcp', host: '127.0.0.1', port },
    { tags: [{ name: 'A', table: 'holdingRegister', address: 0, writable: true }] },
  );
  await until(() => (h.driver.status().counters?.connectsFailed ?? 0) >= 1, 'the connection fails');
  const results = await h.results([{ fullTagId: 'Dev/A', value: 5 }]);
  t.like(results[0], { status: 'Bad', reason: 'Disconnected' });
  t.is(h.driver.status().counters?.writeRequests, 0);
});

rtuTest(
  'RTU: every type in every byte order and a bit, written as Python encodes them',
  async (t) => {
    const dir = await tempDir(t);
    const pair = await PtyPair.open(dir);
    t.teardown(() => pair.close());
    const cases = writeCases();
    const last = cases[cases.length - 1] as WriteCase;
    const hr = new Array(last.address + 4).fill(0);
    hr[0] = 0x0100;
    const peer = await ModbusPeer.start(
      { kind: 'rtu', device: pair.device, baudRate: 19_200, parity: 'E' },
      { hr, co: [0] },
      7,
    );
    t.teardown(() => peer.kill());
    const h = await modbusWrites(
      t,
      { kind: 'rtu', path: pair.host, baudRate: 19_200, parity: 'even' },
      {
        unitId: 7,
        timeoutMs: 3000,
        tags: [
          ...caseTags(cases),
          {
            name: 'Bit3',
            table: 'holdingRegister',
            address: 0,
            type: 'bit',
            bit: 3,
            writable: true,
          },
          { name: 'Coil', table: 'coil', address: 0, writable: true },
        ],
      },
    );
    await until(() => h.api.store.get('Dev/Bit3')?.quality === 'Good', 'the first poll', 20_000);
    const results = await h.results([
      ...cases.map((c) => ({ fullTagId: `Dev/W/${c.name}`, value: c.value })),
      { fullTagId: 'Dev/Bit3', value: true },
      { fullTagId: 'Dev/Coil', value: true },
    ]);
    t.true(
      results.every((r) => r.status === 'Good'),
      JSON.stringify(results),
    );
    const answers = oracle(cases);
    for (const [index, c] of cases.entries()) {
      const expected = (answers[index] as { expected: number[] }).expected;
      t.deepEqual(await peer.get('hr', c.address, expected.length), expected, c.name);
    }
    t.deepEqual(await peer.get('hr', 0, 1), [0x0108]);
    t.deepEqual(await peer.get('co', 0, 1), [1]);
  },
);
