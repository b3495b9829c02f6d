import test from 'ava';
import {
  csvToTags,
  diffTags,
  mergeImported,
  parseCsv,
  serializeCsv,
  tagsToCsv,
} from '../../src/tags/tag-csv.js';

const modbusTags = [
  {
    name: 'Line1/Temperature',
    table: 'holdingRegister',
    address: 0,
    type: 'float32',
    order: 'CDAB',
    scale: 0.1,
    offset: -40,
    unit: '°C',
    description: 'Oven "A", zone 1',
    writable: true,
    writeMin: 20,
    writeMax: 90,
  },
  {
    name: 'Line1/Running',
    table: 'coil',
    address: 7,
    order: 'ABCD',
    scale: 1,
    offset: 0,
    description: 'two\nlines; and a comma, too',
  },
];

test('a tag list round-trips through CSV: export, import, no change', (t) => {
  const csv = tagsToCsv('modbus', modbusTags);
  t.true(csv.startsWith('name,table,address,type,bit,length,order,unitId,scale,offset,unit,'));
  const read = csvToTags('modbus', csv);
  t.deepEqual(read.problems, []);
  t.deepEqual(read.tags, modbusTags);
  t.deepEqual(read.lines, [2, 3]);
  const diff = diffTags('modbus', modbusTags, read.tags, read.lines);
  t.is(diff.unchanged.length, 2);
  t.deepEqual([diff.added, diff.changed, diff.removed], [[], [], []]);
});

test('fields are quoted per RFC 4180: quotes doubled, delimiters and line breaks inside quotes', (t) => {
  const text = serializeCsv([
    ['a', 'say "hi"', 'x,y', 'two\r\nlines', ' padded', ''],
    ['1', '2', '3', '4', '5', '6'],
  ]);
  t.is(text, 'a,"say ""hi""","x,y","two\r\nlines"," padded",\r\n1,2,3,4,5,6\r\n');
  const parsed = parseCsv(text);
  t.deepEqual(parsed.problems, []);
  t.deepEqual(parsed.records, [
    ['a', 'say "hi"', 'x,y', 'two\r\nlines', ' padded', ''],
    ['1', '2', '3', '4', '5', '6'],
  ]);
  // The second record starts on line 3: the quoted line break is inside record 1.
  t.deepEqual(parsed.lines, [1, 3]);
});

test("Excel's files import: a UTF-8 byte-order mark, semicolons, LF or CRLF, any header case", (t) => {
  const excel =
    '\uFEFFName;Table;Address;Type;Unit\r\nTank/Level;holdingregister;10;FLOAT32;m³\r\n';
  const read = csvToTags('modbus', excel);
  t.deepEqual(read.problems, []);
  t.deepEqual(read.tags, [
    { name: 'Tank/Level', table: 'holdingRegister', address: 10, type: 'float32', unit: 'm³' },
  ]);
  const lf = csvToTags('modbus', 'name,table,address\nA,coil,1\n\nB,coil,2');
  t.deepEqual(lf.problems, []);
  t.deepEqual(
    lf.tags.map((tag) => tag.name),
    ['A', 'B'],
  );
  t.deepEqual(lf.lines, [2, 4]);
});

test('every wrong cell is named with its line and column; nothing is dropped silently', (t) => {
  const csv = [
    'name,table,address,type,scale,writable,colour',
    'A,holdingRegister,1,float32,1.5,true,red',
    'B,register,x,int16,"1,5",maybe,',
    ',coil,3,,,,',
    'A,coil,4,,,,',
    'C,coil,5,,,,,extra',
    'D,"coil"x,6,,,,',
  ].join('\r\n');
  const read = csvToTags('modbus', csv);
  const problems = read.problems.map((problem) => `${problem.line} ${problem.column ?? '-'}`);
  t.deepEqual(problems, [
    '1 colour',
    '3 table',
    '3 address',
    '3 scale',
    '3 writable',
    '4 name',
    '5 name',
    '6 -',
    '7 -',
    '7 table',
  ]);
  t.regex(read.problems[1]?.message ?? '', /'register' is not one of coil, discreteInput/);
  t.regex(read.problems[3]?.message ?? '', /'1,5' is not a number \(use a decimal point/);
  t.is(read.problems[6]?.message, "'A' is on line 2 already.");
});

test('an unclosed quote and a header without name are problems', (t) => {
  t.deepEqual(
    csvToTags('modbus', 'name,table,address\nA,coil,"1\n').problems.map((p) => p.line),
    [2],
  );
  const noName = csvToTags('opcua', 'nodeId\ni=2258\n');
  t.is(noName.problems[0]?.message, 'The header has no name column.');
  t.is(csvToTags('opcua', '').problems[0]?.message, 'The file is empty: it needs a header row.');
  t.throws(() => csvToTags('can', 'name\n'), { message: /no tag list/ });
});

test('the diff names each changed field; defaults equal empty cells; missing tags are removed', (t) => {
  const csv = tagsToCsv('modbus', modbusTags)
    .replace('Line1/Running,coil,7', 'Line1/Running,coil,8')
    .concat('Line1/New,inputRegister,3,,,,,,,,,,,,,,\r\n');
  const read = csvToTags('modbus', csv);
  t.deepEqual(read.problems, []);
  const withoutDefaults = [
    { name: 'Line1/Temperature', ...modbusTags[0] },
    { name: 'Gone', table: 'coil', address: 1 },
  ];
  const diff = diffTags('modbus', withoutDefaults, read.tags, read.lines);
  t.deepEqual(
    diff.added.map((change) => [change.name, change.line]),
    [
      ['Line1/Running', 3],
      ['Line1/New', 5],
    ],
  );
  t.deepEqual(
    diff.removed.map((change) => change.name),
    ['Gone'],
  );
  t.deepEqual(
    diff.unchanged.map((change) => change.name),
    ['Line1/Temperature'],
  );
  const second = diffTags('modbus', modbusTags, read.tags, read.lines);
  t.deepEqual(
    second.changed.map((change) => [change.name, change.fields, change.line]),
    [['Line1/Running', ['address'], 3]],
  );
  // Only four columns: the others (description…) stay as stored; scale 1 is as stored.
  const few = csvToTags('modbus', 'name,table,address,scale\nLine1/Running,coil,7,1\n');
  const fewDiff = diffTags('modbus', modbusTags, few.tags, few.lines, few.columns);
  t.deepEqual(
    fewDiff.unchanged.map((change) => change.name),
    ['Line1/Running'],
  );
  t.deepEqual(
    fewDiff.removed.map((change) => change.name),
    ['Line1/Temperature'],
  );
  const merged = mergeImported('modbus', modbusTags, few.tags, few.columns);
  t.deepEqual(merged, [{ ...modbusTags[1], scale: 1 }]);
  // Without a column list every column counts: the missing description is a change.
  t.deepEqual(diffTags('modbus', modbusTags, few.tags).changed[0]?.fields, ['description']);
});

test('simulator string values are a | list; fields without a column are kept on import', (t) => {
  const read = csvToTags('simulator', 'name,kind,values\nState,string,Idle | Run|Stop\n');
  t.deepEqual(read.tags, [{ name: 'State', kind: 'string', values: ['Idle', 'Run', 'Stop'] }]);
  t.true(tagsToCsv('simulator', read.tags).includes('Idle|Run|Stop'));
  const merged = mergeImported(
    'modbus',
    [{ name: 'A', table: 'coil', address: 1, futureField: 3 }],
    [{ name: 'A', table: 'coil', address: 2 }],
  );
  t.deepEqual(merged, [{ futureField: 3, name: 'A', table: 'coil', address: 2 }]);
});

test('text a spreadsheet would run as a formula is exported with an apostrophe, imported without', (t) => {
  const tags = [
    { name: 'A', table: 'coil', address: 1, description: '=HYPERLINK("http://x")', unit: '-' },
    { name: 'B', table: 'holdingRegister', address: 2, offset: -40, description: "'quoted'" },
  ];
  const csv = tagsToCsv('modbus', tags);
  t.true(csv.includes(`"'=HYPERLINK(""http://x"")"`), csv);
  t.true(csv.includes(",'-,"), 'the unit - too');
  t.true(csv.includes(',-40,'), 'numbers are not text: no apostrophe');
  const read = csvToTags('modbus', csv);
  t.deepEqual(read.problems, []);
  t.deepEqual(
    read.tags.map((tag) => [tag.description, tag.unit, tag.offset]),
    [
      ['=HYPERLINK("http://x")', '-', undefined],
      ["'quoted'", undefined, -40],
    ],
  );
});
