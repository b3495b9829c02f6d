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
