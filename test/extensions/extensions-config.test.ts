import test from 'ava';
import { profileSchema } from '../../src/profile/schema.js';
import { findSecrets } from '../../src/profile/secret-fields.js';
import { validateProfile } from '../../src/profile/validate-profile.js';

test('defaults: loopback 8081, no apps, API and docs off, no HTTPS', (t) => {
  const result = validateProfile({ extensions: {} });
  t.true(result.ok);
  t.deepEqual(result.profile?.extensions, {
    listen: {
      host: '127.0.0.1',
      port: 8081,
      allowInsecure: false,
      maxConnections: 256,
      maxConnectionsPerAddress: 32,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
    },
    apps: [],
    enableApi: false,
    enableDocs: false,
  });
  t.is(validateProfile({}).profile?.extensions, undefined, 'absent: no extensions server');
});

test('app names: reserved, duplicate (without case) and malformed names are refused, each named', (t) => {
  const result = validateProfile({
    extensions: {
      apps: [
        { name: 'andon', folder: 'a' },
        { name: 'API', folder: 'b' },
        { name: 'swagger', folder: 'c' },
        { name: 'Andon', folder: 'd' },
        { name: '..', folder: 'e' },
        { name: 'a/b', folder: 'f' },
        { name: 'ok', folder: '' },
        { name: 'csp', folder: 'g', csp: "default-src 'self'\r\nSet-Cookie: x=1" },
      ],
      enableApi: 'yes',
      extra: 1,
    },
  });
  t.false(result.ok);
  t.deepEqual(result.errors.map((error) => error.path).sort(), [
    'extensions.apps[1].name',
    'extensions.apps[2].name',
    'extensions.apps[3].name',
    'extensions.apps[4].name',
    'extensions.apps[5].name',
    'extensions.apps[6].folder',
    'extensions.apps[7].csp',
    'extensions.enableApi',
    'extensions.extra',
  ]);
});

test('the extensions HTTPS listener needs its files; its passphrase is a secret like server.https', (t) => {
  const result = validateProfile({ extensions: { https: {} } });
  t.deepEqual(result.errors.map((error) => error.path).sort(), [
    'extensions.https.certFile',
    'extensions.https.keyFile',
  ]);
  const document = {
    extensions: { https: { certFile: 'c.pem', keyFile: 'k.pem', keyPassphrase: 'p' } },
  };
  const https = validateProfile(document);
  t.deepEqual(findSecrets(profileSchema, document), [
    { path: ['extensions', 'https', 'keyPassphrase'], value: 'p' },
  ]);
  t.like(https.profile?.extensions?.https, { host: '0.0.0.0', port: 8444, minVersion: 'TLSv1.2' });
});
