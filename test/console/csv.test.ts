import test from 'ava';
import { csvField, currentValuesCsv, historyCsv } from '../../src/console/web/csv.js';

test('fields follow RFC 4180 and formula-like text is defused as the server does', (t) => {
  t.is(csvField('plain'), 'plain');
  t.is(csvField('a,b'), '"a,b"');
  t.is(csvField('say "hi"'), '"say ""hi"""');
  t.is(csvField('two\nlines'), '"two\nlines"');
  t.is(csvField('=HYPERLINK("http://x")'), `"'=HYPERLINK(""http://x"")"`);
  for (const lead of ['+', '-', '@', '\t', '\r'])
    t.true(csvField(`${lead}1`).includes(`'${lead}1`));
  // Numbers stay numbers, negative ones too; booleans as words; nothing is empty.
  t.is(csvField(-4.5), '-4.5');
  t.is(csvField(true), 'true');
  t.is(csvField(undefined), '');
  t.is(csvField(Number.NaN), '');
});

test('current values: a header, one CRLF line per tag', (t) => {
  const text = currentValuesCsv([
    {
      fullTagId: 'Demo/Line1/Temperature',
      utcTimestamp: '2026-11-27T10:00:00.000Z',
      quality: 'Good',
      value: 61.5,
      metadata: { unit: '°C', description: 'Oven, zone 1', source: 'modbus:10.0.0.5:502/1/HR100' },
    },
    {
      fullTagId: 'Demo/Line1/State',
      utcTimestamp: '2026-11-27T10:00:01.000Z',
      quality: 'Unavailable',
      reason: 'Disconnected',
    },
  ]);
  t.is(
    text,
    'path,value,label,unit,quality,timestamp,dataType,driver,address,description,reason\r\n' +
      'Demo/Line1/Temperature,61.5,,°C,Good,2026-11-27T10:00:00.000Z,Number,Demo,modbus:10.0.0.5:502/1/HR100,"Oven, zone 1",\r\n' +
      'Demo/Line1/State,,,,Unavailable,2026-11-27T10:00:01.000Z,,Demo,,,Disconnected\r\n',
  );
});

test('history rows say which series they are', (t) => {
  t.is(
    historyCsv([
      {
        utcTimestamp: '2026-11-27T10:00:00.000Z',
        path: 'A/b',
        value: -1,
        unit: 'bar',
        quality: 'Good',
        series: 'avg 1m',
      },
    ]),
    'time,path,value,unit,quality,series\r\n2026-11-27T10:00:00.000Z,A/b,-1,bar,Good,avg 1m\r\n',
  );
});

test('a 64-bit integer beyond 2^53 is written exactly; an enumeration keeps its label beside the value', (t) => {
  const text = currentValuesCsv([
    {
      fullTagId: 'Can/Odometer',
      utcTimestamp: '2026-11-27T10:00:00.000Z',
      quality: 'Good',
      value: 18446744073709552000,
      metadata: { valueText: '18446744073709551615' },
    },
    {
      fullTagId: 'Can/Gear',
      utcTimestamp: '2026-11-27T10:00:00.000Z',
      quality: 'Good',
      value: -1,
      metadata: { valueText: '-Reverse' },
    },
  ]);
  const [, odometer, gear] = text.split('\r\n');
  t.is(odometer?.split(',').slice(0, 3).join(','), 'Can/Odometer,18446744073709551615,');
  t.is(gear?.split(',').slice(0, 3).join(','), "Can/Gear,-1,'-Reverse");
});
