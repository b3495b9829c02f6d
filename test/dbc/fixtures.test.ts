/**
 * Every DBC fixture (test/fixtures/dbc, from the cantools project) is parsed, and frames of
 * its messages are decoded and compared with values worked out by hand from the bit layout. Each
 * expectation carries the arithmetic: which bits of which bytes make the raw value, and the
 * physical value raw × factor + offset. Bytes are written in transmission order (byte 0 first);
 * "bit n" of the frame is bit n % 8 of byte ⌊n / 8⌋ (the DBC numbering).
 */
import test, { type ExecutionContext } from 'ava';
import { DbcParseError } from '../../src/dbc/dbc-error.js';
import { compileDatabaseDecoders } from '../../src/dbc/decode.js';
import type { DbcDatabase } from '../../src/dbc/model.js';
import { parseDbc } from '../../src/dbc/parse-dbc.js';
import {
  dbcFixtureNames,
  decodeView,
  loadDbcFixture,
  messageNamed,
  readDbcFixture,
} from '../helpers/dbc.js';

type FixtureCheck = (t: ExecutionContext, database: DbcDatabase) => void;

/** Windows-1252 bytes 0x80–0x9F, by the code page's published table (undefined ones omitted). */
const cp1252High: Record<number, string> = {
  128: '\u20ac',
  130: '\u201a',
  131: '\u0192',
  132: '\u201e',
  133: '\u2026',
  134: '\u2020',
  135: '\u2021',
  136: '\u02c6',
  137: '\u2030',
  138: '\u0160',
  139: '\u2039',
  140: '\u0152',
  142: '\u017d',
  145: '\u2018',
  146: '\u2019',
  147: '\u201c',
  148: '\u201d',
  149: '\u2022',
  150: '\u2013',
  151: '\u2014',
  152: '\u02dc',
  153: '\u2122',
  154: '\u0161',
  155: '\u203a',
  156: '\u0153',
  158: '\u017e',
  159: '\u0178',
};

const checks: Record<string, FixtureCheck> = {
  'abs.dbc': (t, db) => {
    // GenMsgCycleTime has no BA_ in this file; its BA_DEF_DEF_ 10 applies to every message.
    t.is(messageNamed(db, 'BREMSE_33').cycleTimeMs, 10);
    t.is(db.comment, 'Version 2.0');
    // 0xB0 in Windows-1252 is the degree sign.
    t.is(messageNamed(db, 'MM5_10_TX1').signals[0]?.unit, '\u00b0/s');
    t.is(
      messageNamed(db, 'BREMSE_32').signals.find((s) => s.name === 'WheelQuality_FL')?.comment,
      'Bit matrix\nBit0 ( 1) Signal Reduced Monitored\nBit1 ( 2) Reduced Accuracy\n' +
        'Bit2 ( 4) Interfered\nBit3 ( 8) Suspicious Plausibility\nBit4 (16) Suspicious Lost\n' +
        'Bit5 (32) Not Initialized\nBit6 (64) Invalid Generic\nBit7 (128) Invalid Individual',
    );

    // BREMSE_33: four Intel 16-bit unsigned words, factor 0.015625 (2^-6, exact).
    t.deepEqual(
      decodeView(messageNamed(db, 'BREMSE_33'), [0x34, 0x12, 0x00, 0x01, 0xff, 0xff, 0x40, 0x06]),
      {
        whlspeed_FL: { raw: 0x1234, value: 72.8125 }, // 4660 / 64
        whlspeed_FR: { raw: 0x0100, value: 4 }, // 256 / 64
        whlspeed_RL: { raw: 0xffff, value: 1023.984375 }, // 65535 / 64
        whlspeed_RR: { raw: 0x0640, value: 25 }, // 1600 / 64
      },
    );

    // MM5_10_TX1: Yaw_Rate bits 0–15 = 0x8000 = 32768; AY1 bits 32–47 = 0x0000.
    t.deepEqual(decodeView(messageNamed(db, 'MM5_10_TX1'), [0x00, 0x80, 0, 0, 0, 0, 0, 0]), {
      Yaw_Rate: { raw: 32768, value: 32768 * 0.005 - 163.84 },
      AY1: { raw: 0, value: -4.1768 },
    });

    // BREMSE_53: byte 0 SwitchPosition = 5; bytes 1–2 P_FA = 0xFC18 = 64536, signed 16 bit:
    // 64536 − 65536 = −1000. Byte 3 = 0xAD = 1010 1101: bit 24 BLS = 1, bits 26–27 cnt = 11b = 3,
    // bit 28 = 0, bit 29 ABS_Active = 1, bit 30 = 0, bit 31 ABS_Lamp = 1. Byte 4 = 0x24 =
    // 00 10 01 00: Diag_FL = 0, Diag_FR = 1, Diag_RL = 2, Diag_RR = 0. Byte 5 = 0x81 = 1000 0001:
    // bit 40 Diag_ABSUnit = 1, bits 46–47 ABS_fault_info = 10b = 2. Bytes 6–7 P_RA = 0x03E8 = 1000.
    t.deepEqual(
      decodeView(messageNamed(db, 'BREMSE_53'), [0x05, 0x18, 0xfc, 0xad, 0x24, 0x81, 0xe8, 0x03]),
      {
        SwitchPosition: { raw: 5, value: 5 },
        P_FA: { raw: -1000, value: -1000 * 0.01526 },
        BLS: { raw: 1, value: 1 },
        Bremse_53_cnt: { raw: 3, value: 3 },
        ABS_Malfunction: { raw: 0, value: 0 },
        ABS_Active: { raw: 1, value: 1 },
        EBD_Lamp: { raw: 0, value: 0 },
        ABS_Lamp: { raw: 1, value: 1 },
        Diag_FL: { raw: 0, value: 0, valueText: 'Signal ok' },
        Diag_FR: { raw: 1, value: 1, valueText: 'Line error' },
        Diag_RL: { raw: 2, value: 2, valueText: 'Signal error' },
        Diag_RR: { raw: 0, value: 0, valueText: 'Signal ok' },
        Diag_ABSUnit: { raw: 1, value: 1 },
        Diag_FuseValve: { raw: 0, value: 0 },
        Diag_FusePump: { raw: 0, value: 0 },
        Diag_P_FA: { raw: 0, value: 0 },
        Diag_P_RA: { raw: 0, value: 0 },
        Diag_YRS: { raw: 0, value: 0 },
        ABS_fault_info: { raw: 2, value: 2, valueText: 'active faults stored' },
        P_RA: { raw: 1000, value: 1000 * 0.01526 },
      },
    );

    // BREMSE_52 is multiplexed by byte 0. Value 7: HU_date_* in bytes 1–3, Ecu_serial in bytes
    // 4–7 (0x12345678); the signals of values 1–6 are absent.
    const hu = decodeView(
      messageNamed(db, 'BREMSE_52'),
      [0x07, 0x19, 0x0c, 0x1f, 0x78, 0x56, 0x34, 0x12],
    );
    t.deepEqual(hu.Mplx_SW_Info, { raw: 7, value: 7 });
    t.deepEqual(hu.HU_date_year, { raw: 25, value: 25 });
    t.deepEqual(hu.HU_date_month, { raw: 12, value: 12 });
    t.deepEqual(hu.HU_date_day, { raw: 31, value: 31 });
    t.deepEqual(hu.Ecu_serial, { raw: 0x12345678, value: 305419896 });
    t.is(hu.SW_version_High_upper, 'inactive');
    t.is(hu.BB_dig1, 'inactive');
    t.is(hu.SW_CAN_ident, 'inactive');
    // Value 2: BB_dig1..7 are bytes 1–7 ("ASCII" digits); HU_date_* are absent.
    const bb = decodeView(
      messageNamed(db, 'BREMSE_52'),
      [2, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37],
    );
    t.deepEqual(bb.BB_dig1, { raw: 0x31, value: 49 });
    t.deepEqual(bb.BB_dig7, { raw: 0x37, value: 55 });
    t.is(bb.HU_date_year, 'inactive');
    t.is(bb.Ecu_serial, 'inactive');
  },

  'big_numbers.dbc': (t, db) => {
    // 2147483705 = 0x80000039: bit 31 marks an extended frame with identifier 0x39 = 57.
    const the = messageNamed(db, 'TheMessage');
    t.is(the.id, 57);
    t.true(the.extended);
    t.is(the.cycleTimeMs, 1000);
    t.is(the.attributes.get('TheFloatAttribute'), 58.7);
    t.is(the.attributes.get('TheHexAttribute'), 5);
    // GenMsgSendType is an ENUM: index 0 is its first label.
    t.is(the.attributes.get('GenMsgSendType'), 'Cyclic');
    const signal = the.signals[0];
    t.is(signal?.attributes.get('TheSignalStringAttribute'), 'TestString');
    t.is(signal?.attributes.get('GenSigSendType'), 'OnWrite');
    t.is(signal?.startValue, 0);
    t.is(db.attributes.get('TheNetworkAttribute'), 51);
    t.is(db.attributes.get('BusType'), 'CAN');
    t.deepEqual(db.nodes, [
      {
        name: 'TheNode',
        comment: 'TheNodeComment',
        attributes: new Map([['TheNodeAttribute', 99]]),
      },
    ]);
    const nodeAttribute = db.attributeDefinitions.get('TheNodeAttribute');
    t.is(nodeAttribute?.minimum, -9.22337203685478e18);
    t.is(nodeAttribute?.maximum, 1.84467440737096e19);
    t.is(nodeAttribute?.defaultValue, 100);
    t.is(
      db.attributeDefinitions.get('TheUnusedAttributeDefinitionWithoutDefault')?.defaultValue,
      undefined,
    );
    t.is(messageNamed(db, 'TheOtherMessage').cycleTimeMs, undefined);

    // TheSignal: bits 0–7 signed; 0x85 = 133 → 133 − 256 = −123.
    t.deepEqual(decodeView(the, [0x85, 0, 0, 0, 0, 0, 0, 0]), {
      TheSignal: { raw: -123, value: -123 },
    });
    t.deepEqual(decodeView(messageNamed(db, 'TheOtherMessage'), [0x7f, 0, 0, 0, 0, 0, 0, 0]), {
      TheSignal: { raw: 127, value: 127 },
    });
    const decoders = compileDatabaseDecoders(db);
    t.is(decoders.get(57, true)?.message.name, 'TheMessage');
    t.is(decoders.get(57, false), undefined);
    t.is(decoders.get(42, false)?.message.name, 'TheOtherMessage');
  },

  'choices.dbc': (t, db) => {
    const foo = messageNamed(db, 'Foo');
    // Bits 0–7 signed. 0xFB = 251 → 251 − 256 = −5, labelled by VAL_ −5.
    t.deepEqual(decodeView(foo, [0xfb, 0, 0, 0, 0, 0, 0, 0]), {
      Foo: { raw: -5, value: -5, valueText: 'A negative value' },
    });
    // Label 1 holds the Windows-1252 byte 0xE4, "ä".
    t.deepEqual(decodeView(foo, [0x01, 0, 0, 0, 0, 0, 0, 0]), {
      Foo: { raw: 1, value: 1, valueText: "#%=*\u00e4'" },
    });
    t.deepEqual(decodeView(foo, [0x00, 0, 0, 0, 0, 0, 0, 0]), {
      Foo: { raw: 0, value: 0, valueText: 'With space' },
    });
    // 7 has no label.
    t.deepEqual(decodeView(foo, [0x07, 0, 0, 0, 0, 0, 0, 0]), { Foo: { raw: 7, value: 7 } });
    t.is(db.valueTables.get('Bar')?.get(-5), 'A negative value');
    t.is(db.valueTables.get('Bar')?.size, 8);
  },

  'fd_test.dbc': (t, db) => {
    // VFrameFormat labels: 1 ExtendedCAN, 14 StandardCAN_FD, 15 ExtendedCAN_FD; default
    // StandardCAN. 2147483651 = 0x80000003 and 2147483648 = 0x80000000 are extended.
    const formats = db.messages.map((m) => [m.name, m.id, m.extended, m.fd]);
    t.deepEqual(formats, [
      ['TestMsg_Ex', 3, true, false],
      ['TestMsg_Std', 2, false, false],
      ['TestMsg_FDStd', 1, false, true],
      ['TestMsg_FDEx', 0, true, true],
    ]);
    t.is(messageNamed(db, 'TestMsg_FDStd').attributes.get('VFrameFormat'), 'StandardCAN_FD');
    const decoders = compileDatabaseDecoders(db);
    // Extended 0 and standard 0 are different frames; only the extended one is defined.
    t.is(decoders.get(0, true)?.message.name, 'TestMsg_FDEx');
    t.is(decoders.get(0, false), undefined);
    // Bits 0–7 signed: 0xFF → −1, 0x80 → −128, 0x7F → 127.
    t.deepEqual(decodeView(messageNamed(db, 'TestMsg_FDEx'), [0xff, 0, 0, 0, 0, 0, 0, 0]), {
      TestSig: { raw: -1, value: -1 },
    });
    t.deepEqual(decodeView(messageNamed(db, 'TestMsg_FDStd'), [0x80, 0, 0, 0, 0, 0, 0, 0]), {
      TestSig_Copy_2: { raw: -128, value: -128 },
    });
    t.deepEqual(decodeView(messageNamed(db, 'TestMsg_Std'), [0x7f, 0, 0, 0, 0, 0, 0, 0]), {
      TestSig_Copy_3: { raw: 127, value: 127 },
    });
    t.deepEqual(decodeView(messageNamed(db, 'TestMsg_Ex'), [0x01, 0, 0, 0, 0, 0, 0, 0]), {
      TestSig_Copy_1: { raw: 1, value: 1 },
    });
  },

  'floating_point.dbc': (t, db) => {
    const message1 = messageNamed(db, 'Message1');
    const message2 = messageNamed(db, 'Message2');
    t.is(message1.signals[0]?.valueType, 'float64');
    t.deepEqual(
      message2.signals.map((s) => s.valueType),
      ['float32', 'float32'],
    );
    // −2.25 as IEEE double: sign 1, exponent 1023 + 1 = 0x400, fraction 0.125 = 2^49 →
    // 0xC002000000000000, Intel (little-endian) bytes 00 00 00 00 00 00 02 C0.
    t.deepEqual(decodeView(message1, [0, 0, 0, 0, 0, 0, 0x02, 0xc0]), {
      Signal1: { raw: -2.25, value: -2.25 },
    });
    // 1.5 = 0x3FF8000000000000.
    t.deepEqual(decodeView(message1, [0, 0, 0, 0, 0, 0, 0xf8, 0x3f]), {
      Signal1: { raw: 1.5, value: 1.5 },
    });
    // Signal1 bits 0–31: 1.0f = 0x3F800000; Signal2 bits 32–63: −0.5f = 0xBF000000.
    t.deepEqual(decodeView(message2, [0, 0, 0x80, 0x3f, 0, 0, 0, 0xbf]), {
      Signal2: { raw: -0.5, value: -0.5 },
      Signal1: { raw: 1, value: 1 },
    });
    // 0.1f = 0x3DCCCCCD is the float nearest to 0.1: Math.fround(0.1).
    t.deepEqual(decodeView(message2, [0xcd, 0xcc, 0xcc, 0x3d, 0, 0, 0x80, 0x7f]), {
      // 0x7F800000 is +Infinity.
      Signal2: { raw: Number.POSITIVE_INFINITY, value: Number.POSITIVE_INFINITY },
      Signal1: { raw: Math.fround(0.1), value: Math.fround(0.1) },
    });
  },

  'issue_184_extended_mux_cascaded.dbc': (t, db) => {
    // MUX_A (bits 0–7) selects muxed_A_1 (1) or the second multiplexer muxed_A_2_MUX_B (2),
    // both bits 8–15; MUX_B selects muxed_B_0 (0, bits 16–23) or muxed_B_1 (1, bits 24–31).
    // Every signal is signed 8-bit.
    const message = messageNamed(db, 'ext_MUX_cascaded');
    t.is(message.id, 1);
    t.true(message.extended);
    // MUX_A = 1: muxed_A_1 = 0xFE → −2; the B level is absent with its multiplexer.
    t.deepEqual(decodeView(message, [0x01, 0xfe, 0x11, 0x22, 0, 0, 0, 0]), {
      muxed_B_1: 'inactive',
      muxed_B_0: 'inactive',
      muxed_A_2_MUX_B: 'inactive',
      muxed_A_1: { raw: -2, value: -2 },
      MUX_A: { raw: 1, value: 1 },
    });
    // MUX_A = 2, MUX_B = 0: muxed_B_0 = 0x05.
    t.deepEqual(decodeView(message, [0x02, 0x00, 0x05, 0xf0, 0, 0, 0, 0]), {
      muxed_B_1: 'inactive',
      muxed_B_0: { raw: 5, value: 5 },
      muxed_A_2_MUX_B: { raw: 0, value: 0 },
      muxed_A_1: 'inactive',
      MUX_A: { raw: 2, value: 2 },
    });
    // MUX_A = 2, MUX_B = 1: muxed_B_1 = 0xF0 = 240 → −16.
    t.deepEqual(decodeView(message, [0x02, 0x01, 0x05, 0xf0, 0, 0, 0, 0]), {
      muxed_B_1: { raw: -16, value: -16 },
      muxed_B_0: 'inactive',
      muxed_A_2_MUX_B: { raw: 1, value: 1 },
      muxed_A_1: 'inactive',
      MUX_A: { raw: 2, value: 2 },
    });
    // MUX_A = 0xFF = −1: nothing is selected.
    t.deepEqual(decodeView(message, [0xff, 0x01, 0x05, 0xf0, 0, 0, 0, 0]), {
      muxed_B_1: 'inactive',
      muxed_B_0: 'inactive',
      muxed_A_2_MUX_B: 'inactive',
      muxed_A_1: 'inactive',
      MUX_A: { raw: -1, value: -1 },
    });
  },

  'issue_636_negative_scaling.dbc': (t, db) => {
    // Temperature: Motorola, MSB at bit 3 = byte 0 bit 3, 12 bits: byte 0 bits 3..0 then byte 1
    // bits 7..0, so raw = (b0 & 0x0F) << 8 | b1. Factor −0.01, offset 4100.
    const message = messageNamed(db, 'ExampleMessage');
    t.is(message.comment, 'Example message');
    const temperature = message.signals[0];
    t.is(temperature?.unit, 'degK');
    t.deepEqual(temperature?.receivers, ['PCM1', 'FOO']);
    t.is(temperature?.startValue, 4094);
    // 0x0F 0xFF → 0xFFF = 4095, labelled Error; 4095 × −0.01 + 4100 ≈ 4059.05.
    t.deepEqual(decodeView(message, [0x0f, 0xff]), {
      Temperature: { raw: 4095, value: 4095 * -0.01 + 4100, valueText: 'Error' },
    });
    // 0xF1 0x2C: the high nibble of byte 0 is not part of the signal → 0x12C = 300 → 4097.
    t.deepEqual(decodeView(message, [0xf1, 0x2c]), {
      Temperature: { raw: 300, value: 300 * -0.01 + 4100 },
    });
    t.is(db.valueTables.get('TempValueTable')?.get(4094), 'Init');
  },

  'j1939.dbc': (t, db) => {
    // 2503213569 − 2^31 = 355729921 = 0x15340201: priority 5, PGN 0x13402, source address 1.
    const message1 = messageNamed(db, 'Message1');
    t.is(message1.id, 0x15340201);
    t.true(message1.extended);
    t.is(message1.sender, 'Node1');
    t.is(message1.attributes.get('VFrameFormat'), 'J1939PG');
    t.is(message1.signals[0]?.attributes.get('SPN'), 500);
    t.deepEqual(message1.signals[0]?.receivers, ['Node2']);
    // 2515537922 − 2^31 = 0x15F01002.
    t.is(messageNamed(db, 'Message2').id, 0x15f01002);
    t.deepEqual(
      db.nodes.map((node) => [node.name, node.attributes.get('NmStationAddress')]),
      [
        ['Node2', 2],
        ['Node1', 1],
      ],
    );
    t.is(db.attributes.get('DBName'), 'foo');
    // Signal1 bits 0–7 signed: 0x9C = 156 → −100.
    t.deepEqual(decodeView(message1, [0x9c, 0, 0, 0, 0, 0, 0, 0]), {
      Signal1: { raw: -100, value: -100 },
    });
    t.deepEqual(decodeView(messageNamed(db, 'Message2'), [0x64, 0, 0, 0, 0, 0, 0, 0]), {
      Signal2: { raw: 100, value: 100 },
    });
    t.is(compileDatabaseDecoders(db).get(0x15f01002, true)?.message.name, 'Message2');
  },

  'message-dlc-zero.dbc': (t, db) => {
    const message = messageNamed(db, 'Message1');
    t.is(message.length, 0);
    t.is(message.id, 1024);
    t.is(message.sender, 'TestNode');
    t.deepEqual(
      db.nodes.map((node) => node.name),
      ['Node', 'TestNode'],
    );
    t.deepEqual(decodeView(message, []), {});
  },

  'motohawk.dbc': (t, db) => {
    // Temperature: Motorola, MSB at bit 0 (byte 0 bit 0), 12 bits: byte 0 bit 0, byte 1 bits
    // 7..0, byte 2 bits 7..5 → raw = (b0 & 1) << 11 | b1 << 3 | b2 >> 5, signed.
    // AverageRadius: Motorola, MSB at byte 0 bit 6, 6 bits → (b0 >> 1) & 0x3F.
    // Enable: byte 0 bit 7.
    const message = messageNamed(db, 'ExampleMessage');
    t.is(message.comment, 'Example message used as template in MotoHawk models.');
    // C0 06 E0: Enable 1; radius (0xC0 >> 1) & 0x3F = 0x20 = 32 → 3.2;
    // temperature 0 << 11 | 6 << 3 | 0xE0 >> 5 = 48 + 7 = 55 → 250.55.
    t.deepEqual(decodeView(message, [0xc0, 0x06, 0xe0, 0, 0, 0, 0, 0]), {
      Temperature: { raw: 55, value: 55 * 0.01 + 250 },
      AverageRadius: { raw: 32, value: 32 * 0.1 },
      Enable: { raw: 1, value: 1, valueText: 'Enabled' },
    });
    // 01 FF E0: temperature 1 << 11 | 0xFF << 3 | 7 = 2048 + 2040 + 7 = 4095 → 12-bit −1 → 249.99.
    t.deepEqual(decodeView(message, [0x01, 0xff, 0xe0, 0, 0, 0, 0, 0]), {
      Temperature: { raw: -1, value: -1 * 0.01 + 250 },
      AverageRadius: { raw: 0, value: 0 },
      Enable: { raw: 0, value: 0, valueText: 'Disabled' },
    });
  },

  'multiplex.dbc': (t, db) => {
    // Multiplexor: bits 2–7 of byte 0 → (b0 >> 2) & 0x3F. SG_MUL_VAL_ gives the m8 signals
    // (BIT_J 18, BIT_C 19, BIT_G 23, BIT_L 24) the values 8, 16 and 24; the m24 signals
    // (BIT_A 26, BIT_K 28, BIT_E 29, BIT_D 32, BIT_B 33, BIT_H 38, BIT_F 39) only 24.
    const message = messageNamed(db, 'Message1');
    t.is(message.id, 0x123456);
    t.deepEqual(message.signals.find((s) => s.name === 'BIT_L')?.multiplexedBy, {
      switchName: 'Multiplexor',
      ranges: [
        [8, 8],
        [16, 16],
        [24, 24],
      ],
    });
    t.is(
      message.signals.find((s) => s.name === 'Multiplexor')?.comment,
      'Defines data content for response messages.',
    );
    const one = { raw: 1, value: 1 };
    const zero = { raw: 0, value: 0 };
    // 0x20 >> 2 = 8. Byte 2 = 0x84: bit 18 (J) and bit 23 (G); byte 3 = 0x01: bit 24 (L).
    t.deepEqual(decodeView(message, [0x20, 0x00, 0x84, 0x01, 0, 0, 0, 0]), {
      BIT_K: 'inactive',
      BIT_D: 'inactive',
      BIT_B: 'inactive',
      BIT_F: 'inactive',
      BIT_H: 'inactive',
      BIT_E: 'inactive',
      BIT_A: 'inactive',
      BIT_L: one,
      BIT_G: one,
      BIT_C: zero,
      BIT_J: one,
      Multiplexor: { raw: 8, value: 8 },
    });
    // 0x63 = 0110 0011 → 0x63 >> 2 = 24 (bits 0–1 are not the multiplexer's). Byte 2 = 0x08:
    // bit 19 (C). Byte 3 = 0x14: bits 26 (A) and 28 (K). Byte 4 = 0x82: bits 33 (B), 39 (F).
    t.deepEqual(decodeView(message, [0x63, 0x00, 0x08, 0x14, 0x82, 0, 0, 0]), {
      BIT_K: one,
      BIT_D: zero,
      BIT_B: one,
      BIT_F: one,
      BIT_H: zero,
      BIT_E: zero,
      BIT_A: one,
      BIT_L: zero,
      BIT_G: zero,
      BIT_C: one,
      BIT_J: zero,
      Multiplexor: { raw: 24, value: 24 },
    });
    // 0x24 >> 2 = 9: no signal has value 9.
    const nine = decodeView(message, [0x24, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    t.deepEqual(
      Object.entries(nine).filter(([, view]) => view !== 'inactive'),
      [['Multiplexor', { raw: 9, value: 9 }]],
    );
  },

  'multiplex_2.dbc': (t, db) => {
    // Shared: S0 (bits 0–3, signed) selects S1 (bits 4–7) for 1 and 3, S2 (bits 8–15) for 2–5.
    const shared = messageNamed(db, 'Shared');
    t.is(shared.id, 0xc02fefe);
    // 0xF3: S0 = 3, S1 = 0xF → 4-bit −1; 3 is in 2–5 too: S2 = 0x80 → −128.
    t.deepEqual(decodeView(shared, [0xf3, 0x80, 0, 0, 0, 0, 0, 0]), {
      S2: { raw: -128, value: -128 },
      S1: { raw: -1, value: -1 },
      S0: { raw: 3, value: 3 },
    });
    t.deepEqual(decodeView(shared, [0x04, 0x05, 0, 0, 0, 0, 0, 0]), {
      S2: { raw: 5, value: 5 },
      S1: 'inactive',
      S0: { raw: 4, value: 4 },
    });
    // 0x0F: S0 = 4-bit −1, in no range.
    t.deepEqual(decodeView(shared, [0x0f, 0x05, 0, 0, 0, 0, 0, 0]), {
      S2: 'inactive',
      S1: 'inactive',
      S0: { raw: -1, value: -1 },
    });

    // Normal: plain mN multiplexing by S0.
    const normal = messageNamed(db, 'Normal');
    t.deepEqual(decodeView(normal, [0x20, 0x7f, 0, 0, 0, 0, 0, 0]), {
      S2: 'inactive',
      S1: { raw: 2, value: 2 },
      S0: { raw: 0, value: 0 },
    });
    t.deepEqual(decodeView(normal, [0x31, 0x7f, 0, 0, 0, 0, 0, 0]), {
      S2: { raw: 127, value: 127 },
      S1: 'inactive',
      S0: { raw: 1, value: 1 },
    });

    // Extended: two top-level multiplexers. S0 (bits 0–3) selects S1 (0, itself a multiplexer,
    // bits 4–7) and S5 (1, bits 4–31); S1 selects S2 (0, bits 8–15), S3 (0, bits 16–31) and S4
    // (2, bits 8–31); S6 (bits 32–39) selects S7 (1, bits 40–63) and S8 (2, bits 40–47).
    const extended = messageNamed(db, 'Extended');
    // 00 FF 34 12 02 85: S0 = 0, S1 = 0, S2 = 0xFF → −1, S3 = 0x1234 = 4660, S6 = 2,
    // S8 = 0x85 = 133 → −123.
    t.deepEqual(decodeView(extended, [0x00, 0xff, 0x34, 0x12, 0x02, 0x85, 0, 0]), {
      S8: { raw: -123, value: -123 },
      S7: 'inactive',
      S6: { raw: 2, value: 2 },
      S5: 'inactive',
      S4: 'inactive',
      S3: { raw: 4660, value: 4660 },
      S2: { raw: -1, value: -1 },
      S1: { raw: 0, value: 0 },
      S0: { raw: 0, value: 0 },
    });
    // 20 01 00 80 01 FF FF 7F: S1 = 2 → S4 = bytes 1–3 = 0x800001 = 8388609 → 24-bit
    // 8388609 − 16777216 = −8388607; S6 = 1 → S7 = bytes 5–7 = 0x7FFFFF = 8388607.
    t.deepEqual(decodeView(extended, [0x20, 0x01, 0x00, 0x80, 0x01, 0xff, 0xff, 0x7f]), {
      S8: 'inactive',
      S7: { raw: 8388607, value: 8388607 },
      S6: { raw: 1, value: 1 },
      S5: 'inactive',
      S4: { raw: -8388607, value: -8388607 },
      S3: 'inactive',
      S2: 'inactive',
      S1: { raw: 2, value: 2 },
      S0: { raw: 0, value: 0 },
    });
    // 11 00 00 80 00: S0 = 1 → S1 and everything it selects are absent; S5 = bits 4–31 =
    // (b0 >> 4) + b1·2^4 + b2·2^12 + b3·2^20 = 1 + 0x80·2^20 = 134217729 ≥ 2^27 → 28-bit
    // 134217729 − 2^28 = −134217727.
    t.deepEqual(decodeView(extended, [0x11, 0x00, 0x00, 0x80, 0x00, 0, 0, 0]), {
      S8: 'inactive',
      S7: 'inactive',
      S6: { raw: 0, value: 0 },
      S5: { raw: -134217727, value: -134217727 },
      S4: 'inactive',
      S3: 'inactive',
      S2: 'inactive',
      S1: 'inactive',
      S0: { raw: 1, value: 1 },
    });

    // ExtendedTypes: S11 (bits 0–4, unsigned) selects S0 (3, bits 8–11) and S9 (5, float32 in
    // bits 24–55); S0 selects S10 (0, float32 in bits 16–47).
    const types = messageNamed(db, 'ExtendedTypes');
    t.is(types.signals.find((s) => s.name === 'S11')?.startValue, 2);
    // 03 00 | 00 00 80 3F: S11 = 3, S0 = 0, S10 = 0x3F800000 = 1.0f.
    t.deepEqual(decodeView(types, [0x03, 0x00, 0x00, 0x00, 0x80, 0x3f, 0, 0]), {
      S9: 'inactive',
      S10: { raw: 1, value: 1 },
      S0: { raw: 0, value: 0 },
      S11: { raw: 3, value: 3 },
    });
    // 05 … bytes 3–6 = 00 00 20 C1: S9 = 0xC1200000 = −1.25 · 2^3 = −10.0f.
    t.deepEqual(decodeView(types, [0x05, 0x00, 0x00, 0x00, 0x00, 0x20, 0xc1, 0x00]), {
      S9: { raw: -10, value: -10 },
      S10: 'inactive',
      S0: 'inactive',
      S11: { raw: 5, value: 5 },
    });
  },

  'multiplex_choices.dbc': (t, db) => {
    // Like multiplex.dbc, with labels on the multiplexer and on BIT_L.
    const message1 = messageNamed(db, 'Message1');
    // 0x20 >> 2 = 8; byte 3 = 0x01: BIT_L (bit 24) = 1 "On".
    const eight = decodeView(message1, [0x20, 0x00, 0x00, 0x01, 0, 0, 0, 0]);
    t.deepEqual(eight.Multiplexor, { raw: 8, value: 8, valueText: 'MULTIPLEXOR_8' });
    t.deepEqual(eight.BIT_L, { raw: 1, value: 1, valueText: 'On' });
    t.deepEqual(eight.BIT_J, { raw: 0, value: 0 });
    t.is(eight.BIT_A, 'inactive');
    // Message2: 0x10 >> 2 = 4, a labelled value that selects no signal.
    const four = decodeView(messageNamed(db, 'Message2'), [0x10, 0xff, 0xff, 0xff, 0xff, 0, 0, 0]);
    t.deepEqual(four.Multiplexor, { raw: 4, value: 4, valueText: 'MULTIPLEXOR_4_NO_SIGNALS' });
    t.deepEqual(
      Object.keys(four).filter((name) => four[name] !== 'inactive'),
      ['Multiplexor'],
    );
    // Message3 has no SG_MUL_VAL_: its m8 signals exist for 8 only, not 16.
    const message3 = messageNamed(db, 'Message3');
    t.deepEqual(decodeView(message3, [0x40, 0x00, 0x84, 0x01, 0, 0, 0, 0]), {
      BIT_L: 'inactive',
      BIT_G: 'inactive',
      BIT_C: 'inactive',
      BIT_J: 'inactive',
      Multiplexor: { raw: 16, value: 16 },
    });
    // 0x20 = 8; byte 2 = 0x84: bits 18 (J) and 23 (G); byte 3 bit 24 (L).
    t.deepEqual(decodeView(message3, [0x20, 0x00, 0x84, 0x01, 0, 0, 0, 0]), {
      BIT_L: { raw: 1, value: 1 },
      BIT_G: { raw: 1, value: 1 },
      BIT_C: { raw: 0, value: 0 },
      BIT_J: { raw: 1, value: 1 },
      Multiplexor: { raw: 8, value: 8 },
    });
  },

  'padding_bit_order.dbc': (t, db) => {
    // MSG0, Motorola: A MSB at byte 0 bit 6, 15 bits → (b0 & 0x7F) << 8 | b1; B byte 0 bit 7;
    // C MSB at byte 4 bit 6 → (b4 & 0x7F) << 8 | b5; D byte 4 bit 7.
    // 82 C9 00 00 02 C9: B = 1, A = 0x02C9 = 713; D = 0, C = 0x02C9.
    t.deepEqual(
      decodeView(messageNamed(db, 'MSG0'), [0x82, 0xc9, 0x00, 0x00, 0x02, 0xc9, 0x00, 0x00]),
      {
        A: { raw: 713, value: 713 },
        B: { raw: 1, value: 1 },
        C: { raw: 713, value: 713 },
        D: { raw: 0, value: 0 },
      },
    );
    // MSG1, Intel: E bit 0, F bits 1–15, G bit 32, H bits 33–47.
    // 93 05: 0x0593 → E = 1, F = 0x0593 >> 1 = 0x2C9; 92 05 at bytes 4–5: G = 0, H = 0x2C9.
    t.deepEqual(
      decodeView(messageNamed(db, 'MSG1'), [0x93, 0x05, 0x00, 0x00, 0x92, 0x05, 0x00, 0x00]),
      {
        E: { raw: 1, value: 1 },
        F: { raw: 713, value: 713 },
        G: { raw: 0, value: 0 },
        H: { raw: 713, value: 713 },
      },
    );
    // MSG2: I bits 0–3, J bits 4–7, K bits 8–11. 0x21 0x03 → I = 1, J = 2, K = 3.
    t.deepEqual(decodeView(messageNamed(db, 'MSG2'), [0x21, 0x03, 0, 0, 0, 0, 0, 0]), {
      I: { raw: 1, value: 1 },
      J: { raw: 2, value: 2 },
      K: { raw: 3, value: 3 },
    });
    // MSG3: L Motorola from byte 0 bit 7, 64 bits: the 8 bytes big-endian, beyond 2^53 → BigInt.
    // Factor 1, offset 0: the exact decimal comes with the nearest double, as for Modbus uint64.
    // 0x0102030405060708 = 72623859790382856; the nearest double is …850 (doubles step by 8 here).
    t.deepEqual(decodeView(messageNamed(db, 'MSG3'), [1, 2, 3, 4, 5, 6, 7, 8]), {
      L: {
        raw: 0x0102030405060708n,
        value: 72623859790382850,
        exactValue: '72623859790382856',
      },
    });
    t.deepEqual(
      decodeView(messageNamed(db, 'MSG3'), [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
      {
        L: { raw: 18446744073709551615n, value: 2 ** 64, exactValue: '18446744073709551615' },
      },
    );
    // MSG4: M Intel from bit 0, 64 bits: the 8 bytes little-endian, 0x0807060504030201 =
    // 578437695752307201; as a double it would read …200 (doubles step by 128 here).
    t.deepEqual(decodeView(messageNamed(db, 'MSG4'), [1, 2, 3, 4, 5, 6, 7, 8]), {
      M: { raw: 578437695752307201n, value: 578437695752307200, exactValue: '578437695752307201' },
    });
  },

  'signed.dbc': (t, db) => {
    const view = (name: string, bytes: number[]) => decodeView(messageNamed(db, name), bytes);
    // s32, Intel bits 0–31: 0x80000000 → −2^31; all ones → −1.
    t.deepEqual(view('Message32', [0, 0, 0, 0x80, 0, 0, 0, 0]), {
      s32: { raw: -2147483648, value: -2147483648 },
    });
    t.deepEqual(view('Message32', [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]), {
      s32: { raw: -1, value: -1 },
    });
    // s33, Intel bits 0–32: only bit 32 (byte 4 bit 0) set → −2^32; byte 4's other bits ignored.
    t.deepEqual(view('Message33', [0, 0, 0, 0, 0xff, 0, 0, 0]), {
      s33: { raw: -4294967296, value: -4294967296 },
    });
    t.deepEqual(view('Message33', [0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0]), {
      s33: { raw: -1, value: -1 },
    });
    // s64, Intel 64 bits, BigInt: all ones → −1; only bit 63 → −2^63.
    t.deepEqual(view('Message64', [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), {
      s64: { raw: -1n, value: -1 },
    });
    t.deepEqual(view('Message64', [0, 0, 0, 0, 0, 0, 0, 0x80]), {
      s64: { raw: -(2n ** 63n), value: -(2 ** 63), exactValue: '-9223372036854775808' },
    });
    // s64big, Motorola from byte 0 bit 7: big-endian 0x8000000000000001 → −2^63 + 1.
    t.deepEqual(view('Message64big', [0x80, 0, 0, 0, 0, 0, 0, 0x01]), {
      s64big: {
        raw: -(2n ** 63n) + 1n,
        value: -(2 ** 63),
        exactValue: '-9223372036854775807',
      },
    });
    // s33big, Motorola from byte 0 bit 7, 33 bits: bytes 0–3 then byte 4 bit 7 →
    // raw = b0·2^25 + b1·2^17 + b2·2^9 + b3·2^1 + (b4 >> 7).
    // 80 00 00 00 00 → 2^32 = sign bit → −2^32. FF FF FF FF 7F → 2^33 − 2 → −2.
    t.deepEqual(view('Message33big', [0x80, 0, 0, 0, 0, 0, 0, 0]), {
      s33big: { raw: -4294967296, value: -4294967296 },
    });
    t.deepEqual(view('Message33big', [0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0]), {
      s33big: { raw: -2, value: -2 },
    });
    // s32big, Motorola bytes 0–3 big-endian: 12 34 56 78 → 0x12345678; FF FF FF FE → −2.
    t.deepEqual(view('Message32big', [0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0]), {
      s32big: { raw: 0x12345678, value: 305419896 },
    });
    t.deepEqual(view('Message32big', [0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0]), {
      s32big: { raw: -2, value: -2 },
    });
    // s63, Intel bits 0–62, BigInt: bit 62 (byte 7 bit 6) → −2^62; byte 7 bit 7 is not part.
    t.deepEqual(view('Message63', [0, 0, 0, 0, 0, 0, 0, 0xc0]), {
      s63: { raw: -(2n ** 62n), value: -(2 ** 62), exactValue: '-4611686018427387904' },
    });
    t.deepEqual(view('Message63', [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]), {
      s63: { raw: -1n, value: -1 },
    });
    // s63big, Motorola from byte 0 bit 7, 63 bits: big-endian 64-bit value >> 1.
    // 7F FF FF FF FF FF FF FE >> 1 = 0x3FFFFFFFFFFFFFFF, the largest 63-bit positive value.
    t.deepEqual(view('Message63big', [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]), {
      s63big: { raw: 2n ** 62n - 1n, value: 2 ** 62, exactValue: '4611686018427387903' },
    });
    // s63 of Message63_1, Intel bits 1–63: little-endian 64-bit value >> 1.
    // 02 00 … → 1; FE FF … FF → 0x7FFFFFFFFFFFFFFF = 63 ones → −1.
    t.deepEqual(view('Message63_1', [0x02, 0, 0, 0, 0, 0, 0, 0]), { s63: { raw: 1n, value: 1 } });
    t.deepEqual(view('Message63_1', [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), {
      s63: { raw: -1n, value: -1 },
    });
    // s63big of Message63big_1, Motorola from byte 0 bit 6: the big-endian value without its top
    // bit. 40 00 … → 2^62 = the sign bit → −2^62; byte 0 bit 7 is not part (C0 reads the same).
    t.deepEqual(view('Message63big_1', [0xc0, 0, 0, 0, 0, 0, 0, 0]), {
      s63big: { raw: -(2n ** 62n), value: -(2 ** 62), exactValue: '-4611686018427387904' },
    });
    // Message378910 packs eight signals into 64 bits:
    //   s7    Intel  bits 1–7             = b0 >> 1
    //   s8big Motor. byte 0 bit 0, byte 1 bits 7–1 = (b0 & 1) << 7 | b1 >> 1
    //   s9    Intel  bits 17–25           = b2 >> 1 | (b3 & 3) << 7
    //   s8    Intel  bits 26–33           = b3 >> 2 | (b4 & 3) << 6
    //   s3    Intel  bits 34–36           = (b4 >> 2) & 7
    //   s3big Motor. byte 4 bits 7–5      = b4 >> 5
    //   s10big Motor. byte 5 bit 0, byte 6, byte 7 bit 7 = (b5 & 1) << 9 | b6 << 1 | b7 >> 7
    //   s7big Motor. byte 7 bits 6–0      = b7 & 0x7F
    // B0 B4 FE 57 87 01 81 F7:
    //   s7 = 0xB0 >> 1 = 88 → 88 − 128 = −40;   s8big = 0 | 0xB4 >> 1 = 90;
    //   s9 = 127 | 3 << 7 = 511 → −1;           s8 = 21 | 3 << 6 = 213 → −43;
    //   s3 = (0x87 >> 2) & 7 = 1;               s3big = 0x87 >> 5 = 4 → −4;
    //   s10big = 512 + 0x81 · 2 + 1 = 771 → 771 − 1024 = −253;   s7big = 0x77 = 119 → −9.
    t.deepEqual(view('Message378910', [0xb0, 0xb4, 0xfe, 0x57, 0x87, 0x01, 0x81, 0xf7]), {
      s3big: { raw: -4, value: -4 },
      s3: { raw: 1, value: 1 },
      s10big: { raw: -253, value: -253 },
      s8big: { raw: 90, value: 90 },
      s7big: { raw: -9, value: -9 },
      s9: { raw: -1, value: -1 },
      s8: { raw: -43, value: -43 },
      s7: { raw: -40, value: -40 },
    });
  },

  'socialledge.dbc': (t, db) => {
    t.deepEqual(
      db.nodes.map((node) => [node.name, node.comment]),
      [
        ['DBG', undefined],
        ['DRIVER', '// The driver controller driving the car //'],
        ['IO', undefined],
        ['MOTOR', 'The motor controller of the car'],
        ['SENSOR', 'The sensor controller of the car'],
      ],
    );
    const heartbeat = messageNamed(db, 'DRIVER_HEARTBEAT');
    t.is(heartbeat.cycleTimeMs, 1000);
    t.is(heartbeat.comment, 'Sync message used to synchronize the controllers');
    t.deepEqual(heartbeat.signals[0]?.receivers, ['SENSOR', 'MOTOR']);
    t.deepEqual(decodeView(heartbeat, [0x02]), {
      DRIVER_HEARTBEAT_cmd: { raw: 2, value: 2, valueText: 'DRIVER_HEARTBEAT_cmd_REBOOT' },
    });
    // IO_DEBUG: 0A → 10; 01 → label one; F6 = 246 → −10; 07 × 0.5 = 3.5.
    t.deepEqual(decodeView(messageNamed(db, 'IO_DEBUG'), [0x0a, 0x01, 0xf6, 0x07]), {
      IO_DEBUG_test_unsigned: { raw: 10, value: 10 },
      IO_DEBUG_test_enum: { raw: 1, value: 1, valueText: 'IO_DEBUG_test2_enum_one' },
      IO_DEBUG_test_signed: { raw: -10, value: -10 },
      IO_DEBUG_test_float: { raw: 7, value: 3.5 },
    });
    // MOTOR_CMD 0x3E: steer bits 0–3 = 0xE → 4-bit −2 → −2 · 1 − 5 = −7; drive bits 4–7 = 3.
    t.deepEqual(decodeView(messageNamed(db, 'MOTOR_CMD'), [0x3e]), {
      MOTOR_CMD_steer: { raw: -2, value: -7 },
      MOTOR_CMD_drive: { raw: 3, value: 3 },
    });
    // MOTOR_STATUS 01 10 27: error 1, speed 0x2710 = 10000 × 0.001.
    t.deepEqual(decodeView(messageNamed(db, 'MOTOR_STATUS'), [0x01, 0x10, 0x27]), {
      MOTOR_STATUS_wheel_error: { raw: 1, value: 1 },
      MOTOR_STATUS_speed_kph: { raw: 10000, value: 10000 * 0.001 },
    });
    // SENSOR_SONARS: mux bits 0–3, err_count bits 4–15, then four 12-bit values at 16, 28, 40,
    // 52 (m0: filtered, m1: unfiltered). 30 12 64 80 0C 2C F1 FF:
    //   mux 0; err_count = 0x30 >> 4 | 0x12 << 4 = 3 + 288 = 0x123 = 291;
    //   left = 0x64 | (0x80 & 0xF) << 8 = 100; middle = 0x80 >> 4 | 0x0C << 4 = 200;
    //   right = 0x2C | (0xF1 & 0xF) << 8 = 300; rear = 0xF1 >> 4 | 0xFF << 4 = 4095.
    const sonars = messageNamed(db, 'SENSOR_SONARS');
    const frame = [0x30, 0x12, 0x64, 0x80, 0x0c, 0x2c, 0xf1, 0xff];
    t.deepEqual(decodeView(sonars, frame), {
      SENSOR_SONARS_mux: { raw: 0, value: 0 },
      SENSOR_SONARS_err_count: { raw: 291, value: 291 },
      SENSOR_SONARS_left: { raw: 100, value: 100 * 0.1 },
      SENSOR_SONARS_middle: { raw: 200, value: 200 * 0.1 },
      SENSOR_SONARS_right: { raw: 300, value: 300 * 0.1 },
      SENSOR_SONARS_rear: { raw: 4095, value: 4095 * 0.1 },
      SENSOR_SONARS_no_filt_left: 'inactive',
      SENSOR_SONARS_no_filt_middle: 'inactive',
      SENSOR_SONARS_no_filt_right: 'inactive',
      SENSOR_SONARS_no_filt_rear: 'inactive',
    });
    // Only 5 bytes received: right (bytes 5–6) and rear (bytes 6–7) cannot be decoded.
    t.deepEqual(decodeView(sonars, [0x31, 0x12, 0x64, 0x80, 0x0c, 0x2c, 0xf1, 0xff], 5), {
      SENSOR_SONARS_mux: { raw: 1, value: 1 },
      SENSOR_SONARS_err_count: { raw: 291, value: 291 },
      SENSOR_SONARS_left: 'inactive',
      SENSOR_SONARS_middle: 'inactive',
      SENSOR_SONARS_right: 'inactive',
      SENSOR_SONARS_rear: 'inactive',
      SENSOR_SONARS_no_filt_left: { raw: 100, value: 100 * 0.1 },
      SENSOR_SONARS_no_filt_middle: { raw: 200, value: 200 * 0.1 },
      SENSOR_SONARS_no_filt_right: 'truncated',
      SENSOR_SONARS_no_filt_rear: 'truncated',
    });
  },

  'test_extended_id_dump.dbc': (t, db) => {
    // 2620009002 − 2^31 = 472525354 = 0x1C2A2A2A.
    t.deepEqual(
      db.messages.map((m) => [m.name, m.id, m.extended]),
      [
        ['SomeFrame', 256, false],
        ['SomeExtFrame', 0x1c2a2a2a, true],
      ],
    );
    const decoders = compileDatabaseDecoders(db);
    const ext = decoders.get(0x1c2a2a2a, true);
    t.is(ext?.message.name, 'SomeExtFrame');
    t.is(decoders.get(0x1c2a2a2a, false), undefined);
    // 0xC8 = 200 → −56.
    t.deepEqual(decodeView(messageNamed(db, 'SomeExtFrame'), [0xc8, 0, 0, 0, 0, 0, 0, 0]), {
      SomeSig: { raw: -56, value: -56 },
    });
    t.deepEqual(decodeView(messageNamed(db, 'SomeFrame'), [0x38, 0, 0, 0, 0, 0, 0, 0]), {
      SomeDifferentSig: { raw: 56, value: 56 },
    });
  },

  'timing.dbc': (t, db) => {
    const foo = messageNamed(db, 'Foo');
    t.is(foo.cycleTimeMs, 200);
    t.is(foo.attributes.get('GenMsgSendType'), 'Cyclic');
    t.is(messageNamed(db, 'Bar').cycleTimeMs, undefined);
    // Foo: Motorola, MSB byte 0 bit 0, 12 bits → (b0 & 1) << 11 | b1 << 3 | b2 >> 5.
    // 00 FA 00 → 0xFA << 3 = 2000 → 2000 × 0.01 + 250 = 270.
    t.deepEqual(decodeView(foo, [0x00, 0xfa, 0x00, 0, 0, 0, 0, 0]), {
      Foo: { raw: 2000, value: 2000 * 0.01 + 250 },
    });
    // 01 F0 A0 → 1 << 11 | 0xF0 << 3 | 0xA0 >> 5 = 2048 + 1920 + 5 = 3973 → 3973 − 4096 = −123.
    t.deepEqual(decodeView(messageNamed(db, 'Bar'), [0x01, 0xf0, 0xa0, 0, 0, 0, 0, 0]), {
      Foo: { raw: -123, value: -123 * 0.01 + 250 },
    });
  },

  'val_table.dbc': (t, db) => {
    t.deepEqual(
      [...db.valueTables].map(([name, labels]) => [name, [...labels]]),
      [
        [
          'Table3',
          [
            [16, '16'],
            [7, '7'],
            [2, '2'],
            [0, '0'],
          ],
        ],
        ['Table2', []],
        [
          'Table1',
          [
            [1, 'One'],
            [0, 'Zero'],
          ],
        ],
      ],
    );
    const message = messageNamed(db, 'Message1');
    t.deepEqual(decodeView(message, [0x01, 0, 0, 0, 0, 0, 0, 0]), {
      Signal1: { raw: 1, value: 1, valueText: 'One' },
    });
    t.deepEqual(decodeView(message, [0x02, 0, 0, 0, 0, 0, 0, 0]), {
      Signal1: { raw: 2, value: 2 },
    });
  },

  'variable_dlc.dbc': (t, db) => {
    // 2164195584 − 2^31 = 0xFF0100, 2164195840 − 2^31 = 0xFF0200.
    const message1 = messageNamed(db, 'TestMessage1');
    const message2 = messageNamed(db, 'TestMessage2');
    t.deepEqual([message1.id, message1.extended, message1.length], [0xff0100, true, 3]);
    t.deepEqual([message2.id, message2.length, message2.fd], [0xff0200, 10, true]);
    t.deepEqual(decodeView(message1, [0x01, 0x02, 0x03]), {
      Signal1: { raw: 1, value: 1 },
      Signal2: { raw: 2, value: 2 },
      Signal3: { raw: 3, value: 3 },
    });
    // Two bytes received: Signal3 (byte 2) cannot be decoded.
    t.deepEqual(decodeView(message1, [0x01, 0x02]), {
      Signal1: { raw: 1, value: 1 },
      Signal2: { raw: 2, value: 2 },
      Signal3: 'truncated',
    });
    // TestMessage2: five 15-bit Intel fields at 0, 15, 30, 45, 60 holding 1, 2, 3, 4, 5:
    // bit 0; bit 16 (2 << 15); bits 30, 31 (3 << 30); bit 47 (4 << 45); bits 60, 62 (5 << 60)
    // → bytes 01 00 01 C0 00 80 00 50 00 00.
    const frame = [0x01, 0x00, 0x01, 0xc0, 0x00, 0x80, 0x00, 0x50, 0x00, 0x00];
    t.deepEqual(decodeView(message2, frame), {
      Signal4: { raw: 1, value: 1 },
      Signal5: { raw: 2, value: 2 },
      Signal6: { raw: 3, value: 3 },
      Signal7: { raw: 4, value: 4 },
      Signal8: { raw: 5, value: 5 },
    });
    // A classic 8-byte frame: Signal8 (bits 60–74, bytes 7–9) is cut off.
    t.deepEqual(decodeView(message2, frame.slice(0, 8)), {
      Signal4: { raw: 1, value: 1 },
      Signal5: { raw: 2, value: 2 },
      Signal6: { raw: 3, value: 3 },
      Signal7: { raw: 4, value: 4 },
      Signal8: 'truncated',
    });
  },

  'vehicle.dbc': (t, db) => {
    t.is(db.messages.length, 217);
    t.is(
      db.messages.reduce((count, message) => count + message.signals.length, 0),
      462,
    );
    t.deepEqual(
      db.nodes.map((node) => node.name),
      ['UnusedNode'],
    );
    // 0xB0 in a comment is the degree sign.
    const heading = messageNamed(db, 'RT_SB_INS_Heading_Gradient_2').signals.find(
      (s) => s.name === 'INS_Heading_2',
    );
    t.true(heading?.comment?.includes('0 - 360\u00b0, the direction'));
    const accel = messageNamed(db, 'RT_IMU06_Accel');
    t.is(accel.signals.find((s) => s.name === 'Accel_Lateral')?.startValue, -30000);
    // RT_SB_INS_Vel_Body_Axes (0x9588322, extended): 03 7F 10 27 00 F0 D8 FF →
    // validity bits 0, 1 = 1, 1; accuracy byte 1 = 127; forwards bits 16–39 = 0x002710 = 10000
    // → 1 m/s; sideways bits 40–63 = 0xFFD8F0 = 16767216 → 24-bit −10000 → −1 m/s.
    const body = messageNamed(db, 'RT_SB_INS_Vel_Body_Axes');
    t.is(body.id, 0x9588322);
    t.deepEqual(decodeView(body, [0x03, 0x7f, 0x10, 0x27, 0x00, 0xf0, 0xd8, 0xff]), {
      INS_Vel_Sideways_2D: { raw: -10000, value: -10000 * 0.0001 },
      INS_Vel_Forwards_2D: { raw: 10000, value: 10000 * 0.0001 },
      Accuracy_INS_Vel_Body: { raw: 127, value: 127 },
      Validity_INS_Vel_Sideways: { raw: 1, value: 1 },
      Validity_INS_Vel_Forwards: { raw: 1, value: 1 },
    });
    // Analog_32, Motorola from byte 0 bit 7, 16 bits: 12 34 → 0x1234 = 4660 → 4.66.
    t.deepEqual(decodeView(messageNamed(db, 'RT_DL1MK3_Analog_32'), [0x12, 0x34]), {
      Analog_32: { raw: 4660, value: 4660 * 0.001 },
    });
    t.deepEqual(decodeView(messageNamed(db, 'RT_SB_INS_Status'), [2, 0, 0, 0, 0, 0, 0, 0]), {
      INS_Status: { raw: 2, value: 2, valueText: 'Converged' },
    });
  },
};

/** Fixtures the parser must refuse, with the checks of the error. */
const refused: Record<string, (t: ExecutionContext) => void> = {
  'cp1252.dbc': (t) => {
    // No messages to decode: the file exists to test the text encoding. As it is, tagd refuses
    // it (a bus database without a message decodes nothing); with one message added, its
    // comment holds the bytes 0x20–0x7F except the quote 0x22, then 0x80–0xFF except the five
    // bytes Windows-1252 leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D).
    const error = t.throws(() => loadDbcFixture('cp1252.dbc'), { instanceOf: DbcParseError });
    t.regex(error.message, /^cp1252\.dbc:\d+:1: the file defines no message \(BO_\)/);
    const bytes = Buffer.concat([readDbcFixture('cp1252.dbc'), Buffer.from('BO_ 1 M: 8 Node1\n')]);
    const db = parseDbc(bytes, 'cp1252.dbc');
    t.is(db.messages.length, 1);
    let expected = '';
    for (let byte = 0x20; byte <= 0x7f; byte++) {
      if (byte !== 0x22) expected += String.fromCharCode(byte);
    }
    for (let byte = 0x80; byte <= 0x9f; byte++) expected += cp1252High[byte] ?? '';
    // 0xA0–0xFF coincide with Unicode U+00A0–U+00FF.
    for (let byte = 0xa0; byte <= 0xff; byte++) expected += String.fromCharCode(byte);
    t.is(db.nodes[0]?.comment, expected);
    t.is(db.nodes[0]?.comment?.length, 95 + 27 + 96);
  },
  'bad_message_length.dbc': (t) => {
    // Signal1 is bit 8 of a 1-byte message (bits 0–7): the file is refused, naming both.
    const error = t.throws(() => loadDbcFixture('bad_message_length.dbc'), {
      instanceOf: DbcParseError,
    });
    t.is(error.code, 'dbc-invalid');
    t.is(error.status, 400);
    t.is(error.file, 'bad_message_length.dbc');
    t.is(error.line, 40);
    t.is(error.column, 6);
    t.is(error.messageName, 'Message1');
    t.is(error.signalName, 'Signal1');
    t.is(
      error.message,
      "bad_message_length.dbc:40:6: Signal 'Signal1' of message 'Message1' does not fit the " +
        'message: 1 bit from start bit 8 (Intel) reaches beyond its 1 byte (8 bits).',
    );
  },
};

test('a check exists for every fixture file', (t) => {
  t.deepEqual([...Object.keys(checks), ...Object.keys(refused)].sort(), dbcFixtureNames());
});

for (const [name, check] of Object.entries(checks)) {
  test(`fixture ${name}`, (t) => {
    const database = loadDbcFixture(name);
    t.is(database.file, name);
    check(t, database);
  });
}

for (const [name, check] of Object.entries(refused)) {
  test(`fixture ${name} is refused`, check);
}

test('the fixtures are read as bytes, not as UTF-8 text', (t) => {
  // Windows-1252 0xB0 would be an invalid UTF-8 sequence; read as bytes it is '°'.
  const bytes = readDbcFixture('abs.dbc');
  t.true(bytes.includes(0xb0));
  t.false(bytes.toString('latin1').includes('\ufffd'));
});
