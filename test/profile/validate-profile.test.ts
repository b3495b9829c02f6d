import test from 'ava';
import { z } from 'zod';
import { driverTypes } from '../../drivers/registry.js';
import type { FieldError } from '../../src/errors.js';
import { formatPath, toFieldErrors, validateProfile } from '../../src/profile/validate-profile.js';

const byPath = (a: FieldError, b: FieldError) =>
  a.path === b.path ? a.message.localeCompare(b.message) : a.path.localeCompare(b.path);

/** 16 valid segments: a valid relative tag path whose full path has 17. */
const sixteenSegments = Array.from({ length: 16 }, (_, index) => `s${index}`).join('/');
/** 255 characters: a valid relative tag path whose full path `A/…` has 257. */
const longSegment = 'x'.repeat(255);

/** One document with many independent mistakes. */
const broken = {
  histroy: { days: 7 },
  server: { http: { prot: 8080, port: '8080' } },
  drivers: [
    { type: 'profibus', name: 'Plc', tags: [] },
    {
      type: 'simulator',
      name: 'A',
      tags: [
        { name: 'a//b', kind: 'sine' },
        { name: 'Temp', kind: 'sine' },
        { name: 'Temp', kind: 'boolean' },
        { name: 'Level', kind: 'ramp', min: 5, max: 5 },
        { name: sixteenSegments, kind: 'sine' },
        { name: longSegment, kind: 'sine' },
      ],
    },
    { type: 'simulator', name: 'A', tags: [{ name: 'Other', kind: 'sine' }] },
  ],
  collections: [
    { name: 'Line1', members: ['A/Temp', 'A/Te mp'] },
    { name: 'Line1', members: ['A/**'] },
    { name: 'Empty', members: [] },
  ],
};

const expectedErrors: FieldError[] = [
  { path: 'histroy', message: "Unknown key 'histroy'." },
  { path: 'server.http.prot', message: "Unknown key 'prot'." },
  { path: 'server.http.port', message: 'Invalid input: expected number, received string' },
  { path: 'drivers[0].type', message: `Must be one of: ${driverTypes.join(', ')}.` },
  {
    path: 'drivers[1].tags[0].name',
    message: 'Invalid tag path: it has an empty segment (leading, trailing or double slash)',
  },
  {
    path: 'drivers[1].tags[2].name',
    message: "Duplicate tag name 'Temp' (also at drivers[1].tags[1]).",
  },
  { path: 'drivers[1].tags[3].max', message: 'max must be greater than min' },
  {
    path: 'drivers[1].tags[4].name',
    message: `Full tag path 'A/${sixteenSegments}' is invalid: it has more than 16 segments`,
  },
  {
    path: 'drivers[1].tags[5].name',
    message: `Full tag path 'A/${longSegment}' is invalid: it is longer than 256 characters`,
  },
  { path: 'drivers[2].name', message: "Duplicate driver name 'A' (also at drivers[1])." },
  {
    path: 'collections[0].members[1]',
    message:
      "Invalid tag path or pattern: segment 'Te mp' may only hold letters, digits and _ . : -",
  },
  {
    path: 'collections[1].name',
    message: "Duplicate collection name 'Line1' (also at collections[0]).",
  },
  { path: 'collections[2].members', message: 'Too small: expected array to have >=1 items' },
];

test('one run reports every problem of a broken profile, each at its path', (t) => {
  const result = validateProfile(broken);
  t.false(result.ok);
  t.is(result.profile, undefined);
  t.deepEqual(
    result.errors.map((error) => error.path).sort(),
    expectedErrors.map((error) => error.path).sort(),
  );
  t.deepEqual([...result.errors].sort(byPath), [...expectedErrors].sort(byPath));
});

test('an out-of-range port is reported at server.http.port', (t) => {
  const result = validateProfile({ server: { http: { port: 70_000 } } });
  t.false(result.ok);
  t.deepEqual(result.errors, [
    { path: 'server.http.port', message: 'Too big: expected number to be <=65535' },
  ]);
});

test('the tag path limits are met exactly by a 16-segment, 256-character full path', (t) => {
  const fifteen = Array.from({ length: 15 }, (_, index) => `s${index}`).join('/');
  const result = validateProfile({
    drivers: [
      {
        type: 'simulator',
        name: 'A',
        tags: [
          { name: fifteen, kind: 'sine' },
          { name: 'x'.repeat(254), kind: 'sine' },
        ],
      },
    ],
  });
  t.deepEqual(result.errors, []);
  t.true(result.ok);
});

test('an unknown tag kind lists the known kinds', (t) => {
  const result = validateProfile({
    drivers: [{ type: 'simulator', name: 'A', tags: [{ name: 't', kind: 'wave' }] }],
  });
  t.deepEqual(result.errors, [
    {
      path: 'drivers[0].tags[0].kind',
      message: 'Must be one of: sine, ramp, randomWalk, square, counter, boolean, string.',
    },
  ]);
});

test('cross-field errors alone make the profile invalid', (t) => {
  const driver = { type: 'simulator', name: 'Twin', tags: [{ name: 't', kind: 'sine' }] };
  const result = validateProfile({ drivers: [driver, driver] });
  t.false(result.ok);
  t.is(result.profile, undefined);
  t.deepEqual(result.errors, [
    { path: 'drivers[1].name', message: "Duplicate driver name 'Twin' (also at drivers[0])." },
  ]);
});

test('a document that is not an object is reported at (root)', (t) => {
  for (const document of [null, [], 'profile', 42]) {
    const result = validateProfile(document);
    t.false(result.ok);
    t.deepEqual(
      result.errors.map((error) => error.path),
      ['(root)'],
    );
  }
});

test('validateProfile uses the schema it is given', (t) => {
  const schema = z.strictObject({ name: z.string() });
  t.deepEqual(validateProfile({ name: 'x' }, schema), {
    ok: true,
    profile: { name: 'x' } as never,
    errors: [],
  });
  t.deepEqual(validateProfile({ name: 1, more: true }, schema).errors.sort(byPath), [
    { path: 'more', message: "Unknown key 'more'." },
    { path: 'name', message: 'Invalid input: expected string, received number' },
  ]);
});

test('an invalid driver name is reported once, not again at each tag', (t) => {
  const result = validateProfile({
    drivers: [
      {
        type: 'simulator',
        name: 'a b',
        tags: [
          { name: 'x', kind: 'sine' },
          { name: 'y', kind: 'sine' },
        ],
      },
    ],
  });
  t.deepEqual(result.errors, [
    { path: 'drivers[0].name', message: 'may only hold letters, digits and _ . : -' },
  ]);
});

test('a repeated tag name is reported once, at its path, whatever the driver type', (t) => {
  const validation = validateProfile({
    drivers: [
      {
        type: 'modbus',
        name: 'Press',
        transport: { kind: 'tcp', host: '127.0.0.1', port: 502 },
        tags: [
          { name: 'Force', table: 'holdingRegister', address: 0 },
          { name: 'Force', table: 'holdingRegister', address: 1 },
        ],
      },
      {
        type: 'opcua',
        name: 'Oven',
        endpointUrl: 'opc.tcp://127.0.0.1:4840',
        tags: [
          { name: 'T', nodeId: 'i=2258' },
          { name: 'T', nodeId: 'ns=1;s=Temperature' },
        ],
      },
    ],
  });
  t.false(validation.ok);
  t.deepEqual(validation.ok ? [] : validation.errors, [
    {
      path: 'drivers[0].tags[1].name',
      message: "Duplicate tag name 'Force' (also at drivers[0].tags[0]).",
    },
    {
      path: 'drivers[1].tags[1].name',
      message: "Duplicate tag name 'T' (also at drivers[1].tags[0]).",
    },
  ]);
});

test('formatPath writes a.b[0].c notation', (t) => {
  t.is(formatPath([]), '(root)');
  t.is(formatPath(['a', 0, 'b']), 'a[0].b');
  t.is(formatPath(['drivers', 0, 'tags', 2, 'name']), 'drivers[0].tags[2].name');
  t.is(formatPath([0]), '[0]');
  t.is(formatPath([0, 1, 'x']), '[0][1].x');
  t.is(formatPath(['a', 'b']), 'a.b');
});

test('toFieldErrors names each unknown key on its own', (t) => {
  const result = z.strictObject({ a: z.strictObject({}) }).safeParse({ a: { x: 1, y: 2 } });
  if (result.success) return t.fail('expected a failure');
  t.deepEqual(result.error.issues.flatMap(toFieldErrors), [
    { path: 'a.x', message: "Unknown key 'x'." },
    { path: 'a.y', message: "Unknown key 'y'." },
  ]);
});

test('alarms: each error at its path, names unique, no driver named Alarms beside them', (t) => {
  const result = validateProfile({
    drivers: [{ type: 'simulator', name: 'Alarms', tags: [{ name: 'T', kind: 'sine' }] }],
    alarms: [
      { name: 'Hot', source: 'Alarms/T', condition: 'High', limit: 90 },
      { name: 'Hot', source: 'Demo/T', condition: 'High' },
    ],
  });
  t.deepEqual(result.errors, [
    { path: 'alarms[0].source', message: 'The source cannot be an alarm state tag (Alarms/…).' },
    { path: 'alarms[1].limit', message: 'Required for condition High.' },
    { path: 'alarms[1].name', message: "Duplicate alarm name 'Hot' (also at alarms[0])." },
    {
      path: 'drivers[0].name',
      message:
        "A driver cannot be named 'Alarms' while the profile has alarms: their state tags are Alarms/<name>/….",
    },
  ]);
  t.true(
    validateProfile({
      drivers: [{ type: 'simulator', name: 'Alarms', tags: [{ name: 'T', kind: 'sine' }] }],
    }).ok,
  );
});
