import test from 'ava';
import { profileSchema } from '../../src/profile/schema.js';
import { diffProfiles } from '../../src/reload/profile-diff.js';

const simulator = (name: string, scanIntervalMs = 1000) => ({
  type: 'simulator',
  name,
  scanIntervalMs,
  tags: [{ name: 'T', kind: 'sine' }],
});

test('entries are compared by name after defaults: only what really changed is listed', (t) => {
  const before = profileSchema.parse({
    drivers: [simulator('A'), simulator('B'), simulator('C')],
    collections: [{ name: 'All', members: ['**'] }],
  });
  const after = profileSchema.parse({
    // B written with a default spelled out is the same B; C is gone, D is new, A changed.
    drivers: [simulator('A', 500), { ...simulator('B'), enabled: true }, simulator('D')],
    collections: [{ name: 'All', members: ['**'] }],
    server: { http: { port: 9090 } },
    history: { backend: 'sqlite' },
  });
  const diff = diffProfiles(before, after);
  t.deepEqual(
    diff.drivers.map(({ name, kind }) => [name, kind]),
    [
      ['A', 'changed'],
      ['B', 'unchanged'],
      ['D', 'added'],
      ['C', 'removed'],
    ],
  );
  t.deepEqual(
    diff.collections.map(({ kind }) => kind),
    ['unchanged'],
  );
  t.is(diff.history, 'added');
  t.is(diff.extensions, 'unchanged');
  t.deepEqual(diff.requiresRestart, ['server']);
});

test('alarms are compared by name after defaults; the journal section as a whole', (t) => {
  const alarm = (name: string, limit = 90) => ({
    name,
    source: 'A/T',
    condition: 'High',
    limit,
  });
  const before = profileSchema.parse({ alarms: [alarm('Hot'), alarm('Warm'), alarm('Old')] });
  const after = profileSchema.parse({
    alarms: [alarm('Hot', 95), { ...alarm('Warm'), enabled: true }, alarm('New')],
    alarmJournal: { retentionDays: 30 },
  });
  const diff = diffProfiles(before, after);
  t.deepEqual(
    diff.alarms.map(({ name, kind }) => [name, kind]),
    [
      ['Hot', 'changed'],
      ['Warm', 'unchanged'],
      ['New', 'added'],
      ['Old', 'removed'],
    ],
  );
  t.is(diff.alarmJournal, 'added');
});

test('the notifications section is compared as a whole, after defaults', (t) => {
  const notifications = (password: string) => ({
    smtp: { host: 'mail.plant.example', username: 'tagd', password, from: 'tagd@plant.example' },
    rules: [{ name: 'shift', recipients: ['a@plant.example'] }],
  });
  const before = profileSchema.parse({ notifications: notifications('one') });
  const same = profileSchema.parse({
    notifications: {
      ...notifications('one'),
      rules: [{ ...notifications('one').rules[0], delayMs: 0 }],
    },
  });
  t.is(diffProfiles(before, same).notifications, 'unchanged');
  t.is(
    diffProfiles(before, profileSchema.parse({ notifications: notifications('two') }))
      .notifications,
    'changed',
  );
  t.is(diffProfiles(before, profileSchema.parse({})).notifications, 'removed');
  t.is(diffProfiles(profileSchema.parse({}), before).notifications, 'added');
});
