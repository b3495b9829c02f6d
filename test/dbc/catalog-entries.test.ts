import test from 'ava';
import { dbcCatalogEntries } from '../../src/dbc/catalog-entries.js';
import { parseDbcText } from '../../src/dbc/parse-dbc.js';
import { DbcSignalCatalog } from '../../src/tags/dbc-signal-catalog.js';
import { loadDbcFixture } from '../helpers/dbc.js';

test('messages and signals in file order, with the unit only when the DBC has one', (t) => {
  const database = parseDbcText(
    [
      'BO_ 1 Engine: 8 N',
      ' SG_ Speed : 0|16@1+ (1,0) [0|0] "rpm" N',
      ' SG_ Mode : 16|8@1+ (1,0) [0|0] "" N',
      'BO_ 2 Empty: 0 N',
    ].join('\n'),
    'entries.dbc',
  );
  t.deepEqual(dbcCatalogEntries(database), [
    { name: 'Engine', signals: [{ name: 'Speed', unit: 'rpm' }, { name: 'Mode' }] },
    { name: 'Empty', signals: [] },
  ]);
});

test('the entries of a real DBC register in the signal catalog', (t) => {
  const catalog = new DbcSignalCatalog();
  catalog.register('can0', dbcCatalogEntries(loadDbcFixture('abs.dbc')));
  t.deepEqual(catalog.lookup('can0', 'MM5_10_TX1', 'Yaw_Rate'), {
    found: true,
    signal: { name: 'Yaw_Rate', unit: '\u00b0/s' },
    fullTagId: 'can0/MM5_10_TX1/Yaw_Rate',
  });
});
