// Before node-opcua loads: its load-time warnings stay out of the test output.
import '../../../drivers/opcua/node-opcua-quiet.js';
import test from 'ava';
import { DataType, NodeId, Variant } from 'node-opcua';
import { writableDataType, writeVariant } from '../../../drivers/opcua/write-value.js';

test('built-in types and their standard subtypes are writable; structures are not', (t) => {
  t.is(writableDataType(new NodeId(NodeId.NodeIdType.NUMERIC, DataType.Int16, 0)), DataType.Int16);
  t.is(writableDataType(new NodeId(NodeId.NodeIdType.NUMERIC, 290, 0)), DataType.Double); // Duration
  t.is(writableDataType(new NodeId(NodeId.NodeIdType.NUMERIC, 294, 0)), DataType.DateTime); // UtcTime
  t.is(writableDataType(new NodeId(NodeId.NodeIdType.NUMERIC, DataType.ByteString, 0)), undefined);
  t.is(writableDataType(new NodeId(NodeId.NodeIdType.NUMERIC, 3002, 2)), undefined);
});

test('64-bit integers go as [high, low] words, from decimal strings beyond 2^53', (t) => {
  const variant = writeVariant(DataType.Int64, '-2') as Variant;
  t.true(variant instanceof Variant);
  t.deepEqual(variant.value, [0xffffffff, 0xfffffffe]);
  t.deepEqual((writeVariant(DataType.UInt64, 2 ** 32 + 5) as Variant).value, [1, 5]);
  t.regex(writeVariant(DataType.Int64, 2 ** 60) as string, /decimal string/);
  t.regex(writeVariant(DataType.UInt64, '-1') as string, /outside the range of UInt64/);
});

test('each type takes its JSON type and range only', (t) => {
  t.regex(writeVariant(DataType.Byte, -1) as string, /outside the range of Byte/);
  t.regex(writeVariant(DataType.Int32, 1.5) as string, /whole number/);
  t.regex(writeVariant(DataType.Int32, '7') as string, /whole number/);
  t.regex(writeVariant(DataType.Boolean, 0) as string, /true or false/);
  t.regex(writeVariant(DataType.String, 5) as string, /must be a string/);
  t.regex(writeVariant(DataType.Float, 1e39) as string, /range of Float/);
  t.regex(writeVariant(DataType.DateTime, '2026-13-45') as string, /ISO 8601/);
  t.regex(writeVariant(DataType.DateTime, '1700000000') as string, /ISO 8601/);
  const date = writeVariant(DataType.DateTime, '2026-01-02T03:04:05Z') as Variant;
  t.deepEqual(date.value, new Date('2026-01-02T03:04:05Z'));
});

test('an integer node takes a JSON number only when it names its integer exactly', (t) => {
  t.regex(writeVariant(DataType.Int64, 2 ** 53) as string, /at or beyond ±2\^53.*decimal string/);
  t.regex(writeVariant(DataType.UInt64, 2 ** 53, '9007199254740993') as string, /decimal string/);
  t.deepEqual(
    (writeVariant(DataType.UInt64, 2 ** 53 - 1) as Variant).value,
    [0x1f_ffff, 0xffff_ffff],
  );
  t.regex(writeVariant(DataType.Int32, 1, '1.0000000000000001') as string, /whole number/);
  t.regex(writeVariant(DataType.UInt32, 1e23, '1e23') as string, /outside the range of UInt32/);
  t.is((writeVariant(DataType.Int16, 1500, '1.5e3') as Variant).value, 1500);
});

test('DateTime: a real ISO 8601 instant within OPC UA’s range, to 100 ns', (t) => {
  const written = writeVariant(DataType.DateTime, '2024-02-29T23:59:59.1234567-01:00') as Variant;
  t.is((written.value as Date).toISOString(), '2024-03-01T00:59:59.123Z');
  t.is((written.value as { picoseconds?: number }).picoseconds, 456_700_000);
  t.regex(
    writeVariant(DataType.DateTime, '2024-02-30T00:00:00Z') as string,
    /not a date and time that exists/,
  );
  t.regex(
    writeVariant(DataType.DateTime, '1500-01-01T00:00:00Z') as string,
    /outside the range of an OPC UA DateTime/,
  );
  t.regex(writeVariant(DataType.DateTime, 5) as string, /ISO 8601.*\(the node is DateTime\)/);
});
