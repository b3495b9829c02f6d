import test from 'ava';
import { findSecrets } from '../../../src/profile/secret-fields.js';
import { validateProfile } from '../../../src/profile/validate-profile.js';
import {
  clientIdOf,
  mqttConfigSchema,
  retainOf,
  topicPrefixOf,
} from '../../../src/publishers/mqtt/schema.js';

const base = { name: 'cloud', brokerUrl: 'mqtt://broker:1883', collections: ['Line1'] };

const messages = (input: unknown) => {
  const result = mqttConfigSchema.safeParse(input);
  return result.success
    ? []
    : result.error.issues.map((issue) => [issue.path.join('.'), issue.message]);
};

test('defaults: json, On Change every 1,000 ms at QoS 1, client id and prefix from the host name', (t) => {
  const config = mqttConfigSchema.parse(base);
  t.like(config, {
    format: 'json',
    loggingMode: 'On Change',
    updateIntervalMs: 1000,
    qos: 1,
    autoConnect: true,
    bufferLimitMB: 64,
    authentication: { mode: 'None' },
  });
  t.is(clientIdOf(config, 'gw1'), 'tagd-gw1-cloud');
  t.is(topicPrefixOf(config, 'gw1'), 'tagd/gw1');
  t.false(retainOf(config));
  t.true(retainOf(mqttConfigSchema.parse({ ...base, format: 'json-per-tag' })));
  t.false(retainOf(mqttConfigSchema.parse({ ...base, format: 'json-per-tag', retain: false })));
});

test('validation messages', (t) => {
  t.deepEqual(messages({ ...base, brokerUrl: '' }), [
    ['brokerUrl', 'You must provide an MQTT broker URL.'],
  ]);
  t.deepEqual(messages({ ...base, brokerUrl: 'http://broker' }), [
    ['brokerUrl', 'The broker URL must be an mqtt://, mqtts://, ws:// or wss:// address.'],
  ]);
  t.deepEqual(messages({ ...base, collections: [''] }), [
    ['collections.0', 'You must select a collection.'],
  ]);
  t.deepEqual(messages({ ...base, updateIntervalMs: 5 }), [
    [
      'updateIntervalMs',
      'The update interval must be a whole number of milliseconds from 10 to 86400000.',
    ],
  ]);
  t.deepEqual(messages({ ...base, qos: 2 }), [['qos', 'qos must be 0 or 1.']]);
  t.deepEqual(messages({ ...base, topicPrefix: 'a/+/b' }), [
    ['topicPrefix', 'must not hold the wildcards + or #'],
  ]);
  t.deepEqual(messages({ ...base, format: 'sparkplugB', retain: true }), [
    ['groupId', 'You must provide a group id for Sparkplug B.'],
    ['edgeNodeId', 'You must provide an edge node id for Sparkplug B.'],
    ['retain', 'Sparkplug B messages are never retained.'],
  ]);
  t.deepEqual(messages({ ...base, format: 'sparkplugB', groupId: 'a/b', edgeNodeId: 'gw1' }), [
    ['groupId', 'must not hold / + or #'],
  ]);
  t.deepEqual(messages({ ...base, authentication: { mode: 'Username password', username: 'u' } }), [
    ['authentication.password', 'You must provide a password.'],
  ]);
});

test('the broker URL, the password and the key passphrase are secrets', (t) => {
  const secrets = findSecrets(mqttConfigSchema, {
    ...base,
    authentication: { mode: 'Username password', username: 'u', password: 'p' },
  }).map((found) => found.path.join('.'));
  t.deepEqual(secrets, ['brokerUrl', 'authentication.password']);
  const withKey = findSecrets(mqttConfigSchema, {
    ...base,
    authentication: {
      mode: 'Client certificate',
      certFile: 'c.pem',
      keyFile: 'k.pem',
      keyPassphrase: 'x',
    },
  }).map((found) => found.path.join('.'));
  t.deepEqual(withKey, ['brokerUrl', 'authentication.keyPassphrase']);
});

test('an MQTT publisher cannot share its name with a webhook publisher (health tags)', (t) => {
  const result = validateProfile({
    collections: [{ name: 'Line1', members: ['Demo/**'] }],
    publishers: {
      webhooks: [
        { name: 'cloud', destinationUrl: 'https://example.com/hook', collections: ['Line1'] },
      ],
      mqtt: [base],
    },
  });
  t.false(result.ok);
  t.deepEqual(
    result.errors.map((error) => error.path),
    ['publishers.mqtt[0].name'],
  );
});

test('primaryHostId and acceptWrites: Sparkplug only; acceptWrites defaults to false', (t) => {
  const sparkplug = { ...base, format: 'sparkplugB', groupId: 'Plant1', edgeNodeId: 'gw1' };
  t.like(mqttConfigSchema.parse(sparkplug), { acceptWrites: false, primaryHostId: undefined });
  t.like(mqttConfigSchema.parse({ ...sparkplug, primaryHostId: 'central', acceptWrites: true }), {
    acceptWrites: true,
    primaryHostId: 'central',
  });
  t.deepEqual(messages({ ...sparkplug, primaryHostId: 'a/b' }), [
    ['primaryHostId', 'must not hold / + or #'],
  ]);
  t.deepEqual(messages({ ...base, primaryHostId: 'central', acceptWrites: true }), [
    ['primaryHostId', 'primaryHostId applies to the sparkplugB format only.'],
    ['acceptWrites', 'acceptWrites applies to the sparkplugB format only.'],
  ]);
  t.deepEqual(messages({ ...base, acceptWrites: false }), []);
});
