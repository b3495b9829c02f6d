/**
 * The codec against register contents worked out by hand: each value is written out as the
 * bytes A B C D (… H) of its big-endian form, then placed in registers per byte order.
 */
import test from 'ava';
import {
  type ByteOrder,
  decodeBit,
  decodeRegisters,
  exactInteger,
  registerCount,
} from '../../../drivers/modbus/codec.js';

/** Register values to the bytes of an answer (registers travel big-endian). */
const bytes = (...registers: number[]) =>
  Uint8Array.from(registers.flatMap((register) => [register >> 8, register & 0xff]));

test('16-bit values: ABCD and CDAB read the register as sent, BADC and DCBA swap its bytes', (t) => {
  // 0xFF85 = −123 signed, 65413 unsigned.
  for (const order of ['ABCD', 'CDAB'] as ByteOrder[]) {
    t.is(decodeRegisters(bytes(0xff85), 0, 'int16', order), -123, order);
    t.is(decodeRegisters(bytes(0xff85), 0, 'uint16', order), 65413, order);
  }
  for (const order of ['BADC', 'DCBA'] as ByteOrder[]) {
    t.is(decodeRegisters(bytes(0x85ff), 0, 'int16', order), -123, order);
    t.is(decodeRegisters(bytes(0x3412), 0, 'uint16', order), 0x1234, order);
  }
});

test('bit: one bit of the register, 0 = least significant', (t) => {
  const data = bytes(0x8009);
  t.true(decodeRegisters(data, 0, 'bit', 'ABCD', 0) as boolean);
  t.false(decodeRegisters(data, 0, 'bit', 'ABCD', 1) as boolean);
  t.true(decodeRegisters(data, 0, 'bit', 'ABCD', 3) as boolean);
  t.true(decodeRegisters(data, 0, 'bit', 'ABCD', 15) as boolean);
  t.false(decodeRegisters(data, 0, 'bit', 'ABCD', 14) as boolean);
});

test('32-bit values in all four orders: 0x12345678 has A=12 B=34 C=56 D=78', (t) => {
  const layouts: Record<ByteOrder, number[]> = {
    ABCD: [0x1234, 0x5678],
    CDAB: [0x5678, 0x1234],
    BADC: [0x3412, 0x7856],
    DCBA: [0x7856, 0x3412],
  };
  for (const [order, registers] of Object.entries(layouts) as [ByteOrder, number[]][]) {
    // A leading register shows the offset is honoured.
    const data = bytes(0xdead, ...registers);
    t.is(decodeRegisters(data, 2, 'uint32', order), 0x12345678, order);
    t.is(decodeRegisters(data, 2, 'int32', order), 0x12345678, order);
  }
  // −2 = FF FF FF FE; 1.5f = 3F C0 00 00; −2.25f = C0 10 00 00.
  t.is(decodeRegisters(bytes(0xffff, 0xfffe), 0, 'int32', 'ABCD'), -2);
  t.is(decodeRegisters(bytes(0xfeff, 0xffff), 0, 'int32', 'DCBA'), -2);
  t.is(decodeRegisters(bytes(0xfffe, 0xffff), 0, 'uint32', 'CDAB'), 0xfffffffe);
  t.is(decodeRegisters(bytes(0x3fc0, 0x0000), 0, 'float32', 'ABCD'), 1.5);
  t.is(decodeRegisters(bytes(0x0000, 0xc010), 0, 'float32', 'CDAB'), -2.25);
  t.is(decodeRegisters(bytes(0xc03f, 0x0000), 0, 'float32', 'BADC'), 1.5);
  t.is(decodeRegisters(bytes(0x0000, 0x10c0), 0, 'float32', 'DCBA'), -2.25);
});

test('64-bit values in all four orders: 0x0102030405060708 has A=01 … H=08', (t) => {
  const layouts: Record<ByteOrder, number[]> = {
    ABCD: [0x0102, 0x0304, 0x0506, 0x0708],
    CDAB: [0x0708, 0x0506, 0x0304, 0x0102],
    BADC: [0x0201, 0x0403, 0x0605, 0x0807],
    DCBA: [0x0807, 0x0605, 0x0403, 0x0201],
  };
  for (const [order, registers] of Object.entries(layouts) as [ByteOrder, number[]][]) {
    t.is(
      decodeRegisters(bytes(...registers), 0, 'uint64', order),
      Number(0x0102030405060708n),
      order,
    );
    t.is(
      decodeRegisters(bytes(...registers), 0, 'int64', order),
      Number(0x0102030405060708n),
      order,
    );
  }
  // −1 and 2^64 − 2 (rounded to the nearest double), 1.0 = 3FF0 0000 0000 0000.
  t.is(decodeRegisters(bytes(0xffff, 0xffff, 0xffff, 0xffff), 0, 'int64', 'ABCD'), -1);
  t.is(decodeRegisters(bytes(0xffff, 0xffff, 0xffff, 0xfffe), 0, 'uint64', 'ABCD'), 2 ** 64);
  t.is(decodeRegisters(bytes(0x3ff0, 0, 0, 0), 0, 'float64', 'ABCD'), 1);
  t.is(decodeRegisters(bytes(0, 0, 0, 0x3ff0), 0, 'float64', 'CDAB'), 1);
  t.is(decodeRegisters(bytes(0xf03f, 0, 0, 0), 0, 'float64', 'BADC'), 1);
  t.is(decodeRegisters(bytes(0, 0, 0, 0xf03f), 0, 'float64', 'DCBA'), 1);
});

test('64-bit integers beyond 2^53: the nearest double, and the exact decimal as text', (t) => {
  // 2^53 + 1 = 0020 0000 0000 0001: no double holds it; the nearest is 2^53 = 9007199254740992.
  const above = bytes(0x0020, 0, 0, 1);
  t.is(decodeRegisters(above, 0, 'uint64', 'ABCD'), 9_007_199_254_740_992);
  t.is(exactInteger(above, 0, 'uint64', 'ABCD'), '9007199254740993');
  t.is(exactInteger(above, 0, 'int64', 'ABCD'), '9007199254740993');
  // Word-swapped, the same value.
  t.is(exactInteger(bytes(1, 0, 0, 0x0020), 0, 'uint64', 'CDAB'), '9007199254740993');
  // 2^53 itself is exact: no text.
  t.is(exactInteger(bytes(0x0020, 0, 0, 0), 0, 'uint64', 'ABCD'), undefined);
  t.is(exactInteger(bytes(0, 0, 0, 0x1234), 0, 'int64', 'ABCD'), undefined);
  // −(2^53 + 1) = FFDF FFFF FFFF FFFF.
  const below = bytes(0xffdf, 0xffff, 0xffff, 0xffff);
  t.is(decodeRegisters(below, 0, 'int64', 'ABCD'), -9_007_199_254_740_992);
  t.is(exactInteger(below, 0, 'int64', 'ABCD'), '-9007199254740993');
  // The extremes: −2^63 and 2^64 − 1 (whose nearest double is 2^64 = 18446744073709551616).
  t.is(exactInteger(bytes(0x8000, 0, 0, 0), 0, 'int64', 'ABCD'), '-9223372036854775808');
  const max = bytes(0xffff, 0xffff, 0xffff, 0xffff);
  t.is(decodeRegisters(max, 0, 'uint64', 'ABCD'), 2 ** 64);
  t.is(exactInteger(max, 0, 'uint64', 'ABCD'), '18446744073709551615');
  t.is(exactInteger(max, 0, 'int64', 'ABCD'), undefined, '−1 is exact');
});

test('strings: two characters per register, cut at the first NUL', (t) => {
  t.is(decodeRegisters(bytes(0x4869, 0x2100, 0x4142), 0, 'string', 'ABCD', 0, 3), 'Hi!');
  t.is(decodeRegisters(bytes(0x4869, 0x2100), 0, 'string', 'CDAB', 0, 2), 'Hi!');
  t.is(decodeRegisters(bytes(0x4b4f, 0x5941), 0, 'string', 'BADC', 0, 2), 'OKAY');
  t.is(decodeRegisters(bytes(0x4b4f, 0x0041), 0, 'string', 'DCBA', 0, 2), 'OKA');
  t.is(decodeRegisters(bytes(0x0000), 0, 'string', 'ABCD', 0, 1), '');
});

test('bits: the first coil is the least significant bit of the first byte', (t) => {
  const data = Uint8Array.from([0b0000_0101, 0b1000_0000]);
  t.deepEqual(
    Array.from({ length: 16 }, (_, i) => decodeBit(data, i)),
    [
      true,
      false,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      true,
    ],
  );
});

test('registerCount', (t) => {
  t.is(registerCount('bool'), 1);
  t.is(registerCount('uint16'), 1);
  t.is(registerCount('float32'), 2);
  t.is(registerCount('uint64'), 4);
  t.is(registerCount('string', 7), 7);
});
