import { readFileSync } from 'node:fs';
import test from 'ava';
import { collectionSchema, profileSchema } from '../../src/profile/schema.js';
import { validateProfile } from '../../src/profile/validate-profile.js';

const demoUrl = new URL('../../config/demo.json', import.meta.url);
const demo: unknown = JSON.parse(readFileSync(demoUrl, 'utf8'));

/** What the HTTP listener section holds when the profile leaves it out. */
const httpDefaults = {
  host: '127.0.0.1',
  port: 8080,
  allowInsecure: false,
  maxConnections: 256,
  maxConnectionsPerAddress: 32,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
};
const metricsDefaults = { allowLoopbackWithoutToken: true };

test('config/demo.json validates with a simulator holding every kind and a replayed CAN bus', (t) => {
  const result = validateProfile(demo);
  t.deepEqual(result.errors, []);
  t.true(result.ok);
  const profile = result.profile;
  if (profile === undefined) return t.fail('no profile');
  t.deepEqual(
    profile.drivers.map((driver) => [driver.name, driver.type]),
    [
      ['Demo', 'simulator'],
      ['Vehicle', 'can'],
      ['Derived', 'derived'],
    ],
  );
  const driver = profile.drivers[0];
  if (driver?.type !== 'simulator') return t.fail('the first driver is the simulator');
  t.deepEqual(
    driver.tags.map((tag) => tag.kind),
    [
      'sine',
      'ramp',
      'randomWalk',
      'square',
      'counter',
      'boolean',
      'string',
      'square',
      'boolean',
      'randomWalk',
      'counter',
    ],
  );
  t.deepEqual(
    driver.tags.filter((tag) => tag.writable).map((tag) => tag.name),
    ['Controls/Setpoint', 'Controls/ConveyorOn'],
    'two writable tags demonstrate writes',
  );
  t.true(driver.allowWrites);
  t.deepEqual(profile.collections, [
    { name: 'Line1', members: ['Demo/Line1/**', 'Derived/Line1/**'] },
  ]);
  // Derived tags of the four kinds the issue names: a scaling, a status bit, an average and a
  // totalizer, logged and published with the line.
  const derived = profile.drivers[2];
  if (derived?.type !== 'derived') return t.fail('the third driver is the derived one');
  t.deepEqual(
    derived.tags.map((tag) => tag.expression),
    [
      'scale({Demo/Line1/FlowRaw}, 0, 27648, 0, 50)',
      'bit({Demo/Line1/StatusWord}, 3)',
      'avg({./Line1/Flow}, "5m")',
      'integrate({./Line1/Flow}, "h")',
    ],
  );
});

test('config/demo.json gets defaults for what it leaves out', (t) => {
  const profile = profileSchema.parse(demo);
  t.deepEqual(profile.server, { http: { ...httpDefaults }, metrics: metricsDefaults });
  t.is(profile.$schema, './profile.schema.json');
  const driver = profile.drivers[0];
  if (driver?.type !== 'simulator') return t.fail('the first driver is the simulator');
  t.is(driver?.enabled, true);
  t.is(driver?.scanIntervalMs, 1000);
  t.is(driver?.staleAfterMs, 5000);
  t.is(driver?.seed, undefined);
  t.deepEqual(driver?.tags[4], {
    name: 'Line1/PartsCount',
    kind: 'counter',
    start: 0,
    step: 1,
    unit: 'parts',
  });
  t.deepEqual(driver?.tags[5], {
    name: 'Line1/PumpRunning',
    kind: 'boolean',
    periodSeconds: 30,
  });
});

test('an empty document is a valid profile with every default', (t) => {
  const result = validateProfile({});
  t.true(result.ok);
  t.deepEqual(result.errors, []);
  t.deepEqual(result.profile, {
    server: { http: { ...httpDefaults }, metrics: metricsDefaults },
    security: { accessTokenMinutes: 15, refreshTokenDays: 7, sessionLifetimeHours: 168 },
    queries: {
      maxMatchesPerRequest: 1_000_000,
      maxDeltaEntries: 1_000_000,
      maxDeltaEntriesPerAccount: 250_000,
    },
    drivers: [],
    collections: [],
    publishers: { webhooks: [], mqtt: [] },
    alarms: [],
    assistant: { writableTags: [], proposalExpiryMinutes: 5, mcp: {} },
  });
});

test('an empty server section gets the http defaults', (t) => {
  t.deepEqual(profileSchema.parse({ server: {} }).server, {
    http: { ...httpDefaults },
    metrics: metricsDefaults,
  });
  t.deepEqual(profileSchema.parse({ server: { http: { port: 0 } } }).server, {
    http: { ...httpDefaults, port: 0 },
    metrics: metricsDefaults,
  });
  // A reverse proxy on the gateway: loopback peers need a token too.
  t.deepEqual(
    profileSchema.parse({ server: { metrics: { allowLoopbackWithoutToken: false } } }).server
      .metrics,
    { allowLoopbackWithoutToken: false },
  );
  t.false(profileSchema.safeParse({ server: { metrics: { allowLoopback: false } } }).success);
});

test('tag defaults are applied per kind', (t) => {
  const profile = profileSchema.parse({
    drivers: [
      {
        type: 'simulator',
        name: 'Sim',
        tags: [
          { name: 'a', kind: 'sine' },
          { name: 'b', kind: 'string' },
        ],
      },
    ],
  });
  const driver = profile.drivers[0];
  if (driver?.type !== 'simulator') return t.fail('a simulator');
  t.deepEqual(driver.tags, [
    { name: 'a', kind: 'sine', amplitude: 1, offset: 0, periodSeconds: 60 },
    { name: 'b', kind: 'string', values: ['Idle', 'Running', 'Stopped'], periodSeconds: 30 },
  ]);
});

test('the port must be an integer from 0 to 65535', (t) => {
  for (const port of [0, 1, 65_535]) {
    t.true(profileSchema.safeParse({ server: { http: { port } } }).success, `port ${port}`);
  }
  for (const port of [-1, 65_536, 70_000, 80.5, '8080']) {
    t.false(profileSchema.safeParse({ server: { http: { port } } }).success, `port ${port}`);
  }
});

test('collection names allow single inner spaces only', (t) => {
  const ok = (name: string) => collectionSchema.safeParse({ name, members: ['a/*'] }).success;
  t.true(ok('Line 1'));
  t.true(ok('A_b.c:d-e'));
  t.false(ok('Line  1'));
  t.false(ok(' Line1'));
  t.false(ok('Line1 '));
  t.false(ok(''));
  t.false(ok('x'.repeat(129)));
  t.true(ok('x'.repeat(128)));
});

test('collection members accept tag paths and * / ** patterns only', (t) => {
  const ok = (member: string) =>
    collectionSchema.safeParse({ name: 'C', members: [member] }).success;
  t.true(ok('Demo/Line1/Temperature'));
  t.true(ok('Demo/*/Temperature'));
  t.true(ok('Demo/**'));
  t.false(ok('Demo/Li*ne'));
  t.false(ok('Demo//x'));
  t.false(ok(''));
  t.false(collectionSchema.safeParse({ name: 'C', members: [] }).success);
  t.false(collectionSchema.safeParse({ name: 'C', members: ['a'], extra: 1 }).success);
});

test('queries limits are whole numbers in range; unknown keys are refused', (t) => {
  t.deepEqual(profileSchema.parse({ queries: { maxDeltaEntries: 5_000 } }).queries, {
    maxMatchesPerRequest: 1_000_000,
    maxDeltaEntries: 5_000,
    maxDeltaEntriesPerAccount: 250_000,
  });
  const result = validateProfile({
    queries: { maxMatchesPerRequest: 10, maxDeltaEntries: 1.5, maxDeltaEntriesPerAcount: 1 },
  });
  t.false(result.ok);
  t.deepEqual(
    result.errors.map((error) => error.path),
    ['queries.maxMatchesPerRequest', 'queries.maxDeltaEntries', 'queries.maxDeltaEntriesPerAcount'],
  );
});
