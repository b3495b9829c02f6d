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
import { until } from '../../helpers/modbus-harness.js';
import { OpcuaTestServer, type TestVariable, testNodeId } from '../../helpers/opcua-server.js';
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
