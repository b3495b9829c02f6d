import test from 'ava';
import { buildTree, visibleRows } from '../../src/console/web/tag-tree.js';

const paths = [
  'Demo/Line1/Temperature',
  'Demo/Line1/Pressure',
  'Demo/Line10/Temperature',
  'Demo/Line2/Temperature',
  'Vehicle/EngineData/Rpm',
  'Top',
];

const shown = (rows: ReturnType<typeof visibleRows>) =>
  rows.map(
    (row) =>
      `${'  '.repeat(row.depth)}${row.kind === 'folder' ? (row.open ? '-' : '+') : ''}${row.node.name}`,
  );

test('closed folders show only the first level, folders before tags, with their tag counts', (t) => {
  const tree = buildTree(paths);
  t.is(tree.tagCount, 6);
  const rows = visibleRows(tree, new Set(), '');
  t.deepEqual(shown(rows), ['+Demo', '+Vehicle', 'Top']);
  t.is(rows[0]?.node.tagCount, 4);
});

test('open folders list their children in natural order (Line2 before Line10)', (t) => {
  const rows = visibleRows(buildTree(paths), new Set(['Demo', 'Demo/Line1']), '');
  t.deepEqual(shown(rows), [
    '-Demo',
    '  -Line1',
    '    Pressure',
    '    Temperature',
    '  +Line2',
    '  +Line10',
    '+Vehicle',
    'Top',
  ]);
});

test('a filter shows the matching tags with every folder leading to them open', (t) => {
  const rows = visibleRows(buildTree(paths), new Set(), 'temp');
  t.deepEqual(shown(rows), [
    '-Demo',
    '  -Line1',
    '    Temperature',
    '  -Line2',
    '    Temperature',
    '  -Line10',
    '    Temperature',
  ]);
  t.deepEqual(visibleRows(buildTree(paths), new Set(), 'nothing'), []);
});

test('a path that is a tag and a folder shows both', (t) => {
  const rows = visibleRows(buildTree(['A/B', 'A/B/C']), new Set(['A', 'A/B']), '');
  t.deepEqual(shown(rows), ['-A', '  -B', '    B', '    C']);
});
