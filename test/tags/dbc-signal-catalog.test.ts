import test from 'ava';
import type { DbcMessageDefinition } from '../../src/dbc/catalog-entries.js';
import { NotFoundError, ValidationError } from '../../src/errors.js';
import { DbcSignalCatalog } from '../../src/tags/dbc-signal-catalog.js';

const engine: DbcMessageDefinition[] = [
  {
    name: 'EEC1',
    signals: [{ name: 'EngineSpeed', unit: 'rpm' }, { name: 'EngineTorqueMode' }],
  },
  { name: 'ET1', signals: [{ name: 'EngineCoolantTemp', unit: 'degC' }] },
];

test('lookup finds a registered signal and its tag path', (t) => {
  const catalog = new DbcSignalCatalog();
  catalog.register('CAN0', engine);
  t.deepEqual(catalog.lookup('CAN0', 'EEC1', 'EngineSpeed'), {
    found: true,
    signal: { name: 'EngineSpeed', unit: 'rpm' },
    fullTagId: 'CAN0/EEC1/EngineSpeed',
  });
  t.deepEqual(catalog.lookup('CAN0', 'ET1', 'EngineCoolantTemp'), {
    found: true,
    signal: { name: 'EngineCoolantTemp', unit: 'degC' },
    fullTagId: 'CAN0/ET1/EngineCoolantTemp',
  });
  t.true(catalog.has('CAN0'));
  t.deepEqual(catalog.componentNames(), ['CAN0']);
});

test('lookup says which level is missing', (t) => {
  const catalog = new DbcSignalCatalog();
  catalog.register('CAN0', engine);
  t.deepEqual(catalog.lookup('CAN1', 'EEC1', 'EngineSpeed'), {
    found: false,
    missing: 'component',
  });
  t.deepEqual(catalog.lookup('CAN0', 'EEC2', 'EngineSpeed'), { found: false, missing: 'message' });
  t.deepEqual(catalog.lookup('CAN0', 'EEC1', 'Nope'), { found: false, missing: 'signal' });
  // A signal of another message of the same component is not in this one.
  t.deepEqual(catalog.lookup('CAN0', 'EEC1', 'EngineCoolantTemp'), {
    found: false,
    missing: 'signal',
  });
  // Names are case-sensitive, as in DBC files.
  t.deepEqual(catalog.lookup('can0', 'EEC1', 'EngineSpeed'), {
    found: false,
    missing: 'component',
  });
});

test('require throws a 404 whose message names the missing level', (t) => {
  const catalog = new DbcSignalCatalog();
  catalog.register('CAN0', engine);
  t.deepEqual(catalog.require('CAN0', 'EEC1', 'EngineSpeed'), {
    found: true,
    signal: { name: 'EngineSpeed', unit: 'rpm' },
    fullTagId: 'CAN0/EEC1/EngineSpeed',
  });
  const cases: [string, string, string, string][] = [
    ['X', 'EEC1', 'EngineSpeed', "CAN component 'X' does not exist."],
    ['CAN0', 'Y', 'EngineSpeed', "Message 'Y' is not defined in the DBC of component 'CAN0'."],
    ['CAN0', 'EEC1', 'Z', "Signal 'Z' is not defined in message 'EEC1' of component 'CAN0'."],
  ];
  for (const [component, message, signal, expected] of cases) {
    const error = t.throws(() => catalog.require(component, message, signal), {
      instanceOf: NotFoundError,
    });
    t.is(error?.message, expected);
    t.is(error?.status, 404);
  }
});

test('a long name from a URL is shortened in the message', (t) => {
  const catalog = new DbcSignalCatalog();
  const long = 'A'.repeat(250);
  const error = t.throws(() => catalog.require(long, 'M', 'S'), { instanceOf: NotFoundError });
  t.is(error?.message, `CAN component '${'A'.repeat(100)}…' does not exist.`);
});

test('registering again replaces the component’s DBC; unregister removes it', (t) => {
  const catalog = new DbcSignalCatalog();
  catalog.register('CAN0', engine);
  catalog.register('CAN1', [{ name: 'Other', signals: [{ name: 'S' }] }]);
  catalog.register('CAN0', [{ name: 'EEC1', signals: [{ name: 'EngineSpeed', unit: 'min-1' }] }]);
  t.deepEqual(catalog.lookup('CAN0', 'EEC1', 'EngineSpeed'), {
    found: true,
    signal: { name: 'EngineSpeed', unit: 'min-1' },
    fullTagId: 'CAN0/EEC1/EngineSpeed',
  });
  t.deepEqual(catalog.lookup('CAN0', 'ET1', 'EngineCoolantTemp'), {
    found: false,
    missing: 'message',
  });
  t.true(catalog.unregister('CAN0'));
  t.false(catalog.unregister('CAN0'));
  t.deepEqual(catalog.lookup('CAN0', 'EEC1', 'EngineSpeed'), {
    found: false,
    missing: 'component',
  });
  t.deepEqual(catalog.componentNames(), ['CAN1']);
});

test('the catalog keeps its own copy of the definitions', (t) => {
  const catalog = new DbcSignalCatalog();
  const signal = { name: 'EngineSpeed', unit: 'rpm' };
  catalog.register('CAN0', [{ name: 'EEC1', signals: [signal] }]);
  signal.unit = 'changed';
  const result = catalog.lookup('CAN0', 'EEC1', 'EngineSpeed');
  t.is(result.found ? result.signal.unit : undefined, 'rpm');
});

test('invalid and duplicate names are refused, all at once, and nothing is registered', (t) => {
  const catalog = new DbcSignalCatalog();
  const error = t.throws(
    () =>
      catalog.register('CAN 0', [
        { name: 'EEC1', signals: [{ name: 'Speed' }, { name: 'Speed' }, { name: 'a/b' }] },
        { name: 'EEC1', signals: [] },
        { name: '', signals: [{ name: 'Fine' }] },
      ]),
    { instanceOf: ValidationError },
  );
  t.is(error?.message, "The DBC of component 'CAN 0' is invalid.");
  t.deepEqual(error?.errors, [
    {
      path: 'component',
      message: "Invalid name 'CAN 0': segment 'CAN 0' may only hold letters, digits and _ . : -.",
    },
    {
      path: 'messages[0].signals[1].name',
      message: "Signal 'Speed' is defined twice in message 'EEC1'.",
    },
    {
      path: 'messages[0].signals[2].name',
      message: "Invalid name 'a/b': it must be one path segment.",
    },
    { path: 'messages[1].name', message: "Message 'EEC1' is defined twice." },
    { path: 'messages[2].name', message: "Invalid name '': the path is empty." },
  ]);
  t.deepEqual(catalog.componentNames(), []);
});

test('a component with no messages is known, and its messages are not', (t) => {
  const catalog = new DbcSignalCatalog();
  catalog.register('CAN0', []);
  t.deepEqual(catalog.lookup('CAN0', 'EEC1', 'EngineSpeed'), { found: false, missing: 'message' });
});
