/**
 * The compiled decoders on hand-made messages; every expectation shows the bit arithmetic.
 * "Bit n" of a frame is bit n % 8 of byte ⌊n / 8⌋.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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

test('64-bit labels are looked up by the exact raw value, never a neighbour’s', (t) => {
  const labelled = parseDbcText(
    [
      'BU_: N',
      'BO_ 1 Unsigned: 8 N',
      ' SG_ U : 0|64@1+ (1,0) [0|0] "" N',
      'BO_ 2 Signed: 8 N',
      ' SG_ S : 0|64@1- (1,0) [0|0] "" N',
      'VAL_ 1 U 18446744073709551615 "max" 9007199254740993 "odd" 9007199254740992 "even" 1 "one";',
      'VAL_ 2 S -9223372036854775808 "min" -9007199254740993 "odd" 9223372036854775807 "max";',
    ].join('\n'),
    'labels.dbc',
  );
  const label = (name: string, raw: bigint) => {
    const bytes = [...Array(8).keys()].map((i) =>
      Number((BigInt.asUintN(64, raw) >> BigInt(8 * i)) & 0xffn),
    );
    const view = decodeView(messageNamed(labelled, name), bytes);
    return (Object.values(view)[0] as { valueText?: string }).valueText;
  };
  // Doubles cannot tell these apart: 2^64 − 2 and 2^64 − 1 are both 2^64 as numbers, 2^53 + 1
  // is 2^53, and −2^63 + 1 is −2^63.
  t.is(label('Unsigned', 2n ** 64n - 1n), 'max');
  t.is(label('Unsigned', 2n ** 64n - 2n), undefined);
  t.is(label('Unsigned', 2n ** 53n + 1n), 'odd');
  t.is(label('Unsigned', 2n ** 53n), 'even');
  t.is(label('Unsigned', 2n ** 53n + 2n), undefined);
  t.is(label('Unsigned', 1n), 'one');
  t.is(label('Signed', -(2n ** 63n)), 'min');
  t.is(label('Signed', -(2n ** 63n) + 1n), undefined);
  t.is(label('Signed', -(2n ** 53n) - 1n), 'odd');
  t.is(label('Signed', -(2n ** 53n)), undefined);
  t.is(label('Signed', 2n ** 63n - 1n), 'max');
  t.is(label('Signed', 2n ** 63n - 2n), undefined);
  t.deepEqual(
    [...(labelled.messages[0]?.signals[0]?.valueLabels ?? [])],
    [
      [2n ** 64n - 1n, 'max'],
      [2n ** 53n + 1n, 'odd'],
      [2n ** 53n, 'even'],
      [1, 'one'],
    ],
  );
});

const scaleOracle = fileURLToPath(new URL('../helpers/dbc-scale-oracle.py', import.meta.url));

/**
 * Raw values of a 64-bit signal: the edges of the type and of the double grid (2^53 ± 1, where
 * doubles begin to skip integers; ties that round to even), and 40 from a seeded xorshift.
 */
function rawValues(signed: boolean): bigint[] {
  const edges = [0n, 1n, 3n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 53n + 3n];
  edges.push(2n ** 54n + 2n, 2n ** 54n + 6n, 2n ** 62n + 1n, 2n ** 63n - 1n, 12345678901234567n);
  if (signed) edges.push(...edges.map((raw) => -raw), -(2n ** 63n));
  else edges.push(2n ** 63n, 2n ** 63n + 1n, 2n ** 64n - 1n, 2n ** 64n - 2049n);
  let state = signed ? 0x9e3779b97f4a7c15n : 0x2545f4914f6cdd1dn;
  for (let i = 0; i < 40; i++) {
    state ^= (state << 13n) & 0xffff_ffff_ffff_ffffn;
    state ^= state >> 7n;
    state ^= (state << 17n) & 0xffff_ffff_ffff_ffffn;
    edges.push(signed ? BigInt.asIntN(64, state) : state);
  }
  return edges;
}

test('scaled 64-bit values are what Python computes exactly, rounded once', (t) => {
  // [factor, offset] as the DBC writes them. Integer ones (beyond 2^53 too) give exact values;
  // fractional ones the double nearest raw × factor + offset.
  const scales: [string, string][] = [
    ['0.1', '0'],
    ['0.1', '-40'],
    ['0.001', '0.5'],
    ['1.5', '0'],
    ['1E-7', '-273.15'],
    ['-0.25', '1000000'],
    ['3.3', '0'],
    ['0.05', '-1E15'],
    ['1', '0.5'],
    ['1', '-9223372036854775808'],
    ['1', '9007199254740993'],
    ['10', '-3'],
    ['-1', '0'],
    ['1E+018', '7'],
  ];
  const lines = ['BU_: N'];
  const cases: { message: string; raw: bigint; factor: string; offset: string }[] = [];
  scales.forEach(([factor, offset], index) => {
    for (const signed of [false, true]) {
      const message = `M${index}${signed ? 'S' : 'U'}`;
      lines.push(`BO_ ${2 * index + (signed ? 2 : 1)} ${message}: 8 N`);
      lines.push(` SG_ V : 0|64@1${signed ? '-' : '+'} (${factor},${offset}) [0|0] "" N`);
      for (const raw of rawValues(signed)) cases.push({ message, raw, factor, offset });
    }
  });
  // ≤ 53-bit signals with an integer offset beyond 2^53: exact too.
  for (const [name, offset] of [
    ['Short1', '9007199254740993'],
    ['Short2', '-9223372036854775807'],
  ] as const) {
    lines.push(
      `BO_ ${100 + (cases.length % 7)} ${name}: 8 N`,
      ` SG_ V : 0|16@1+ (3,${offset}) [0|0] "" N`,
    );
    for (const raw of [0n, 1n, 2n, 65535n]) cases.push({ message: name, raw, factor: '3', offset });
  }
  const db = parseDbcText(lines.join('\n'), 'scales.dbc');
  const answer = spawnSync('/usr/bin/python3', [scaleOracle], {
    input: JSON.stringify(
      cases.map(({ raw, factor, offset }) => ({ raw: `${raw}`, factor, offset })),
    ),
    encoding: 'utf8',
  });
  if (answer.status !== 0) throw new Error(`dbc-scale-oracle.py failed: ${answer.stderr}`);
  const expected = JSON.parse(answer.stdout) as { value: string; exact: string | null }[];
  const wrong: string[] = [];
  cases.forEach((c, index) => {
    const bytes = [...Array(8).keys()].map((i) =>
      Number((BigInt.asUintN(64, c.raw) >> BigInt(8 * i)) & 0xffn),
    );
    const got = decodeView(messageNamed(db, c.message), bytes).V as {
      value: number;
      exactValue?: string;
    };
    const { value, exact } = expected[index] as { value: string; exact: string | null };
    const beyond = exact !== null && (BigInt(exact) > 2n ** 53n || BigInt(exact) < -(2n ** 53n));
    if (!Object.is(got.value, Number(value)) || got.exactValue !== (beyond ? exact : undefined))
      wrong.push(
        `${c.message} (${c.factor},${c.offset}) raw ${c.raw}: ${got.value} ${got.exactValue} ≠ Python ${value} ${beyond ? exact : ''}`,
      );
  });
  t.true(cases.length > 1000, `${cases.length} cases`);
  t.deepEqual(wrong, []);
});
