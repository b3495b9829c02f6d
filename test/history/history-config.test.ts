import test from 'ava';
import { historyConfigSchema } from '../../src/history/history-config.js';
import { profileSchema } from '../../src/profile/schema.js';
import { findSecrets } from '../../src/profile/secret-fields.js';
import { validateProfile } from '../../src/profile/validate-profile.js';

test('a minimal sqlite section takes the defaults', (t) => {
  t.deepEqual(historyConfigSchema.parse({ backend: 'sqlite' }), {
    backend: 'sqlite',
    file: 'history.db',
    synchronous: 'normal',
    retentionDays: 30,
    log: [],
  });
});

test('log entries: exactly one of collection or source; interval needs intervalSeconds; deadband is onChange only', (t) => {
  const result = validateProfile({
    history: {
      backend: 'sqlite',
      log: [
        { collection: 'Line1', mode: 'onChange', deadband: 0.5 },
        { source: 'Demo/**', mode: 'interval', intervalSeconds: 10 },
        { mode: 'onChange' },
        { collection: 'Line1', source: 'Demo/**' },
        { source: 'Demo/**', mode: 'interval' },
        { source: 'Demo/**', mode: 'interval', intervalSeconds: 5, deadband: 1 },
        { source: 'Demo/**', intervalSeconds: 5 },
        { source: 'Demo//x' },
      ],
    },
  });
  t.false(result.ok);
  t.deepEqual(
    result.errors.map((e) => e.path),
    [
      'history.log[2].collection',
      'history.log[3].collection',
      'history.log[4].intervalSeconds',
      'history.log[5].deadband',
      'history.log[6].intervalSeconds',
      'history.log[7].source',
    ],
  );
});

test('the postgres URL must be a postgres:// or postgresql:// address', (t) => {
  const document = {
    history: { backend: 'postgres', url: 'postgres://tagd:pw@db.example:5432/history' },
  };
  t.true(validateProfile(document).ok);
  const bad = validateProfile({ history: { backend: 'postgres', url: 'http://db.example/' } });
  t.deepEqual(
    bad.errors.map((e) => [e.path, e.message]),
    [['history.url', 'The history URL must be a postgres:// or postgresql:// address.']],
  );
});

test('the postgres URL is a secret: sealed at rest, masked on the way out', (t) => {
  const secrets = findSecrets(profileSchema, {
    history: { backend: 'postgres', url: 'postgres://tagd:pw@db/history' },
  });
  t.deepEqual(secrets, [{ path: ['history', 'url'], value: 'postgres://tagd:pw@db/history' }]);
  t.deepEqual(findSecrets(profileSchema, { history: { backend: 'sqlite' } }), []);
});
