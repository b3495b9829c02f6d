import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import Database from 'better-sqlite3';
import { demoProfileDocument } from '../../../src/demo-profile.js';
import { MqttPublisher, mqttHealthTagIds } from '../../../src/publishers/mqtt/mqtt-publisher.js';
import { mqttConfigSchema } from '../../../src/publishers/mqtt/schema.js';
import { Collections } from '../../../src/tags/collections.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { freePort, startMosquitto } from '../../helpers/mosquitto.js';
import { subscribe } from '../../helpers/mqtt-subscriber.js';
import { startTagd } from '../../helpers/tagd-process.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { until } from '../../helpers/until.js';

const t0 = Date.UTC(2026, 0, 1);

/** Resolves once the health tag `id` holds `value`. */
function healthIs(store: TagStore, id: string, value: unknown): Promise<void> {
  return new Promise<void>((resolve) => {
    if (store.get(id)?.value === value) return resolve();
    const off = store.subscribe((updates) => {
      if (updates.some((u) => u.sample.fullTagId === id && u.sample.value === value)) {
        off();
        resolve();
      }
    });
  });
}

test('broker killed (kill -9) and restarted: every message queued meanwhile arrives once, in order', async (t) => {
  const broker = await startMosquitto(t);
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  store.write([
    {
      fullTagId: 'Line1/Count',
      utcTimestamp: new Date(t0).toISOString(),
      quality: 'Good',
      value: 0,
    },
  ]);
  const collections = new Collections(store, [{ name: 'line1', members: ['Line1/**'] }]);
  await collections.start();
  t.teardown(() => collections.stop());
  const logs = captureLogs();
  const publisher = new MqttPublisher(
    mqttConfigSchema.parse({
      name: 'plant',
      brokerUrl: broker.url,
      collections: ['line1'],
      topicPrefix: 'tagd/gw1',
      loggingMode: 'Everything',
    }),
    { store, collections, clock, logger: logs.logger, stateDir: await tempDir(t) },
  );
  t.teardown(() => publisher.stop());
  const health = mqttHealthTagIds('plant');
  const on = healthIs(store, health.status, 'On');
  await publisher.start();
  await on;

  const down = healthIs(store, health.status, 'Error');
  await broker.kill();
  await down;
  const queued = 50;
  for (let i = 1; i <= queued; i++) {
    clock.advance(1000);
    store.write([
      {
        fullTagId: 'Line1/Count',
        utcTimestamp: new Date(clock.now()).toISOString(),
        quality: 'Good',
        value: i,
      },
    ]);
  }
  clock.advance(1000);
  t.is(publisher.state().queueDepth, queued);
  t.is(store.get(health.queueDepth)?.value, queued);
  t.true((store.get(health.oldestQueuedAgeSeconds)?.value as number) >= queued - 1);

  await broker.restart();
  const sub = await subscribe(t, broker.url, 'tagd/gw1/#');
  const back = healthIs(store, health.queueDepth, 0);
  // The next attempt is due within the capped wait (30 s) on the test's clock.
  clock.advance(30_000);
  await back;
  await publisher.idle();
  // A sentinel after the outbox: once it arrived, nothing of the outbox can still be on its way.
  const sentinel = 999;
  store.write([
    {
      fullTagId: 'Line1/Count',
      utcTimestamp: new Date(clock.now()).toISOString(),
      quality: 'Good',
      value: sentinel,
    },
  ]);
  clock.advance(1000);
  await sub.waitFor((list) => list.some((m) => String(m.payload).includes(`"value":${sentinel}`)));
  const values = sub.messages.flatMap((m) =>
    (JSON.parse(String(m.payload)) as { value: number }[]).map((entry) => entry.value),
  );
  t.deepEqual(values, [...Array.from({ length: queued }, (_, i) => i + 1), sentinel]);
  t.is(sub.messages.length, queued + 1);
  t.is(publisher.state().status, 'On');
  t.regex(logs.text(), /connected to the broker again after/);
});

test('tagd killed (kill -9) while the broker is down, then restarted: the outbox is delivered', async (t) => {
  const folder = await tempDir(t);
  const stateDir = join(folder, 'state');
  const profileFile = join(folder, 'profile.json');
  const port = await freePort();
  const profile = await demoProfileDocument();
  profile.publishers = {
    mqtt: [
      {
        name: 'cloud',
        brokerUrl: `mqtt://127.0.0.1:${port}`,
        collections: ['Line1'],
        format: 'json-per-tag',
        loggingMode: 'Everything',
        updateIntervalMs: 100,
        topicPrefix: 'plant/gw1',
      },
    ],
  };
  await writeFile(profileFile, JSON.stringify(profile));
  const env = { TAGD_STATE_DIR: stateDir };
  // The demo's extensions server has the fixed port 8081: another tagd of the suite (or a second
  // suite on the machine) may hold it.
  const args = [
    'start',
    '--profile',
    profileFile,
    '--listen',
    '127.0.0.1:0',
    '--extensions-listen',
    '127.0.0.1:0',
  ];
  const first = startTagd(args, { env });
  t.teardown(() => first.child.kill('SIGKILL'));
  await first.waitForLog('tagd ready');
  const outboxFile = join(stateDir, 'outbox', 'mqtt-cloud.db');
  const depth = () => {
    try {
      const db = new Database(outboxFile, { readonly: true, fileMustExist: true });
      try {
        return (db.prepare('SELECT COUNT(*) AS n FROM messages').get() as { n: number }).n;
      } finally {
        db.close();
      }
    } catch {
      return 0;
    }
  };
  await until(() => depth() >= 10, 'ten messages in the outbox', 60_000);
  first.child.kill('SIGKILL');
  await first.exited;

  const db = new Database(outboxFile, { readonly: true });
  const kept = db.prepare('SELECT topic, payload FROM messages ORDER BY id').all() as {
    topic: string;
    payload: Buffer;
  }[];
  db.close();
  t.true(kept.length >= 10);

  const broker = await startMosquitto(t, { port });
  const sub = await subscribe(t, broker.url, 'plant/gw1/#');
  const second = startTagd(args, { env });
  t.teardown(() => second.child.kill('SIGKILL'));
  await second.waitForLog('tagd ready');
  const got = await sub.waitForCount(kept.length, 60_000);
  t.deepEqual(
    got.slice(0, kept.length).map((m) => [m.topic, m.payload.toString()]),
    kept.map((row) => [row.topic, row.payload.toString()]),
  );
  second.child.kill('SIGTERM');
  await second.exited;
});
