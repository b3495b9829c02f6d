/**
 * The compiled decoders on hand-made messages; every expectation shows the bit arithmetic.
 * "Bit n" of a frame is bit n % 8 of byte ⌊n / 8⌋.
 */
import test from 'ava';
import { compileDatabaseDecoders, compileMessageDecoder } from '../../src/dbc/decode.js';
import { parseDbcText } from '../../src/dbc/parse-dbc.js';
import { decodeView, messageNamed } from '../helpers/dbc.js';

const db = parseDbcText(
  [
    'BU_: N',
    'BO_ 1 Crossing: 8 N',
    ' SG_ Moto : 13|20@0+ (1,0) [0|0] "" N',
    ' SG_ Intel : 13|20@1+ (1,0) [0|0] "" N',
    ' SG_ Neg : 40|8@1- (-0.5,10) [0|0] "" N',
    ' SG_ Bit : 48|1@1- (1,0) [0|0] "" N',
    'BO_ 2 Wide: 8 N',
    ' SG_ U53 : 0|53@1+ (1,0) [0|0] "" N',
    'BO_ 3 WideSigned: 8 N',
    ' SG_ S53 : 0|53@1- (1,0) [0|0] "" N',
    'BO_ 4 Wider: 8 N',
    ' SG_ U54 : 0|54@1+ (2,1) [0|0] "" N',
    'BO_ 5 Labelled64: 8 N',
    ' SG_ Big : 0|64@1+ (1,0) [0|0] "" N',
    'BO_ 6 Floats: 8 N',
    ' SG_ F32 : 7|32@0- (1,0) [0|0] "" N',
    ' SG_ F32Scaled : 39|32@0- (2,1) [0|0] "" N',
    'BO_ 7 Double: 8 N',
    ' SG_ F64 : 7|64@0- (1,0) [0|0] "" N',
    'BO_ 100 Fd: 64 N',
    ' SG_ Head : 0|8@1+ (1,0) [0|0] "" N',
    ' SG_ Mid : 384|8@1+ (1,0) [0|0] "" N',
    ' SG_ Word : 480|32@1- (1,0) [0|0] "" N',
    ' SG_ MotoEnd : 503|16@0+ (1,0) [0|0] "" N',
    ' SG_ Last : 504|8@1+ (1,0) [0|0] "" N',
    'BO_ 8 Mux: 8 N',
    ' SG_ Data m1 : 0|8@1+ (1,0) [0|0] "" N',
    ' SG_ Sel M : 56|8@1+ (1,0) [0|0] "" N',
    'VAL_ 5 Big 1 "one" 0 "zero";',
    'SIG_VALTYPE_ 6 F32 : 1;',
    'SIG_VALTYPE_ 6 F32Scaled : 1;',
    'SIG_VALTYPE_ 7 F64 : 2;',
  ].join('\n'),
  'decode.dbc',
);

test('Intel and Motorola signals crossing byte boundaries', (t) => {
  // b1 = 0xE5, b2 = 0x5A, b3 = 0xC3, b4 = 0x01.
  // Moto, MSB at bit 13 (byte 1 bit 5), 20 bits: byte 1 bits 5..0, byte 2, byte 3 bits 7..2 →
  //   (0xE5 & 0x3F) << 14 | 0x5A << 6 | 0xC3 >> 2 = 37·16384 + 90·64 + 48 = 612016.
  // Intel, LSB at bit 13, 20 bits: byte 1 bits 5..7, byte 2, byte 3, byte 4 bit 0 →
  //   0xE5 >> 5 | 0x5A << 3 | 0xC3 << 11 | (0x01 & 1) << 19 = 7 + 720 + 399360 + 524288 = 924375.
  // Neg: byte 5 = 0xFC → −4 → −4 · −0.5 + 10 = 12. Bit: bit 48 = 1, signed 1-bit → −1.
  t.deepEqual(
    decodeView(messageNamed(db, 'Crossing'), [0x00, 0xe5, 0x5a, 0xc3, 0x01, 0xfc, 0x01, 0x00]),
    {
      Moto: { raw: 612016, value: 612016 },
      Intel: { raw: 924375, value: 924375 },
      Neg: { raw: -4, value: 12 },
      Bit: { raw: -1, value: -1 },
    },
  );
});

test('integers up to 53 bits are numbers, longer ones BigInt', (t) => {
  // 53 ones: 2^53 − 1, still exact as a number.
  const ones53 = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, 0x00];
  t.deepEqual(decodeView(messageNamed(db, 'Wide'), ones53), {
    U53: { raw: 9007199254740991, value: 9007199254740991 },
  });
  t.deepEqual(decodeView(messageNamed(db, 'WideSigned'), ones53), { S53: { raw: -1, value: -1 } });
  // Only bit 52, the sign bit: −2^52.
  t.deepEqual(decodeView(messageNamed(db, 'WideSigned'), [0, 0, 0, 0, 0, 0, 0x10, 0]), {
    S53: { raw: -(2 ** 52), value: -(2 ** 52) },
  });
  // 54 ones: 2^54 − 1 as BigInt; physical 2 · raw + 1 = 2^55 − 1 = 36028797018963967, computed
  // in BigInt (integer factor and offset): the nearest double 2^55, and the exact decimal.
  t.deepEqual(
    decodeView(messageNamed(db, 'Wider'), [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f, 0xff]),
    { U54: { raw: 2n ** 54n - 1n, value: 2 ** 55, exactValue: '36028797018963967' } },
  );
  // 2^53 + 1 = 9007199254740993, the first integer a double cannot hold (it reads 2^53).
  t.deepEqual(decodeView(messageNamed(db, 'Labelled64'), [1, 0, 0, 0, 0, 0, 0x20, 0]), {
    Big: { raw: 2n ** 53n + 1n, value: 2 ** 53, exactValue: '9007199254740993' },
  });
  // At ±2^53 and within, the double is exact: no decimal.
  t.deepEqual(decodeView(messageNamed(db, 'Labelled64'), [0, 0, 0, 0, 0, 0, 0x20, 0]), {
    Big: { raw: 2n ** 53n, value: 2 ** 53 },
  });
  // Labels apply to BigInt raw values too.
  t.deepEqual(decodeView(messageNamed(db, 'Labelled64'), [1, 0, 0, 0, 0, 0, 0, 0]), {
    Big: { raw: 1n, value: 1, valueText: 'one' },
  });
});

test('an integer factor and offset keep values beyond 2^53 exact; a fraction does not', (t) => {
  const scaled = parseDbcText(
    [
      'BU_: N',
      'BO_ 1 Scaled: 8 N',
      // 40 bits × 10,000: a raw value within 2^53 whose physical value is not.
      ' SG_ Energy : 0|40@1+ (10000,-3) [0|0] "Wh" N',
      'BO_ 2 Fraction: 8 N',
      ' SG_ Half : 0|64@1- (0.5,0) [0|0] "" N',
      'BO_ 3 Negative: 8 N',
      ' SG_ Down : 0|64@1+ (-1,0) [0|0] "" N',
    ].join('\n'),
    'scaled.dbc',
  );
  // Energy: 2^40 − 1 = 1099511627775; × 10,000 − 3 = 10995116277749997, beyond 2^53, where
  // doubles step by 2: the value is the even neighbour …996, the decimal exact.
  t.deepEqual(decodeView(messageNamed(scaled, 'Scaled'), [0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0]), {
    Energy: { raw: 1099511627775, value: 10995116277749996, exactValue: '10995116277749997' },
  });
  // Within 2^53 the double is exact: 1 × 10,000 − 3.
  t.deepEqual(decodeView(messageNamed(scaled, 'Scaled'), [1, 0, 0, 0, 0, 0, 0, 0]), {
    Energy: { raw: 1, value: 9997 },
  });
  // Half: raw 0x7FFFFFFFFFFFFFFF = 2^63 − 1, × 0.5: a measurement, the nearest double only.
  t.deepEqual(
    decodeView(messageNamed(scaled, 'Fraction'), [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
    { Half: { raw: 2n ** 63n - 1n, value: 2 ** 62 } },
  );
  // Down: raw 2^64 − 1 × −1 = −18446744073709551615.
  t.deepEqual(
    decodeView(messageNamed(scaled, 'Negative'), [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
    { Down: { raw: 2n ** 64n - 1n, value: -(2 ** 64), exactValue: '-18446744073709551615' } },
  );
});

test('Motorola float and double signals', (t) => {
  // F32, big-endian bytes 0–3: 0x40490FDB, the float nearest to π. F32Scaled, bytes 4–7:
  // 0xC0000000 = −2.0f → −2 · 2 + 1 = −3.
  t.deepEqual(
    decodeView(messageNamed(db, 'Floats'), [0x40, 0x49, 0x0f, 0xdb, 0xc0, 0x00, 0x00, 0x00]),
    {
      F32: { raw: Math.fround(Math.PI), value: Math.fround(Math.PI) },
      F32Scaled: { raw: -2, value: -3 },
    },
  );
  // F64, big-endian: 0x400921FB54442D18 = π as a double.
  t.deepEqual(
    decodeView(messageNamed(db, 'Double'), [0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18]),
    { F64: { raw: Math.PI, value: Math.PI } },
  );
});

test('a 64-byte CAN FD message, and a shorter frame of it', (t) => {
  const message = messageNamed(db, 'Fd');
  t.true(message.fd);
  const frame = new Array<number>(64).fill(0);
  frame[0] = 0x11;
  frame[48] = 0x30;
  // Word: bits 480–511 = bytes 60–63 little-endian 0xFFFFFFFE → −2. MotoEnd: MSB at bit 503
  // (byte 62 bit 7), 16 bits = bytes 62–63 big-endian 0xFFFF. Last: byte 63.
  frame.splice(60, 4, 0xfe, 0xff, 0xff, 0xff);
  t.deepEqual(decodeView(message, frame), {
    Head: { raw: 0x11, value: 17 },
    Mid: { raw: 0x30, value: 48 },
    Word: { raw: -2, value: -2 },
    MotoEnd: { raw: 0xffff, value: 65535 },
    Last: { raw: 0xff, value: 255 },
  });
  // A 48-byte frame (FD DLC 14): Mid is byte 48, the 49th.
  t.deepEqual(decodeView(message, frame.slice(0, 48)), {
    Head: { raw: 0x11, value: 17 },
    Mid: 'truncated',
    Word: 'truncated',
    MotoEnd: 'truncated',
    Last: 'truncated',
  });
  // `length` limits the payload even when the buffer is longer.
  t.deepEqual(decodeView(message, frame, 49), {
    Head: { raw: 0x11, value: 17 },
    Mid: { raw: 0x30, value: 48 },
    Word: 'truncated',
    MotoEnd: 'truncated',
    Last: 'truncated',
  });
});

test('a multiplexer cut off by a short frame makes its signals undecodable', (t) => {
  const message = messageNamed(db, 'Mux');
  t.deepEqual(decodeView(message, [0x2a, 0, 0, 0, 0, 0, 0, 1]), {
    Data: { raw: 0x2a, value: 42 },
    Sel: { raw: 1, value: 1 },
  });
  t.deepEqual(decodeView(message, [0x2a, 0, 0, 0, 0, 0, 0, 1], 4), {
    Data: 'truncated',
    Sel: 'truncated',
  });
  t.deepEqual(decodeView(message, [0x2a, 0, 0, 0, 0, 0, 0, 2]), {
    Data: 'inactive',
    Sel: { raw: 2, value: 2 },
  });
});

test('a length beyond the buffer, or negative, is clamped', (t) => {
  const message = messageNamed(db, 'Mux');
  t.deepEqual(decodeView(message, [0x2a, 0, 0, 0, 0, 0, 0, 1], 64), {
    Data: { raw: 0x2a, value: 42 },
    Sel: { raw: 1, value: 1 },
  });
  t.deepEqual(decodeView(message, [0x2a, 0, 0, 0, 0, 0, 0, 1], -1), {
    Data: 'truncated',
    Sel: 'truncated',
  });
});

test('the result array and its slots are reused from frame to frame', (t) => {
  const decoder = compileMessageDecoder(messageNamed(db, 'Mux'));
  const first = decoder.decode(Uint8Array.from([7, 0, 0, 0, 0, 0, 0, 1]));
  const slot = first[0];
  t.is(slot?.raw, 7);
  t.is(slot?.index, 0);
  t.is(slot?.signal.name, 'Data');
  const second = decoder.decode(Uint8Array.from([9, 0, 0, 0, 0, 0, 0, 3]));
  t.is(second, first);
  t.is(second[0], slot);
  // The slot now describes the second frame: Data is multiplexed out, its numbers cleared.
  t.like(slot, { status: 'inactive', raw: 0, valueText: undefined });
  t.true(Number.isNaN(slot?.value));
  t.is(decoder.message.name, 'Mux');
});

test('the database decoders look frames up by identifier and frame format', (t) => {
  const decoders = compileDatabaseDecoders(
    parseDbcText(
      [
        'BO_ 5 Std: 8 N',
        ' SG_ A : 0|8@1+ (1,0) [0|0] "" N',
        'BO_ 2147483653 Ext: 8 N',
        ' SG_ B : 0|8@1+ (1,0) [0|0] "" N',
      ].join('\n'),
      'lookup.dbc',
    ),
  );
  t.is(decoders.get(5, false)?.message.name, 'Std');
  t.is(decoders.get(5, true)?.message.name, 'Ext');
  t.is(decoders.get(6, false), undefined);
  t.deepEqual(
    decoders.all.map((decoder) => decoder.message.name),
    ['Std', 'Ext'],
  );
});
