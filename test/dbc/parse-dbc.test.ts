import test from 'ava';
import { DbcParseError } from '../../src/dbc/dbc-error.js';
import { parseDbc, parseDbcText } from '../../src/dbc/parse-dbc.js';
import { TagdError } from '../../src/errors.js';
import { messageNamed } from '../helpers/dbc.js';

/** A DBC using every section the parser reads, and a few it skips, with CRLF line ends. */
const complete = [
  'VERSION "1.2"',
  '',
  'NS_ :',
  '\tNS_DESC_',
  '\tCM_',
  '\tBA_DEF_',
  '\tSG_MUL_VAL_',
  '',
  'BS_: 500 : 12,34',
  '',
  'BU_: Engine Gateway Dash',
  'VAL_TABLE_ Gears 2 "Second" 1 "First" 0 "Neutral" -1 "Reverse" ;',
  '',
  '// A comment line, then a message with a standard identifier.',
  'BO_ 291 EngineData: 8 Engine',
  ' SG_ Speed : 0|16@1+ (0.25,0) [0|16383.75] "rpm" Gateway,Dash',
  ' SG_ Temp : 23|12@0- (0.1,-40) [-40|215] "degC"  Vector__XXX',
  ' SG_ Gear : 24|4@1- (1,0) [-1|2] "" Dash',
  ' SG_ Ratio : 32|32@1+ (1,0) [0|0] "" Dash',
  '',
  'BO_ 2364540158 Diag: 64 Gateway',
  ' SG_ Page M : 0|8@1+ (1,0) [0|255] "" Dash',
  ' SG_ Counter m1 : 8|8@1+ (1,0) [0|255] "" Dash',
  ' SG_ Level m2M : 8|8@1+ (1,0) [0|255] "" Dash',
  ' SG_ Detail m0 : 504|8@1+ (1,0) [0|255] "" Dash',
  '',
  'BO_ 3221225472 VECTOR__INDEPENDENT_SIG_MSG: 0 Vector__XXX',
  ' SG_ Orphan : 0|8@1+ (1,0) [0|0] "" Vector__XXX',
  '',
  'BO_TX_BU_ 2364540158 : Gateway,Engine;',
  '',
  'EV_ Env1: 0 [0|100] "" 0 1 DUMMY_NODE_VECTOR0 Vector__XXX;',
  'FOO_UNKNOWN_SECTION 1 2 "three" ;',
  '',
  'CM_ "The network.";',
  'CM_ BU_ Engine "Engine control unit";',
  'CM_ BO_ 291 "Engine data,\r\nsent every 10 ms";',
  'CM_ SG_ 291 Speed "Crankshaft \\"speed\\"";',
  'CM_ EV_ Env1 "ignored";',
  'BA_DEF_ BO_  "GenMsgCycleTime" INT 0 65535;',
  'BA_DEF_ SG_  "GenSigStartValue" FLOAT -1e3 1E+3;',
  'BA_DEF_ BO_  "VFrameFormat" ENUM  "StandardCAN","ExtendedCAN","reserved","J1939PG",' +
    '"reserved","reserved","reserved","reserved","reserved","reserved","reserved","reserved",' +
    '"reserved","reserved","StandardCAN_FD","ExtendedCAN_FD";',
  'BA_DEF_ BU_  "NodeAddress" HEX 0 255;',
  'BA_DEF_  "BusType" STRING ;',
  'BA_DEF_ EV_  "EnvAttr" INT 0 1;',
  'BA_DEF_DEF_  "GenMsgCycleTime" 0;',
  'BA_DEF_DEF_  "GenSigStartValue" 0;',
  'BA_DEF_DEF_  "VFrameFormat" "StandardCAN";',
  'BA_DEF_DEF_  "BusType" "CAN";',
  'BA_ "BusType" "CAN FD";',
  'BA_ "NodeAddress" BU_ Engine 17;',
  'BA_ "GenMsgCycleTime" BO_ 291 10;',
  'BA_ "VFrameFormat" BO_ 2364540158 15;',
  'BA_ "GenSigStartValue" SG_ 291 Temp 400.5;',
  'BA_ "EnvAttr" EV_ Env1 1;',
  'BA_DEF_REL_ BU_SG_REL_ "RelAttr" INT 0 1;',
  'VAL_ 291 Gear 2 "Second" 1 "First" 0 "Neutral" -1 "Reverse" ;',
  'VAL_ Env1 0 "Off" 1 "On" ;',
  'SIG_GROUP_ 291 Group1 1 : Speed Temp;',
  'SIG_VALTYPE_ 291 Ratio : 1;',
  'SG_MUL_VAL_ 2364540158 Detail Level 0-0, 4-7;',
  'SG_MUL_VAL_ 2364540158 Level Page 2-2;',
  '',
].join('\r\n');

test('a complete file: network, nodes, tables, attributes', (t) => {
  const db = parseDbcText(complete, 'complete.dbc');
  t.is(db.file, 'complete.dbc');
  t.is(db.version, '1.2');
  t.is(db.comment, 'The network.');
  t.deepEqual(db.nodes, [
    {
      name: 'Engine',
      comment: 'Engine control unit',
      attributes: new Map([['NodeAddress', 17]]),
    },
    { name: 'Gateway', attributes: new Map() },
    { name: 'Dash', attributes: new Map() },
  ]);
  t.deepEqual(
    db.valueTables,
    new Map([
      [
        'Gears',
        new Map([
          [2, 'Second'],
          [1, 'First'],
          [0, 'Neutral'],
          [-1, 'Reverse'],
        ]),
      ],
    ]),
  );
  t.deepEqual(db.attributes, new Map([['BusType', 'CAN FD']]));
  t.deepEqual(db.attributeDefinitions.get('GenSigStartValue'), {
    name: 'GenSigStartValue',
    objectType: 'SG_',
    valueType: 'FLOAT',
    minimum: -1000,
    maximum: 1000,
    enumValues: [],
    defaultValue: 0,
  });
  t.deepEqual(db.attributeDefinitions.get('BusType'), {
    name: 'BusType',
    objectType: '',
    valueType: 'STRING',
    enumValues: [],
    defaultValue: 'CAN',
  });
  t.is(db.attributeDefinitions.get('VFrameFormat')?.enumValues.length, 16);
  t.is(db.attributeDefinitions.get('VFrameFormat')?.defaultValue, 'StandardCAN');
  t.is(db.attributeDefinitions.get('NodeAddress')?.valueType, 'HEX');
  // The pseudo-message of unassigned signals is left out.
  t.deepEqual(
    db.messages.map((message) => message.name),
    ['EngineData', 'Diag'],
  );
});

test('a complete file: messages and signals', (t) => {
  const db = parseDbcText(complete, 'complete.dbc');
  const engine = messageNamed(db, 'EngineData');
  t.like(engine, {
    id: 291,
    extended: false,
    name: 'EngineData',
    length: 8,
    sender: 'Engine',
    transmitters: [],
    comment: 'Engine data,\nsent every 10 ms',
    cycleTimeMs: 10,
    fd: false,
  });
  t.deepEqual(engine.attributes, new Map([['GenMsgCycleTime', 10]]));
  t.deepEqual(engine.signals[0], {
    name: 'Speed',
    startBit: 0,
    length: 16,
    byteOrder: 'little_endian',
    signed: false,
    valueType: 'integer',
    factor: 0.25,
    offset: 0,
    minimum: 0,
    maximum: 16383.75,
    unit: 'rpm',
    receivers: ['Gateway', 'Dash'],
    isMultiplexer: false,
    comment: 'Crankshaft "speed"',
    startValue: 0,
    attributes: new Map(),
  });
  t.deepEqual(engine.signals[1], {
    name: 'Temp',
    startBit: 23,
    length: 12,
    byteOrder: 'big_endian',
    signed: true,
    valueType: 'integer',
    factor: 0.1,
    offset: -40,
    minimum: -40,
    maximum: 215,
    unit: 'degC',
    receivers: [],
    isMultiplexer: false,
    startValue: 400.5,
    attributes: new Map([['GenSigStartValue', 400.5]]),
  });
  t.deepEqual(
    engine.signals[2]?.valueLabels,
    new Map([
      [2, 'Second'],
      [1, 'First'],
      [0, 'Neutral'],
      [-1, 'Reverse'],
    ]),
  );
  t.is(engine.signals[3]?.valueType, 'float32');

  const diag = messageNamed(db, 'Diag');
  // 2364540158 = 0x8CF004FE: bit 31 set, identifier 0x0CF004FE.
  t.like(diag, {
    id: 0x0cf004fe,
    extended: true,
    length: 64,
    sender: 'Gateway',
    transmitters: ['Gateway', 'Engine'],
    fd: true,
  });
  t.is(diag.attributes.get('VFrameFormat'), 'ExtendedCAN_FD');
  t.is(diag.cycleTimeMs, undefined);
  const [page, counter, level, detail] = diag.signals;
  t.true(page?.isMultiplexer);
  t.is(page?.multiplexedBy, undefined);
  t.false(counter?.isMultiplexer);
  t.deepEqual(counter?.multiplexedBy, { switchName: 'Page', ranges: [[1, 1]] });
  t.true(level?.isMultiplexer);
  t.deepEqual(level?.multiplexedBy, { switchName: 'Page', ranges: [[2, 2]] });
  // SG_MUL_VAL_ overrides the m0 of the SG_ line.
  t.deepEqual(detail?.multiplexedBy, {
    switchName: 'Level',
    ranges: [
      [0, 0],
      [4, 7],
    ],
  });
});

test('text is Windows-1252: units, comments and labels', (t) => {
  const head = Buffer.from('BU_: N\r\nBO_ 1 M: 8 N\r\n SG_ S : 0|8@1+ (1,0) [0|0] "', 'latin1');
  // 0xB0 '°', 0x80 '€', 0x8C 'Œ', 0xE9 'é', 0x99 '™'.
  const bytes = Buffer.concat([
    head,
    Buffer.from([0xb0, 0x43]),
    Buffer.from('" N\r\nCM_ SG_ 1 S "', 'latin1'),
    Buffer.from([0x80, 0x20, 0x8c, 0xe9]),
    Buffer.from('";\r\nVAL_ 1 S 1 "', 'latin1'),
    Buffer.from([0x99]),
    Buffer.from('";\r\n', 'latin1'),
  ]);
  const signal = parseDbc(bytes, 'cp.dbc').messages[0]?.signals[0];
  t.is(signal?.unit, '\u00b0C');
  t.is(signal?.comment, '\u20ac \u0152\u00e9');
  t.is(signal?.valueLabels?.get(1), '\u2122');
});

test('a file that defines no message is refused, naming the file: it has nothing to decode', (t) => {
  // The parser skips statements it does not know, so any text file (here the shape of
  // /etc/shadow) parsed as a database without a message, and the CAN driver ran on nothing.
  const cases: [string, string, string][] = [
    ['empty.dbc', '', 'empty.dbc:1:1'],
    [
      'shadow',
      'root:$y$j9T$salt$hash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n',
      'shadow:3:1',
    ],
    ['nodes.dbc', 'VERSION "1"\nNS_ :\nBS_:\nBU_: A B\n', 'nodes.dbc:5:1'],
    [
      'orphans.dbc',
      'BO_ 3221225472 VECTOR__INDEPENDENT_SIG_MSG: 0 Vector__XXX\n SG_ S : 0|8@1+ (1,0) [0|0] "" X\n',
      'orphans.dbc:3:1',
    ],
  ];
  for (const [file, text, where] of cases) {
    const error = t.throws(() => parseDbc(new TextEncoder().encode(text), file), {
      instanceOf: DbcParseError,
    });
    t.is(
      error.message,
      `${where}: the file defines no message (BO_): it is not a DBC file, or one with nothing to decode.`,
      file,
    );
    t.is(error.code, 'dbc-invalid');
  }
});

test('references to unknown messages or signals are ignored', (t) => {
  const db = parseDbcText(
    [
      'BO_ 1 M: 8 N',
      ' SG_ S : 0|8@1+ (1,0) [0|0] "" N',
      'CM_ BO_ 99 "nobody";',
      'CM_ SG_ 1 Missing "nobody";',
      'BA_ "X" BO_ 99 1;',
      'VAL_ 99 S 1 "one";',
      'SIG_VALTYPE_ 1 Missing : 1;',
      'SG_MUL_VAL_ 99 S T 1-1;',
      'BA_ "Undefined" SG_ 1 S 3;',
    ].join('\n'),
    'refs.dbc',
  );
  const signal = db.messages[0]?.signals[0];
  t.is(signal?.comment, undefined);
  t.is(signal?.valueLabels, undefined);
  // An attribute without definition keeps the value as written.
  t.is(signal?.attributes.get('Undefined'), 3);
});

test('Motorola signals fit by their sawtooth extent, not by start + length', (t) => {
  // Start bit 7 (byte 0 bit 7) and 64 bits: exactly bytes 0–7.
  t.notThrows(() => parseDbcText('BO_ 1 M: 8 N\n SG_ S : 7|64@0+ (1,0) [0|0] "" N', 'a.dbc'));
  // Start bit 63 (byte 7 bit 7) and 8 bits: byte 7. An Intel reading (63 + 8) would not fit.
  t.notThrows(() => parseDbcText('BO_ 1 M: 8 N\n SG_ S : 63|8@0+ (1,0) [0|0] "" N', 'b.dbc'));
  // Start bit 56 (byte 7 bit 0) and 2 bits: the second bit would be byte 8.
  const error = t.throws(
    () => parseDbcText('BO_ 1 M: 8 N\n SG_ S : 56|2@0+ (1,0) [0|0] "" N', 'c.dbc'),
    { instanceOf: DbcParseError },
  );
  t.is(
    error.message,
    "c.dbc:2:6: Signal 'S' of message 'M' does not fit the message: 2 bits from start bit 56 " +
      '(Motorola) reach beyond its 8 bytes (64 bits).',
  );
  t.like(error, { messageName: 'M', signalName: 'S', line: 2, column: 6 });
});

test('the error is a TagdError with code dbc-invalid and status 400', (t) => {
  const error = t.throws(() => parseDbcText('BO_ 1 M 8 N', 'x.dbc'), {
    instanceOf: DbcParseError,
  });
  t.true(error instanceof TagdError);
  t.is(error.name, 'DbcParseError');
  t.like(error, {
    code: 'dbc-invalid',
    status: 400,
    file: 'x.dbc',
    line: 1,
    column: 9,
    expected: "':' after the message name",
    found: '8',
  });
  t.is(error.message, "x.dbc:1:9: expected ':' after the message name, found '8'.");
});

/** Malformed files: [name, text, line, column, message after "file:line:column: "]. */
const malformed: [string, string, number, number, string][] = [
  [
    'a number where a statement starts',
    'BU_: A\n42',
    2,
    1,
    "expected a keyword (such as BO_, CM_, BA_ or VAL_) at the start of a statement, found '42'.",
  ],
  [
    'the file ends inside a message',
    'BO_ 1 M:',
    1,
    9,
    'expected the message length in bytes, found the end of the file.',
  ],
  [
    'an unterminated string',
    'BO_ 1 M: 8 N\n SG_ S : 0|8@1+ (1,0) [0|0] "deg\n\n',
    2,
    29,
    "expected a closing '\"' for the string that starts here, found the end of the file.",
  ],
  [
    'a byte order other than 0 or 1',
    'BO_ 1 M: 8 N\n SG_ S : 0|8@2+ (1,0) [0|0] "" N',
    2,
    14,
    "expected the byte order '1' (Intel) or '0' (Motorola) after '@', found '2'.",
  ],
  [
    'a missing sign',
    'BO_ 1 M: 8 N\n SG_ S : 0|8@1 (1,0) [0|0] "" N',
    2,
    16,
    "expected the sign '+' (unsigned) or '-' (signed) after the byte order, found '('.",
  ],
  [
    'a zero-length signal',
    'BO_ 1 M: 8 N\n SG_ S : 0|0@1+ (1,0) [0|0] "" N',
    2,
    12,
    "expected a signal length from 1 to 64 bits, found '0'.",
  ],
  [
    'a 65-bit signal',
    'BO_ 1 M: 9 N\n SG_ S : 0|65@1+ (1,0) [0|0] "" N',
    2,
    12,
    "expected a signal length from 1 to 64 bits, found '65'.",
  ],
  [
    'a message over 64 bytes',
    'BO_ 1 M: 65 N',
    1,
    10,
    "expected a message length of at most 64 bytes, found '65'.",
  ],
  [
    'a standard identifier over 0x7FF',
    'BO_ 2048 M: 8 N',
    1,
    5,
    'expected a standard identifier of at most 0x7FF (2047), or bit 31 set for an extended one, ' +
      "found '2048'.",
  ],
  [
    'an extended identifier over 29 bits',
    'BO_ 2684354560 M: 8 N',
    1,
    5,
    "expected an extended identifier (bit 31 set) of at most 29 bits, found '2684354560'.",
  ],
  [
    'an identifier over 32 bits',
    'BO_ 4294967296 M: 8 N',
    1,
    5,
    "expected the message identifier (at most 4294967295), found '4294967296'.",
  ],
  [
    'a duplicate message name',
    'BO_ 1 M: 8 N\nBO_ 2 M: 8 N',
    2,
    7,
    "expected a message name not used before (line 1), found 'M'.",
  ],
  [
    'a duplicate identifier',
    'BO_ 1 M: 8 N\nBO_ 1 K: 8 N',
    2,
    5,
    "expected an identifier not used by message 'M', found '1'.",
  ],
  [
    'a duplicate signal name',
    'BO_ 1 M: 8 N\n SG_ S : 0|8@1+ (1,0) [0|0] "" N\n SG_ S : 8|8@1+ (1,0) [0|0] "" N',
    3,
    6,
    "expected a signal name not used before in message 'M', found 'S'.",
  ],
  [
    'a signal before any message',
    ' SG_ S : 0|8@1+ (1,0) [0|0] "" N',
    1,
    2,
    "expected a BO_ message before its SG_ signals, found 'SG_'.",
  ],
  [
    'a character that has no place in a signal',
    'BO_ 1 M: 8 N\n SG_ S : 0|8@1+ (1,#) [0|0] "" N',
    2,
    20,
    "expected the offset, found '#'.",
  ],
  [
    'a bad multiplexer indicator',
    'BO_ 1 M: 8 N\n SG_ S x1 : 0|8@1+ (1,0) [0|0] "" N',
    2,
    8,
    "expected a multiplexer indicator ('M', 'm<n>' or 'm<n>M') or ':', found 'x1'.",
  ],
  [
    'a factor that is not finite',
    'BO_ 1 M: 8 N\n SG_ S : 0|8@1+ (1e999,0) [0|0] "" N',
    2,
    18,
    "expected the factor (a finite number), found '1e999'.",
  ],
  [
    'a multiplexed signal without multiplexer',
    'BO_ 1 M: 8 N\n SG_ S m1 : 0|8@1+ (1,0) [0|0] "" N',
    2,
    6,
    "Signal 'S' of message 'M' is multiplexed (m1) but the message has no multiplexer signal ('M').",
  ],
  [
    'SG_MUL_VAL_ naming a multiplexer that does not exist',
    'BO_ 1 M: 8 N\n SG_ A M : 0|8@1+ (1,0) [0|0] "" N\n SG_ B m1 : 8|8@1+ (1,0) [0|0] "" N\n' +
      'SG_MUL_VAL_ 1 B Nope 1-1;',
    4,
    17,
    "expected a multiplexer signal of message 'M', found 'Nope'.",
  ],
  [
    'multiplexers selecting each other',
    'BO_ 1 M: 8 N\n SG_ A m1M : 0|8@1+ (1,0) [0|0] "" N\n SG_ B m1M : 8|8@1+ (1,0) [0|0] "" N\n' +
      'SG_MUL_VAL_ 1 A B 1-1;\nSG_MUL_VAL_ 1 B A 1-1;',
    2,
    6,
    "Signal 'A' of message 'M' is multiplexed by a chain of multiplexers that loops back on itself.",
  ],
  [
    'a multiplexer range whose ends are reversed',
    'BO_ 1 M: 8 N\n SG_ A M : 0|8@1+ (1,0) [0|0] "" N\n SG_ B m1 : 8|8@1+ (1,0) [0|0] "" N\n' +
      'SG_MUL_VAL_ 1 B A 5-2;',
    4,
    19,
    "expected a range whose low end is at most its high end 2, found '5'.",
  ],
  [
    'a float declared on a 16-bit signal',
    'BO_ 1 M: 8 N\n SG_ S : 0|16@1+ (1,0) [0|0] "" N\nSIG_VALTYPE_ 1 S : 1;',
    3,
    16,
    "Signal 'S' of message 'M' is declared an IEEE float (32 bits) but is 16 bits long.",
  ],
  [
    'an unknown value type',
    'BO_ 1 M: 8 N\n SG_ S : 0|16@1+ (1,0) [0|0] "" N\nSIG_VALTYPE_ 1 S : 3;',
    3,
    20,
    "expected the value type (0 integer, 1 float, 2 double), found '3'.",
  ],
  [
    'an attribute definition of unknown type',
    'BA_DEF_ BO_ "X" BOOL;',
    1,
    17,
    "expected the attribute type (INT, HEX, FLOAT, STRING or ENUM), found 'BOOL'.",
  ],
  [
    'a comment without its semicolon',
    'CM_ "text"\nBO_ 1 M: 8 N',
    2,
    1,
    "expected ';' at the end of the comment, found 'BO_'.",
  ],
  [
    'a value label without its text',
    'VAL_TABLE_ T 1 "one" 2 ;',
    1,
    24,
    "expected the label string of the value, found ';'.",
  ],
];

for (const [name, text, line, column, message] of malformed) {
  test(`refused: ${name}`, (t) => {
    const error = t.throws(() => parseDbcText(text, 'bad.dbc'), { instanceOf: DbcParseError });
    t.is(error.message, `bad.dbc:${line}:${column}: ${message}`);
    t.is(error.line, line);
    t.is(error.column, column);
    t.is(error.file, 'bad.dbc');
  });
}

test('an unknown statement is skipped up to its semicolon or the next statement line', (t) => {
  const db = parseDbcText(
    [
      'NEW_THING_ 1 2 { weird # stuff } ;',
      'ANOTHER_ without a semicolon',
      '   continued "on a second line"',
      'BO_ 1 M: 8 N',
      ' SG_ S : 0|8@1+ (1,0) [0|0] "" N',
    ].join('\n'),
    'skip.dbc',
  );
  t.deepEqual(
    db.messages.map((m) => m.signals.map((s) => s.name)),
    [['S']],
  );
});

test('receivers may be separated by commas or spaces, and may be absent', (t) => {
  const db = parseDbcText(
    [
      'BO_ 1 M: 8 N',
      ' SG_ A : 0|8@1+ (1,0) [0|0] "" X, Y',
      ' SG_ B : 8|8@1+ (1,0) [0|0] "" X Y',
      ' SG_ C : 16|8@1+ (1,0) [0|0] ""',
      'BO_ 2 K: 8',
      ' SG_ D : 0|8@1+ (1,0) [0|0] "" Vector__XXX',
    ].join('\n'),
    'receivers.dbc',
  );
  t.deepEqual(
    db.messages.flatMap((m) => m.signals.map((s) => [s.name, s.receivers])),
    [
      ['A', ['X', 'Y']],
      ['B', ['X', 'Y']],
      ['C', []],
      ['D', []],
    ],
  );
  t.is(messageNamed(db, 'K').sender, '');
});

test('the NS_ list ends where a statement begins, even without BS_', (t) => {
  const db = parseDbcText(
    [
      'NS_ : CM_ BA_DEF_',
      '  VAL_TABLE_',
      '  SG_MUL_VAL_',
      'VAL_TABLE_ Gears 0 "N" ;',
      'BU_: A B',
      '  C',
      'NEW_SECTION_ 1 2;',
      'BO_ 1 M: 8 A',
    ].join('\n'),
    'ns.dbc',
  );
  t.deepEqual([...db.valueTables.keys()], ['Gears']);
  t.deepEqual(
    db.nodes.map((node) => node.name),
    ['A', 'B', 'C'],
  );
  t.is(db.messages[0]?.name, 'M');
});
