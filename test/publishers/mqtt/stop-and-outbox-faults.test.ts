import { readdirSync, readFileSync } from 'node:fs';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { stopGraceMs } from '../../../src/publishers/mqtt/broker-connection.js';
import { MqttPublisher, mqttHealthTagIds } from '../../../src/publishers/mqtt/mqtt-publisher.js';
import { mqttConfigSchema } from '../../../src/publishers/mqtt/schema.js';
import { Collections } from '../../../src/tags/collections.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { freePort, startMosquitto } from '../../helpers/mosquitto.js';
import { subscribe } from '../../helpers/mqtt-subscriber.js';
import { tempDir } from '../../helpers/temp-dir.js';

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

/** The pid of the Mosquitto listening on `port` (found by its generated configuration). */
function mosquittoPid(port: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!args[0]?.endsWith('mosquitto')) continue;
      const config = args[args.indexOf('-c') + 1];
      if (config && readFileSync(config, 'utf8').includes(`listener ${port} `))
        return Number(entry);
    } catch {
      // A process that ended meanwhile, or not ours.
    }
  }
  throw new Error(`no Mosquitto listens on ${port}`);
}

/** Rejects if `promise` has not settled within `ms`: a guard against a hang, not a timing check. */
function guard<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, hang]).finally(() => clearTimeout(timer));
}

async function setup(t: ExecutionContext, brokerUrl: string) {
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  const collections = new Collections(store, [{ name: 'line1', members: ['Line1/**'] }]);
  await collections.start();
  t.teardown(() => collections.stop());
  const logs = captureLogs();
  const stateDir = await tempDir(t);
  const publisher = new MqttPublisher(
    mqttConfigSchema.parse({
      name: 'plant',
      brokerUrl,
      collections: ['line1'],
      topicPrefix: 'tagd/gw1',
      format: 'json-per-tag',
      loggingMode: 'Everything',
      qos: 1,
    }),
    { store, collections, clock, logger: logs.logger, stateDir },
  );
  t.teardown(() => publisher.stop());
  const write = (tag: string, value: number) =>
    store.write([
      {
        fullTagId: `Line1/${tag}`,
        utcTimestamp: new Date(clock.now()).toISOString(),
        quality: 'Good',
        value,
      },
    ]);
  return { clock, store, logs, publisher, write, health: mqttHealthTagIds('plant') };
}

test('stop while the broker no longer answers (SIGSTOP) resolves, and the batch in flight is delivered after the next start', async (t) => {
  const broker = await startMosquitto(t);
  const { clock, store, publisher, write, health } = await setup(t, broker.url);
  const on = healthIs(store, health.status, 'On');
  await publisher.start();
  await on;

  const pid = mosquittoPid(broker.port);
  process.kill(pid, 'SIGSTOP');
  t.teardown(() => {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Already gone.
    }
  });
  write('A', 1);
  write('B', 2);
  write('C', 3);
  clock.advance(1000);
  // The batch is in flight: published, its PUBACKs never come.
  t.is(publisher.state().queueDepth, 3);

  const stopping = publisher.stop();
  // The grace of the stop runs on the publisher's clock.
  clock.advance(stopGraceMs);
  await guard(stopping, 30_000, 'stop');
  t.is(publisher.state().status, 'Off');
  const db = new Database(publisher.outboxFile, { readonly: true });
  const kept = db.prepare('SELECT topic FROM messages ORDER BY id').all() as { topic: string }[];
  db.close();
  t.deepEqual(
    kept.map((row) => row.topic),
    ['tagd/gw1/Line1/A', 'tagd/gw1/Line1/B', 'tagd/gw1/Line1/C'],
  );

  process.kill(pid, 'SIGCONT');
  const sub = await subscribe(t, broker.url, 'tagd/gw1/#');
  const drained = healthIs(store, health.queueDepth, 0);
  await publisher.start();
  await drained;
  const got = await sub.waitFor((list) =>
    ['A', 'B', 'C'].every((tag) => list.some((m) => m.topic === `tagd/gw1/Line1/${tag}`)),
  );
  const value = (tag: string) =>
    JSON.parse(String(got.findLast((m) => m.topic === `tagd/gw1/Line1/${tag}`)?.payload)).value;
  t.deepEqual([value('A'), value('B'), value('C')], [1, 2, 3]);
});

test('an outbox that cannot be written (SQLITE_READONLY) does not crash: Error with the reason, the batch counted as lost', async (t) => {
  // No broker listens: every batch goes to the outbox.
  const { clock, publisher, write, logs } = await setup(t, `mqtt://127.0.0.1:${await freePort()}`);
  await publisher.start();
  const outbox = (publisher as unknown as { outbox: { db: Database.Database } }).outbox;
  // The same synchronous throw as a full disk or an I/O error, from the publisher's own handle.
  outbox.db.pragma('query_only = ON');

  write('A', 1);
  clock.advance(1000);
  let state = publisher.state();
  t.is(state.status, 'Error');
  t.regex(state.reason ?? '', /^the outbox could not be written: SQLITE_READONLY/);
  t.is(state.counters.failures, 1);

  write('A', 2);
  clock.advance(1000);
  state = publisher.state();
  t.is(state.counters.failures, 2);
  t.is(state.status, 'Error');
  // Logged once per outage.
  t.is(logs.text().match(/the outbox could not be written/g)?.length, 1);

  // Writable again: the outage ends and batches are kept once more.
  outbox.db.pragma('query_only = OFF');
  write('A', 3);
  clock.advance(1000);
  t.is(publisher.state().counters.failures, 2);
  t.is(publisher.state().queueDepth, 1);
  t.regex(logs.text(), /the outbox can be written again/);
});

test('json-per-tag: a tag removed from the store has its retained topic cleared', async (t) => {
  const broker = await startMosquitto(t);
  const { clock, store, publisher, write, health } = await setup(t, broker.url);
  const on = healthIs(store, health.status, 'On');
  await publisher.start();
  await on;
  const first = await subscribe(t, broker.url, 'tagd/gw1/#');
  write('A', 1);
  write('B', 2);
  clock.advance(1000);
  await first.waitFor((list) => list.some((m) => m.topic === 'tagd/gw1/Line1/B'));

  // As when the driver of Line1/A is removed.
  store.remove(['Line1/A']);
  await first.waitFor((list) =>
    list.some((m) => m.topic === 'tagd/gw1/Line1/A' && m.payload.length === 0),
  );

  // A consumer that comes later gets B's retained value and nothing of A.
  const later = await subscribe(t, broker.url, 'tagd/gw1/#');
  // A sentinel published after the subscription: the retained messages came before it.
  write('C', 3);
  clock.advance(1000);
  await later.waitFor((list) => list.some((m) => m.topic === 'tagd/gw1/Line1/C'));
  t.deepEqual(
    later.messages.map((m) => m.topic),
    ['tagd/gw1/Line1/B', 'tagd/gw1/Line1/C'],
  );
});
