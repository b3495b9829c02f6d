import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { mqttHealthTagIds } from '../../../src/publishers/mqtt/mqtt-publisher.js';
import { makeCertificates, testKeyPassphrase } from '../../helpers/certificates.js';
import { adminToken, demoDaemon } from '../../helpers/demo-daemon.js';
import { startMosquitto } from '../../helpers/mosquitto.js';
import { subscribe } from '../../helpers/mqtt-subscriber.js';

const base = '/api/v2/Publishers/Mqtt';

async function api(url: string, token: string, path: string, method = 'GET', body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: answers read at paths the test knows
  const json: Record<string, any> = text ? JSON.parse(text) : {};
  return { status: response.status, json };
}

test('create, read masked, replace with the masks, start, stop and delete an MQTT publisher', async (t) => {
  const broker = await startMosquitto(t, { users: { gateway: 'broker-pass-1' } });
  const { daemon, url, stateDir, profileFile, logs } = await demoDaemon(t);
  const token = await adminToken(url, stateDir);
  const config = {
    name: 'cloud',
    brokerUrl: broker.url,
    authentication: { mode: 'Username password', username: 'gateway', password: 'broker-pass-1' },
    collections: ['Line1'],
    topicPrefix: 'plant/gw1',
  };

  const created = await api(url, token, base, 'POST', config);
  t.is(created.status, 201);
  t.is(created.json.brokerUrl, '********');
  t.is(created.json.authentication.password, '********');
  t.is(created.json.format, 'json');
  t.is(created.json.updateIntervalMs, 1000);
  t.is(created.json.qos, 1);

  // Sealed at rest.
  const disk = JSON.parse(await readFile(profileFile, 'utf8'));
  const saved = disk.publishers.mqtt[0];
  t.regex(saved.brokerUrl, /^enc:v1:/);
  t.regex(saved.authentication.password, /^enc:v1:/);

  // The health tag says On once the broker accepted.
  const store = daemon.store;
  await new Promise<void>((resolve) => {
    const id = mqttHealthTagIds('cloud').status;
    if (store?.get(id)?.value === 'On') return resolve();
    const off = store?.subscribe((updates) => {
      if (updates.some((u) => u.sample.fullTagId === id && u.sample.value === 'On')) {
        off?.();
        resolve();
      }
    });
  });
  const read = await api(url, token, `${base}/cloud`);
  t.is(read.status, 200);
  t.is(read.json.state.status, 'On');
  t.true(read.json.state.connected);

  // Saving back what GET returned keeps the secrets.
  const { state: _state, ...edited } = read.json;
  const replaced = await api(url, token, `${base}/cloud`, 'PUT', { ...edited, qos: 0 });
  t.is(replaced.status, 200);
  t.is(replaced.json.qos, 0);
  const reread = JSON.parse(await readFile(profileFile, 'utf8')).publishers.mqtt[0];
  t.regex(reread.authentication.password, /^enc:v1:/);

  // A kept password cannot follow the broker URL to another host.
  const moved = await api(url, token, `${base}/cloud`, 'PUT', {
    ...edited,
    brokerUrl: 'mqtt://elsewhere.example:1883',
  });
  t.is(moved.status, 400);
  t.is(moved.json.errors?.[0]?.path, 'authentication.password');

  // A webhook's name is taken: they share the health tags.
  const clash = await api(url, token, base, 'POST', { ...config, name: 'demo-receiver' });
  t.is(clash.status, 409);

  const stopped = await api(url, token, `${base}/cloud/Stop`, 'POST');
  t.is(stopped.json.status, 'Off');
  t.is(stopped.json.reason, 'stopped');
  const started = await api(url, token, `${base}/cloud/Start`, 'POST');
  t.not(started.json.status, 'Off');

  const list = await api(url, token, base);
  t.deepEqual(
    (list.json as unknown as { name: string }[]).map((p) => p.name),
    ['cloud'],
  );
  const outboxFile = join(stateDir, 'outbox', 'mqtt-cloud.db');
  t.true(existsSync(outboxFile));
  t.is((await api(url, token, `${base}/cloud`, 'DELETE')).status, 204);
  // Its undelivered messages go with it.
  t.false(existsSync(outboxFile));
  t.is((await api(url, token, `${base}/cloud`)).status, 404);

  const text = logs.text();
  t.notRegex(text, /broker-pass-1/);
  t.notRegex(text, new RegExp(`127\\.0\\.0\\.1:${broker.port}`));
  t.regex(text, /"event":"mqtt-publisher-created"/);
});

test('without the data relay license every MQTT publisher route is 403 feature-unavailable', async (t) => {
  const { url, stateDir } = await demoDaemon(t, {
    profile: (demo: Record<string, unknown>) => {
      demo.license = undefined;
    },
  });
  const token = await adminToken(url, stateDir);
  const list = await api(url, token, base);
  t.is(list.status, 403);
  t.is(list.json.code, 'feature-unavailable');
  t.regex(list.json.detail, /^The MQTT publisher needs the data relay feature/);
  const create = await api(url, token, base, 'POST', {
    name: 'x',
    brokerUrl: 'mqtt://127.0.0.1:1',
    collections: ['Line1'],
  });
  t.is(create.status, 403);
});

test('files the configuration names are read at save: one its start could not use is 400 naming the field, nothing saved', async (t) => {
  const certs = await makeCertificates(t);
  const { url, stateDir, profileFile } = await demoDaemon(t);
  const token = await adminToken(url, stateDir);
  const config = (
    authentication: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) => ({
    name: 'cloud',
    // Nothing listens there: a saved publisher only tries to connect.
    brokerUrl: 'mqtts://127.0.0.1:1',
    authentication: { mode: 'Client certificate', ...authentication },
    collections: ['Line1'],
    ...extra,
  });
  const saved = async () =>
    JSON.parse(await readFile(profileFile, 'utf8')).publishers.mqtt?.length ?? 0;

  // The request of issue 20: it answered 201, and 10 ms later the daemon was gone.
  const passwd = await api(
    url,
    token,
    base,
    'POST',
    config({ certFile: '/etc/passwd', keyFile: '/etc/passwd' }),
  );
  t.is(passwd.status, 400);
  t.is(passwd.json.code, 'validation-failed');
  t.deepEqual(
    passwd.json.errors.map((error: { path: string }) => error.path),
    ['authentication.certFile', 'authentication.keyFile'],
  );
  t.is(
    passwd.json.errors[0].message,
    'The client certificate file /etc/passwd holds no PEM certificate.',
  );
  const refused = [
    [
      { certFile: certs.certFile, keyFile: certs.otherKeyFile },
      'authentication.keyFile',
      /does not belong to the client certificate/,
    ],
    [
      { certFile: certs.certFile, keyFile: certs.encryptedKeyFile },
      'authentication.keyPassphrase',
      /is encrypted: set authentication.keyPassphrase/,
    ],
    [
      { certFile: certs.certFile, keyFile: certs.encryptedKeyFile, keyPassphrase: 'wrong' },
      'authentication.keyPassphrase',
      /cannot be decrypted: authentication.keyPassphrase is wrong/,
    ],
  ] as const;
  for (const [authentication, path, message] of refused) {
    const answer = await api(url, token, base, 'POST', config(authentication));
    t.is(answer.status, 400, path);
    t.is(answer.json.errors?.[0]?.path, path);
    t.regex(answer.json.errors?.[0]?.message, message);
  }
  const ca = await api(url, token, base, 'POST', {
    ...config({ certFile: certs.certFile, keyFile: certs.keyFile }),
    caFile: certs.keyFile,
  });
  t.is(ca.status, 400);
  t.deepEqual(
    ca.json.errors?.map((error: { path: string }) => error.path),
    ['caFile'],
  );
  t.is(await saved(), 0, 'nothing was saved');

  // A usable pair is saved; PUT checks again, with the stored passphrase behind the mask.
  const usable = config(
    { certFile: certs.certFile, keyFile: certs.encryptedKeyFile, keyPassphrase: testKeyPassphrase },
    { caFile: certs.caFile },
  );
  t.is((await api(url, token, base, 'POST', usable)).status, 201);
  const { state: _state, ...edited } = (await api(url, token, `${base}/cloud`)).json;
  t.is(edited.authentication.keyPassphrase, '********');
  t.is((await api(url, token, `${base}/cloud`, 'PUT', { ...edited, qos: 0 })).status, 200);
  const swapped = await api(url, token, `${base}/cloud`, 'PUT', {
    ...edited,
    authentication: { ...edited.authentication, certFile: certs.untrusted.certFile },
  });
  t.is(swapped.status, 400);
  t.is(swapped.json.errors?.[0]?.path, 'authentication.keyFile');
  t.is(
    JSON.parse(await readFile(profileFile, 'utf8')).publishers.mqtt[0].qos,
    0,
    'PUT saved nothing',
  );
});

test('Send test publishes one batch at QoS 1 to <topicPrefix>/test and answers the PUBACK; a refusing broker is named; audited, no secret', async (t) => {
  const broker = await startMosquitto(t, {
    users: { gateway: 'broker-pass-2', watcher: 'watch-pass' },
    acl: 'user gateway\ntopic readwrite plant/gw1/#\nuser watcher\ntopic read #\n',
  });
  const { url, stateDir, logs } = await demoDaemon(t);
  const token = await adminToken(url, stateDir);
  const watcher = await subscribe(t, broker.url, 'plant/gw1/test', {
    username: 'watcher',
    password: 'watch-pass',
  });
  const config = {
    name: 'cloud',
    brokerUrl: broker.url,
    authentication: { mode: 'Username password', username: 'gateway', password: 'broker-pass-2' },
    collections: ['Line1'],
    topicPrefix: 'plant/gw1',
    autoConnect: false,
  };
  t.is((await api(url, token, base, 'POST', config)).status, 201);
  const tested = await api(url, token, `${base}/cloud/Test`, 'POST');
  t.is(tested.status, 200);
  t.like(tested.json, { ok: true, pubackReasonCode: 0, attempts: 1 });
  t.true(tested.json.samples > 0);
  const [message] = await watcher.waitForCount(1);
  const entries = JSON.parse(String(message?.payload)) as { value?: unknown }[];
  t.is(entries.length, tested.json.samples);
  t.true(entries.every((entry) => entry.value === undefined || typeof entry.value === 'number'));

  // A prefix the ACL does not grant: MQTT 5 brokers answer the PUBACK with 135 (not authorized).
  const denied = await api(url, token, `${base}/cloud`, 'PUT', {
    ...config,
    brokerUrl: '********',
    authentication: { mode: 'Username password', username: 'gateway', password: '********' },
    topicPrefix: 'elsewhere',
  });
  t.is(denied.status, 200);
  const refused = await api(url, token, `${base}/cloud/Test`, 'POST');
  t.like(refused.json, { ok: false, pubackReasonCode: 135 });
  t.regex(String(refused.json.error), /not authori[sz]ed/i);

  const text = logs.text();
  t.notRegex(text, /broker-pass-2/);
  t.notRegex(JSON.stringify([tested.json, refused.json]), /broker-pass-2|127\.0\.0\.1/);
  t.regex(text, /"event":"mqtt-publisher-tested"/);
});
