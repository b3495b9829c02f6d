import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { mqttHealthTagIds } from '../../../src/publishers/mqtt/mqtt-publisher.js';
import { adminToken, demoDaemon } from '../../helpers/demo-daemon.js';
import { startMosquitto } from '../../helpers/mosquitto.js';

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
