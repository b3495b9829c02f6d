import test from 'ava';
import { type ByteOrder, decodeRegisters, exactInteger } from '../../../drivers/modbus/codec.js';
import {
  type EncodableTag,
  encodeRegisters,
  rawWrite,
  wireBit,
} from '../../../drivers/modbus/value-encoder.js';

const orders: ByteOrder[] = ['ABCD', 'CDAB', 'BADC', 'DCBA'];
const tag = (type: EncodableTag['type'], order: ByteOrder = 'ABCD', more = {}): EncodableTag => ({
  type,
  order,
  scale: 1,
  offset: 0,
  ...more,
});

function encode(t: EncodableTag, value: unknown): Uint8Array {
  const raw = rawWrite(t, value);
  if (typeof raw === 'string') throw new Error(raw);
  return encodeRegisters(t, raw);
}

test('encoding is the exact inverse of decoding, for every type and order', (t) => {
  const values: [EncodableTag['type'], number | string][] = [
    ['int16', -32_768],
    ['uint16', 65_535],
    ['int32', -2_147_483_648],
    ['uint32', 4_294_967_295],
    ['int64', -9_007_199_254_740_991],
    ['uint64', 9_007_199_254_740_991],
    ['float32', 1.5],
    ['float64', -Math.E],
  ];
  for (const order of orders) {
    for (const [type, value] of values) {
      const bytes = encode(tag(type, order), value);
      t.is(decodeRegisters(bytes, 0, type as 'int16', order), value, `${type} ${order}`);
    }
    const text = encode(tag('string', order, { length: 3 }), 'AbC');
    t.deepEqual([...text].slice(4), [0, 0], 'padded with NUL');
    t.is(decodeRegisters(text, 0, 'string', order, 0, 3), 'AbC');
  }
});

test('64-bit integers beyond 2^53 go exactly from decimal strings', (t) => {
  for (const order of orders) {
    const bytes = encode(tag('uint64', order), '18446744073709551615');
    t.is(exactInteger(bytes, 0, 'uint64', order), '18446744073709551615');
    const negative = encode(tag('int64', order), '-9223372036854775808');
    t.is(exactInteger(negative, 0, 'int64', order), '-9223372036854775808');
  }
  t.regex(rawWrite(tag('int64'), 2 ** 60) as string, /send it as a decimal string/);
  t.regex(rawWrite(tag('uint64'), '18446744073709551616') as string, /outside the range/);
  t.regex(rawWrite(tag('int32'), '5') as string, /must be a number/);
});

test('a JSON number that does not name its integer exactly is refused, never rounded', (t) => {
  for (const type of ['int64', 'uint64'] as const) {
    // JSON.parse gives 2^53 for 9007199254740993: refused with or without the text.
    t.regex(rawWrite(tag(type), 2 ** 53) as string, /at or beyond ±2\^53.*decimal string/);
    t.regex(rawWrite(tag(type), 2 ** 53, '9007199254740993') as string, /decimal string/);
    t.deepEqual(rawWrite(tag(type), 2 ** 53 - 1, '9007199254740991'), {
      kind: 'integer',
      raw: 2n ** 53n - 1n,
    });
  }
  t.regex(rawWrite(tag('int64'), -(2 ** 53)) as string, /decimal string/);
  // Fractions JSON.parse rounded to whole numbers, seen in the text.
  t.regex(rawWrite(tag('int16'), 1, '1.0000000000000001') as string, /whole number \(int16\)/);
  t.regex(
    rawWrite(tag('int64'), 4_503_599_627_370_496, '4503599627370495.5') as string,
    /whole number/,
  );
  t.deepEqual(rawWrite(tag('int16'), 1000, '1.000e3'), { kind: 'integer', raw: 1000n });
  t.regex(rawWrite(tag('uint32'), 1e23, '1e23') as string, /outside the range of uint32/);
  // A scaled tag is a measurement: the text does not matter, but the raw value must be exact.
  const scaled = tag('int64', 'ABCD', { scale: 0.5 });
  t.deepEqual(rawWrite(scaled, 2.25, '2.2500000000000000001'), { kind: 'integer', raw: 5n });
  t.regex(rawWrite(scaled, 2 ** 52) as string, /beyond ±2\^53 once scaled/);
  t.regex(rawWrite(tag('int32', 'ABCD', { scale: 1e-10 }), 1e7) as string, /int32 once scaled/);
});

test('scale and offset are undone; integers round to the raw step, fractions refused unscaled', (t) => {
  const scaled = tag('int16', 'ABCD', { scale: 0.1, offset: 5 });
  t.deepEqual(rawWrite(scaled, 30.3), { kind: 'integer', raw: 253n });
  t.regex(rawWrite(tag('int16'), 1.5) as string, /whole number/);
  t.regex(rawWrite(scaled, 5000) as string, /outside the range of int16 once scaled/);
  t.regex(rawWrite(tag('uint16'), -1) as string, /outside the range of uint16/);
  t.regex(rawWrite(tag('float32'), 1e39) as string, /beyond the range of float32/);
});

test('types are checked: booleans for bits, text within length and ISO 8859-1', (t) => {
  t.regex(rawWrite(tag('bit'), 1) as string, /true or false/);
  t.regex(rawWrite(tag('uint16'), true) as string, /must be a number/);
  t.regex(rawWrite(tag('string', 'ABCD', { length: 2 }), 'abcde') as string, /more than the 4/);
  t.regex(rawWrite(tag('string', 'ABCD', { length: 2 }), 'a€') as string, /ISO 8859-1/);
  t.regex(rawWrite(tag('string', 'ABCD', { length: 2 }), 'a\0') as string, /ISO 8859-1/);
});

test('a bit of a byte-swapped register sits 8 places away on the wire', (t) => {
  t.is(wireBit(0, 'ABCD'), 0);
  t.is(wireBit(3, 'CDAB'), 3);
  t.is(wireBit(0, 'BADC'), 8);
  t.is(wireBit(12, 'DCBA'), 4);
});
