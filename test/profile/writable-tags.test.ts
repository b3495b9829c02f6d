/**
 * The profile rules of writable tags: input registers and discrete inputs cannot be writable,
 * writeMin may not exceed writeMax, ranges only on writable numeric tags; each problem listed
 * with its path among every other problem of the profile.
 */
import test from 'ava';
import { validateProfile } from '../../src/profile/validate-profile.js';

test('writable input registers and discrete inputs are profile errors listed with all others', (t) => {
  const result = validateProfile({
    drivers: [
      {
        type: 'modbus',
        name: 'Boiler',
        allowWrites: true,
        transport: { kind: 'tcp', host: '10.0.0.5' },
        tags: [
          { name: 'In', table: 'inputRegister', address: 0, writable: true },
          { name: 'Di', table: 'discreteInput', address: 0, writable: true },
          {
            name: 'Sp',
            table: 'holdingRegister',
            address: 1,
            writable: true,
            writeMin: 9,
            writeMax: 1,
          },
          { name: 'Flag', table: 'coil', address: 1, writable: true, writeMax: 1 },
          { name: 'Hr', table: 'holdingRegister', address: 2, writeMin: 0 },
        ],
      },
      {
        type: 'simulator',
        name: 'Sim',
        tags: [{ name: 'S', kind: 'sine', writable: true, writeMin: 5, writeMax: 4 }],
      },
      {
        type: 'opcua',
        name: 'Press',
        endpointUrl: 'opc.tcp://10.0.0.7:4840',
        tags: [{ name: 'P', nodeId: 'ns=2;s=P', writable: true, writeMin: 3, writeMax: 2 }],
      },
    ],
    collections: [{ name: 'bad name!', members: ['x'] }],
  });
  t.false(result.ok);
  const errors = result.errors.map((error) => `${error.path}: ${error.message}`);
  for (const expected of [
    'drivers[0].tags[0].writable: the table inputRegister is read-only in Modbus: only coils and holding registers are writable',
    'drivers[0].tags[1].writable: the table discreteInput is read-only in Modbus: only coils and holding registers are writable',
    'drivers[0].tags[2].writeMax: writeMax must be at least writeMin',
    'drivers[0].tags[3].writeMax: writeMin and writeMax are for numeric types',
    'drivers[0].tags[4].writeMin: writeMin and writeMax are for writable tags',
    'drivers[1].tags[0].writeMax: writeMax must be at least writeMin',
    'drivers[2].tags[0].writeMax: writeMax must be at least writeMin',
  ])
    t.true(errors.includes(expected), `${expected}\nin ${errors.join('\n')}`);
  t.true(
    errors.some((error) => error.startsWith('collections[0].name')),
    'listed with the other errors of the profile',
  );
});

test('the can driver takes no write fields: CAN has no writes', (t) => {
  const result = validateProfile({
    drivers: [
      {
        type: 'can',
        name: 'Bus',
        allowWrites: true,
        dbcFile: 'x.dbc',
        transport: { kind: 'replay', file: 'x.candump' },
      },
    ],
  });
  t.false(result.ok);
  t.true(result.errors.some((error) => error.path === 'drivers[0].allowWrites'));
});
