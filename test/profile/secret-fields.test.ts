import test from 'ava';
import { z } from 'zod';
import {
  findSecrets,
  type SecretLocation,
  secret,
  setAtPath,
} from '../../src/profile/secret-fields.js';

const sealedUrl = 'enc:v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

const webhookSchema = z.discriminatedUnion('mode', [
  z.strictObject({
    mode: z.literal('basic'),
    url: z.string().url(),
    username: z.string(),
    password: secret(z.string()),
  }),
  z.strictObject({
    mode: z.literal('signed'),
    // A sealed value (`enc:v1:…`) is a URL of scheme enc:, so only http(s) makes it fail.
    url: secret(z.string().url({ protocol: /^https?$/ })),
    signingKey: secret(z.string()).optional(),
  }),
  z.strictObject({ mode: z.literal('none'), url: z.string().url() }),
]);

const testSchema = z.strictObject({
  name: z.string(),
  apiKey: secret(z.string()),
  mqtt: z
    .strictObject({
      host: z.string(),
      password: secret(z.string()).optional(),
      tls: z.strictObject({ keyPassphrase: secret(z.string()).default('') }).optional(),
    })
    .optional(),
  users: z.array(z.strictObject({ login: z.string(), token: secret(z.string()) })).default([]),
  webhooks: z.array(webhookSchema).default([]),
  extra: z.record(z.string(), secret(z.string())).optional(),
});

const byPath = (a: SecretLocation, b: SecretLocation) =>
  a.path.join('/').localeCompare(b.path.join('/'));

test('findSecrets lists every secret at its path, in nested objects, arrays and unions', (t) => {
  const document = {
    name: 'gateway',
    apiKey: 'k-1',
    mqtt: { host: 'broker', password: 'mq-pw', tls: { keyPassphrase: 'tls-pw' } },
    users: [
      { login: 'ann', token: 't-ann' },
      { login: 'bob', token: 't-bob' },
    ],
    webhooks: [
      { mode: 'basic', url: 'https://a.example/hook', username: 'u', password: 'basic-pw' },
      { mode: 'signed', url: 'https://b.example/hook', signingKey: 'sign-key' },
      { mode: 'none', url: 'https://c.example/hook' },
      { mode: 'signed', url: 'https://d.example/hook' },
    ],
    extra: { one: 'x1', two: 'x2' },
  };
  t.deepEqual(findSecrets(testSchema, document).sort(byPath), [
    { path: ['apiKey'], value: 'k-1' },
    { path: ['extra', 'one'], value: 'x1' },
    { path: ['extra', 'two'], value: 'x2' },
    { path: ['mqtt', 'password'], value: 'mq-pw' },
    { path: ['mqtt', 'tls', 'keyPassphrase'], value: 'tls-pw' },
    { path: ['users', 0, 'token'], value: 't-ann' },
    { path: ['users', 1, 'token'], value: 't-bob' },
    { path: ['webhooks', 0, 'password'], value: 'basic-pw' },
    { path: ['webhooks', 1, 'signingKey'], value: 'sign-key' },
    { path: ['webhooks', 1, 'url'], value: 'https://b.example/hook' },
    { path: ['webhooks', 3, 'url'], value: 'https://d.example/hook' },
  ]);
});

test('absent optional secrets and sections are skipped', (t) => {
  t.deepEqual(findSecrets(testSchema, { name: 'n', apiKey: 'k' }), [
    { path: ['apiKey'], value: 'k' },
  ]);
  t.deepEqual(findSecrets(testSchema, { name: 'n', mqtt: { host: 'h' }, users: [] }), []);
  t.deepEqual(findSecrets(testSchema, { name: 'n', apiKey: null, mqtt: null }), []);
});

test('a secret field holding a non-string is not reported', (t) => {
  t.deepEqual(findSecrets(testSchema, { apiKey: 42, users: [{ token: { a: 1 } }] }), []);
});

test('findSecrets tolerates documents of the wrong shape', (t) => {
  for (const document of [undefined, null, 'text', 7, [], { users: 'nope', webhooks: {} }]) {
    t.deepEqual(findSecrets(testSchema, document), []);
  }
});

test('a sealed value that fails its .url() check is found: the discriminator picks the branch', (t) => {
  const document = { webhooks: [{ mode: 'signed', url: sealedUrl }] };
  t.false(webhookSchema.safeParse(document.webhooks[0]).success);
  t.true(webhookSchema.safeParse({ mode: 'signed', url: 'https://b.example/' }).success);
  t.deepEqual(findSecrets(testSchema, document), [
    { path: ['webhooks', 0, 'url'], value: sealedUrl },
  ]);
});

test('an unknown discriminator value matches no branch', (t) => {
  t.deepEqual(findSecrets(testSchema, { webhooks: [{ mode: 'other', password: 'p' }] }), []);
});

test('a plain union picks the first branch that parses', (t) => {
  const schema = z.strictObject({
    auth: z.union([
      z.strictObject({ token: secret(z.string()) }),
      z.strictObject({ user: z.string(), password: secret(z.string()) }),
    ]),
  });
  t.deepEqual(findSecrets(schema, { auth: { user: 'u', password: 'p' } }), [
    { path: ['auth', 'password'], value: 'p' },
  ]);
  t.deepEqual(findSecrets(schema, { auth: { token: 't' } }), [
    { path: ['auth', 'token'], value: 't' },
  ]);
});

test('secrets are found through default, nullable, pipe and lazy wrappers', (t) => {
  const schema = z.strictObject({
    a: secret(z.string()).default('d'),
    b: secret(z.string()).nullable(),
    c: secret(z.string()).pipe(z.string()),
    d: z.lazy(() => z.strictObject({ e: secret(z.string()) })),
  });
  t.deepEqual(findSecrets(schema, { a: 'A', b: 'B', c: 'C', d: { e: 'E' } }).sort(byPath), [
    { path: ['a'], value: 'A' },
    { path: ['b'], value: 'B' },
    { path: ['c'], value: 'C' },
    { path: ['d', 'e'], value: 'E' },
  ]);
});

test('secret() returns the schema it was given', (t) => {
  const schema = z.string();
  t.is(secret(schema), schema);
  t.deepEqual(findSecrets(schema, 'top'), [{ path: [], value: 'top' }]);
  t.deepEqual(findSecrets(z.string(), 'not marked'), []);
});

test('a branch whose discriminator is a z.enum is found', (t) => {
  const schema = z.discriminatedUnion('mode', [
    z.strictObject({ mode: z.enum(['a', 'b']), key: secret(z.string()) }),
    z.strictObject({ mode: z.literal('c'), password: secret(z.string()) }),
  ]);
  t.deepEqual(findSecrets(schema, { mode: 'c', password: 'p' }), [
    { path: ['password'], value: 'p' },
  ]);
  t.deepEqual(findSecrets(schema, { mode: 'b', key: 'k' }), [{ path: ['key'], value: 'k' }]);
});

test('setAtPath replaces a value deep in objects and arrays', (t) => {
  const document = { a: { b: [{ c: 'old' }, { c: 'keep' }] }, top: 1 };
  setAtPath(document, ['a', 'b', 0, 'c'], 'new');
  t.deepEqual(document, { a: { b: [{ c: 'new' }, { c: 'keep' }] }, top: 1 });
  setAtPath(document, ['top'], 'replaced');
  t.deepEqual(document, { a: { b: [{ c: 'new' }, { c: 'keep' }] }, top: 'replaced' });
  setAtPath(document, ['a', 'b', 1], 'item');
  t.deepEqual(document, { a: { b: [{ c: 'new' }, 'item'] }, top: 'replaced' });
});

test('setAtPath writes back what findSecrets found', (t) => {
  const document = {
    name: 'n',
    apiKey: 'k',
    users: [{ login: 'ann', token: 't' }],
    webhooks: [{ mode: 'signed', url: 'https://b.example/' }],
  };
  for (const found of findSecrets(testSchema, document)) {
    setAtPath(document, found.path, `sealed(${found.value})`);
  }
  t.deepEqual(document, {
    name: 'n',
    apiKey: 'sealed(k)',
    users: [{ login: 'ann', token: 'sealed(t)' }],
    webhooks: [{ mode: 'signed', url: 'sealed(https://b.example/)' }],
  });
});

test('every secret field of the real profile schema is found (a describe() after secret() would hide one)', async (t) => {
  const { profileSchema } = await import('../../src/profile/schema.js');
  const profile = {
    server: { https: { certFile: 'c.pem', keyFile: 'k.pem', keyPassphrase: 'pass-1' } },
    collections: [{ name: 'C', members: ['A/**'] }],
    publishers: {
      webhooks: [
        {
          name: 'a',
          destinationUrl: 'https://a/',
          collections: ['C'],
          authentication: { mode: 'Bearer token', bearerToken: 'tok-2' },
        },
        {
          name: 'b',
          destinationUrl: 'https://b/',
          collections: ['C'],
          authentication: {
            mode: 'API key header',
            apiKeyHeaderName: 'X-Key',
            apiKeyHeaderValue: 'key-3',
          },
          signingSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        },
        {
          name: 'c',
          destinationUrl: 'https://c/',
          collections: ['C'],
          authentication: { mode: 'Basic auth', basicAuthUsername: 'u', basicAuthPassword: 'pw-4' },
        },
      ],
    },
  };
  const found = findSecrets(profileSchema, profile).map((secret) => secret.path.join('.'));
  t.deepEqual(found.sort(), [
    'publishers.webhooks.0.authentication.bearerToken',
    'publishers.webhooks.0.destinationUrl',
    'publishers.webhooks.1.authentication.apiKeyHeaderValue',
    'publishers.webhooks.1.destinationUrl',
    'publishers.webhooks.1.signingSecret',
    'publishers.webhooks.2.authentication.basicAuthPassword',
    'publishers.webhooks.2.destinationUrl',
    'server.https.keyPassphrase',
  ]);
});
