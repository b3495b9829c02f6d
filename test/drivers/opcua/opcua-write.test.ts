/**
 * OPC UA writes through the API against a real node-opcua server on loopback: every numeric
 * type, Boolean, String and DateTime written with the node's own DataType, the server's status
 * mapped to the result (BadNotWritable → Bad), and a value that does not fit the node's type
 * refused with 400 before anything is written.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { DataType } from 'node-opcua';
import { OpcuaDriver } from '../../../drivers/opcua/opcua-driver.js';
import { opcuaDriverSchema } from '../../../drivers/opcua/schema.js';
import { OpcuaTestServer, type TestVariable, testNodeId } from '../../helpers/opcua-server.js';
import { until } from '../../helpers/until.js';
import { startWriteHarness } from '../../helpers/write-harness.js';

const root = await mkdtemp(join(tmpdir(), 'tagd-opcua-write-'));
let server: OpcuaTestServer;

/** One variable per type, each with the value a client writes and what the server then holds. */
const cases: {
  name: string;
  dataType: DataType;
  initial: unknown;
  write: unknown;
  held: unknown;
}[] = [
  { name: 'SByte', dataType: DataType.SByte, initial: 0, write: -128, held: -128 },
  { name: 'Byte', dataType: DataType.Byte, initial: 0, write: 255, held: 255 },
  { name: 'Int16', dataType: DataType.Int16, initial: 0, write: -32_768, held: -32_768 },
  { name: 'UInt16', dataType: DataType.UInt16, initial: 0, write: 65_535, held: 65_535 },
  {
    name: 'Int32',
    dataType: DataType.Int32,
    initial: 0,
    write: -2_000_000_000,
    held: -2_000_000_000,
  },
  {
    name: 'UInt32',
    dataType: DataType.UInt32,
    initial: 0,
    write: 4_000_000_000,
    held: 4_000_000_000,
  },
  // Beyond 2^53, as decimal strings; node-opcua holds 64-bit values as [high, low] words.
  {
    name: 'Int64',
    dataType: DataType.Int64,
    initial: [0, 0],
    write: '-9007199254740993',
    held: [0xffdfffff, 0xffffffff],
  },
  {
    name: 'UInt64',
    dataType: DataType.UInt64,
    initial: [0, 0],
    write: '18446744073709551615',
    held: [0xffffffff, 0xffffffff],
  },
  { name: 'Float', dataType: DataType.Float, initial: 0, write: 2.5, held: 2.5 },
  { name: 'Double', dataType: DataType.Double, initial: 0, write: Math.PI, held: Math.PI },
  { name: 'Boolean', dataType: DataType.Boolean, initial: false, write: true, held: true },
  { name: 'String', dataType: DataType.String, initial: '', write: 'Recipe 7', held: 'Recipe 7' },
  {
    name: 'DateTime',
    dataType: DataType.DateTime,
    initial: new Date(0),
    write: '2026-03-04T05:06:07.089Z',
    held: new Date('2026-03-04T05:06:07.089Z'),
  },
];

const variables: Record<string, TestVariable> = {
  ReadOnly: { dataType: DataType.Double, value: 1, readOnly: true },
};
for (const c of cases) variables[`W_${c.name}`] = { dataType: c.dataType, value: c.initial };

test.before(async () => {
  server = await OpcuaTestServer.start({ pkiDir: join(root, 'server-pki'), variables });
});
test.after.always(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

async function harness(t: ExecutionContext) {
  const h = await startWriteHarness(t, (deps) => {
    const config = opcuaDriverSchema.parse({
      type: 'opcua',
      name: 'Plc',
      endpointUrl: server.endpointUrl,
      allowWrites: true,
      publishingIntervalMs: 50,
      samplingIntervalMs: 20,
      tags: [
        ...cases.map((c) => ({ name: c.name, nodeId: testNodeId(`W_${c.name}`), writable: true })),
        { name: 'ReadOnly', nodeId: testNodeId('ReadOnly'), writable: true },
        { name: 'Missing', nodeId: testNodeId('NoSuchNode'), writable: true },
      ],
    });
    return new OpcuaDriver(config, { ...deps, stateDir: join(root, 'state') });
  });
  await until(() => h.driver.status().state === 'Running', 'the session is up', 30_000);
  return h;
}

test.serial('every type is written with the node’s DataType and read back at once', async (t) => {
  const h = await harness(t);
  const results = await h.results(
    cases.map((c) => ({ fullTagId: `Plc/${c.name}`, value: c.write })),
  );
  t.deepEqual(
    results.map((r) => `${r.fullTagId} ${r.status}`),
    cases.map((c) => `Plc/${c.name} Good`),
  );
  for (const c of cases) t.deepEqual(server.get(`W_${c.name}`), c.held, c.name);
  await until(() => h.api.store.get('Plc/String')?.value === 'Recipe 7', 'the read back');
  t.is(h.api.store.require('Plc/DateTime').value, '2026-03-04T05:06:07.089Z');
  t.is(h.api.store.require('Plc/UInt64').metadata?.valueText, '18446744073709551615');
  t.is(h.driver.status().counters?.writes, cases.length);
});

test.serial('a read-only node answers BadNotWritable: Bad with the status name', async (t) => {
  const h = await harness(t);
  const results = await h.results([
    { fullTagId: 'Plc/ReadOnly', value: 5 },
    { fullTagId: 'Plc/Double', value: 1.25 },
  ]);
  t.like(results[0], { status: 'Bad', reason: 'BadNotWritable' });
  t.like(results[1], { status: 'Good' });
  t.is(server.get('ReadOnly'), 1);
  const audit = h.api.logs.lines.filter((line) => line.event === 'tag-write');
  t.like(audit[0], { status: 'Bad', reason: 'BadNotWritable', requestedValue: 5 });
});

test.serial(
  'a value of the wrong type for the node is refused with 400; nothing is written',
  async (t) => {
    const h = await harness(t);
    const before = server.get('W_Int32');
    const response = await h.write([
      { fullTagId: 'Plc/Int32', value: 7 },
      { fullTagId: 'Plc/Int16', value: 1.5 },
      { fullTagId: 'Plc/Boolean', value: 1 },
      { fullTagId: 'Plc/Byte', value: 256 },
      { fullTagId: 'Plc/DateTime', value: 'yesterday' },
    ]);
    t.is(response.status, 400);
    t.deepEqual(
      (response.json.errors as { path: string }[]).map((error) => error.path),
      ['writes[1].value', 'writes[2].value', 'writes[3].value', 'writes[4].value'],
    );
    t.regex(JSON.stringify(response.json.errors), /whole number \(the node is Int16\)/);
    t.regex(JSON.stringify(response.json.errors), /outside the range of Byte/);
    t.deepEqual(server.get('W_Int32'), before, 'the valid item was not written either');
    t.is(h.driver.status().counters?.writes, 0);
  },
);

/** POSTs one write exactly as `value` spells it (JSON.stringify cannot spell 2^53 + 1). */
function rawWrite(h: Awaited<ReturnType<typeof harness>>, fullTagId: string, value: string) {
  return h.api.request('/api/v2/Tags/Write', {
    method: 'POST',
    token: h.token,
    raw: `{"writes":[{"fullTagId":"${fullTagId}","value":${value}}]}`,
    headers: { 'Content-Type': 'application/json' },
  });
}

test.serial(
  'Int64/UInt64: a JSON number JSON.parse would round is refused; decimal strings land exactly',
  async (t) => {
    const h = await harness(t);
    server.set('W_Int64', [0, 7]);
    server.set('W_UInt64', [0, 7]);
    server.set('W_Int32', 7);
    const refused: [string, string, RegExp][] = [
      ['Plc/Int64', '9007199254740993', /decimal string/],
      ['Plc/UInt64', '9007199254740993', /decimal string/],
      ['Plc/Int64', '-9007199254740993', /decimal string/],
      ['Plc/UInt64', '9007199254740992', /decimal string/],
      ['Plc/Int64', '4503599627370495.5', /whole number/],
      ['Plc/Int32', '1.0000000000000001', /whole number/],
      ['Plc/Int32', '2147483647.0000000001', /whole number/],
    ];
    for (const [tag, literal, message] of refused) {
      const response = await rawWrite(h, tag, literal);
      t.is(response.status, 400, `${tag} ${literal}: ${JSON.stringify(response.body)}`);
      const errors = (response.json.errors ?? []) as { path: string; message: string }[];
      t.is(errors[0]?.path, 'writes[0].value', literal);
      t.regex(errors[0]?.message ?? '', message, literal);
    }
    t.is(h.driver.status().counters?.writes, 0, 'nothing was sent');
    t.deepEqual(server.get('W_Int64'), [0, 7]);
    t.deepEqual(server.get('W_UInt64'), [0, 7]);
    t.is(server.get('W_Int32'), 7);
    const audit = h.api.logs.lines.filter((line) => line.event === 'tag-write');
    t.true(audit.every((line) => line.status === 'Refused' && line.reason === 'ValidationFailed'));
    t.is(audit.length, refused.length);

    // The node holds [high, low] 32-bit words: 2^53 + 1 is 0x00200000 00000001.
    const exact: [string, string, string, [number, number]][] = [
      ['Plc/Int64', 'W_Int64', '9007199254740993', [0x0020_0000, 1]],
      ['Plc/UInt64', 'W_UInt64', '9007199254740993', [0x0020_0000, 1]],
      ['Plc/Int64', 'W_Int64', '-9223372036854775808', [0x8000_0000, 0]],
      ['Plc/UInt64', 'W_UInt64', '18446744073709551614', [0xffff_ffff, 0xffff_fffe]],
    ];
    for (const [tag, variable, value, words] of exact) {
      t.deepEqual(await h.results([{ fullTagId: tag, value }]), [
        { fullTagId: tag, status: 'Good' },
      ]);
      t.deepEqual(server.get(variable), words, `${tag} ${value}`);
      await until(() => h.api.store.get(tag)?.metadata?.valueText === value, `${tag} read back`);
    }
  },
);

test.serial(
  'DateTime: only a real ISO 8601 date and time within OPC UA’s range, to 100 ns, is written',
  async (t) => {
    const h = await harness(t);
    const initial = new Date('2020-05-06T07:08:09.010Z');
    server.set('W_DateTime', initial);
    const refused = [
      '2024-02-30T00:00:00Z', // no 30 February (Date.parse makes it 1 March)
      '2023-02-29T12:00:00Z',
      '2024-04-31T00:00:00Z',
      '2024-01-01T24:00:00Z',
      '2024-01-01T23:60:00Z',
      '2016-12-31T23:59:60Z', // a leap second: Date cannot hold it
      '1500-01-01T00:00:00Z', // before 1601 (node-opcua would send year 59955)
      '1600-12-31T23:59:59.999Z',
      '1601-01-01T00:30:00+01:00', // 1600-12-31T23:30Z
      '9999-12-31T23:00:00-05:00', // year 10000 in UTC
      '+010000-01-01T00:00:00Z',
      '2024-01-01T00:00:00.12345678Z', // finer than 100 ns
      '2024-01-01T00:00:00+24:00',
      '2024-01-01',
    ];
    for (const value of refused) {
      const response = await h.write([{ fullTagId: 'Plc/DateTime', value }]);
      t.is(response.status, 400, `${value}: ${JSON.stringify(response.body)}`);
      t.regex(JSON.stringify(response.json.errors), /writes\[0\]\.value/, value);
    }
    t.is(h.driver.status().counters?.writes, 0, 'nothing was sent');
    t.deepEqual(server.get('W_DateTime'), initial);

    const held = (): [string, number] => {
      const date = server.get('W_DateTime') as Date & { picoseconds?: number };
      return [date.toISOString(), date.picoseconds ?? 0];
    };
    const accepted: [string, string, number][] = [
      ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000Z', 0],
      ['1601-01-01T00:00:00Z', '1601-01-01T00:00:00.000Z', 0],
      ['9999-12-31T23:59:59.9999999Z', '9999-12-31T23:59:59.999Z', 999_900_000],
      ['2026-03-04T06:06:07.0891234+01:00', '2026-03-04T05:06:07.089Z', 123_400_000],
      ['2026-03-04T05:06:07,5Z', '2026-03-04T05:06:07.500Z', 0],
      ['2026-03-04T05:06Z', '2026-03-04T05:06:00.000Z', 0],
    ];
    for (const [value, iso, picoseconds] of accepted) {
      t.deepEqual(await h.results([{ fullTagId: 'Plc/DateTime', value }]), [
        { fullTagId: 'Plc/DateTime', status: 'Good' },
      ]);
      t.deepEqual(held(), [iso, picoseconds], value);
    }
  },
);

test.serial('a node the server does not know: Bad with its status, nothing sent', async (t) => {
  const h = await harness(t);
  const results = await h.results([{ fullTagId: 'Plc/Missing', value: 1 }]);
  t.like(results[0], { status: 'Bad', reason: 'BadNodeIdUnknown' });
  t.is(h.driver.status().counters?.writes, 0);
});

test.serial('a lost server: Bad (Disconnected), nothing held back to be sent later', async (t) => {
  const own = await OpcuaTestServer.start({ pkiDir: join(root, 'server-pki'), variables });
  t.teardown(() => own.stop().catch(() => {}));
  const h = await startWriteHarness(t, (deps) => {
    const config = opcuaDriverSchema.parse({
      type: 'opcua',
      name: 'Plc',
      endpointUrl: own.endpointUrl,
      allowWrites: true,
      publishingIntervalMs: 50,
      samplingIntervalMs: 20,
      reconnectDelayMs: 100,
      tags: [{ name: 'Double', nodeId: testNodeId('W_Double'), writable: true }],
    });
    return new OpcuaDriver(config, { ...deps, stateDir: join(root, 'state') });
  });
  await until(() => h.driver.status().state === 'Running', 'the session is up', 30_000);
  await own.stop();
  await until(() => h.driver.status().state !== 'Running', 'the driver notices', 30_000);
  const results = await h.results([{ fullTagId: 'Plc/Double', value: 9.5 }]);
  t.like(results[0], { status: 'Bad', reason: 'Disconnected' });
  t.is(h.driver.status().counters?.writes, 0);
});
