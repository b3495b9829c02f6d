import test from 'ava';
import type { Sample } from '../../src/console/web/api-types.js';
import {
  dataTypeOf,
  driverOf,
  matchesSearch,
  tableRows,
} from '../../src/console/web/tag-table-rows.js';

const tags: Sample[] = [
  {
    fullTagId: 'Demo/Line1/Temperature',
    utcTimestamp: '2026-11-27T10:00:03Z',
    quality: 'Good',
    value: 61.5,
    metadata: { unit: '°C', description: 'Oven zone 1' },
  },
  {
    fullTagId: 'Demo/Line1/Pressure',
    utcTimestamp: '2026-11-27T10:00:01Z',
    quality: 'Stale',
    value: 4.2,
    metadata: { unit: 'bar' },
  },
  {
    fullTagId: 'Demo/Line1/Pump',
    utcTimestamp: '2026-11-27T10:00:02Z',
    quality: 'Good',
    value: true,
  },
  {
    fullTagId: 'Boiler/Link',
    utcTimestamp: '2026-11-27T10:00:00Z',
    quality: 'Unavailable',
    metadata: { source: 'modbus:10.0.0.5:502/1/HR9' },
  },
  {
    fullTagId: 'Demo/Line1/State',
    utcTimestamp: '2026-11-27T10:00:04Z',
    quality: 'Good',
    value: 'Running',
  },
];
const samples = new Map(tags.map((sample) => [sample.fullTagId, sample]));
const paths = tags.map((sample) => sample.fullTagId).sort();

test('search by path, unit and description, every word', (t) => {
  t.deepEqual(tableRows(paths, samples, 'bar', 'path', 'ascending'), ['Demo/Line1/Pressure']);
  t.deepEqual(tableRows(paths, samples, 'OVEN', 'path', 'ascending'), ['Demo/Line1/Temperature']);
  t.deepEqual(tableRows(paths, samples, 'line1 °c', 'path', 'ascending'), [
    'Demo/Line1/Temperature',
  ]);
  t.is(tableRows(paths, samples, '  ', 'path', 'ascending').length, 5);
  t.false(matchesSearch('A/b', undefined, 'x'));
});

test('each column sorts; tags without a value for it come last', (t) => {
  t.deepEqual(tableRows(paths, samples, '', 'value', 'ascending'), [
    'Demo/Line1/Pump',
    'Demo/Line1/Pressure',
    'Demo/Line1/Temperature',
    'Demo/Line1/State',
    'Boiler/Link',
  ]);
  t.deepEqual(tableRows(paths, samples, '', 'value', 'descending').at(-1), 'Boiler/Link');
  t.deepEqual(tableRows(paths, samples, '', 'timestamp', 'descending')[0], 'Demo/Line1/State');
  t.deepEqual(tableRows(paths, samples, '', 'quality', 'descending').slice(0, 2), [
    'Boiler/Link',
    'Demo/Line1/Pressure',
  ]);
  t.deepEqual(
    tableRows(paths, samples, '', 'unit', 'ascending').slice(0, 2),
    ['Demo/Line1/Temperature', 'Demo/Line1/Pressure'].sort((a, b) =>
      (samples.get(a)?.metadata?.unit ?? '').localeCompare(samples.get(b)?.metadata?.unit ?? ''),
    ),
  );
  t.deepEqual(tableRows(paths, samples, '', 'address', 'ascending')[0], 'Boiler/Link');
  t.deepEqual(tableRows(paths, samples, '', 'driver', 'descending')[0], 'Demo/Line1/Pressure');
  t.deepEqual(tableRows(paths, samples, '', 'dataType', 'ascending'), [
    'Demo/Line1/Pump',
    'Demo/Line1/Pressure',
    'Demo/Line1/Temperature',
    'Demo/Line1/State',
    'Boiler/Link',
  ]);
});

test('data type and driver', (t) => {
  t.deepEqual(
    tags.map((sample) => dataTypeOf(sample)),
    ['Number', 'Number', 'Boolean', '', 'Text'],
  );
  t.is(driverOf('Demo/Line1/Temperature'), 'Demo');
  t.is(driverOf('Solo'), 'Solo');
});
