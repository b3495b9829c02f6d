/**
 * Sparkplug store-and-forward across a kill -9 of tagd: samples stored while the primary host
 * is offline survive in the durable outbox, and once the host is online the restarted tagd
 * forwards each of them exactly once, in order, as historical data with its own timestamp.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import Database from 'better-sqlite3';
import { demoProfileDocument } from '../../../src/demo-profile.js';
import { type StoredSample, storedSamplesOf } from '../../../src/publishers/mqtt/stored-samples.js';
import { startMosquitto } from '../../helpers/mosquitto.js';
import { subscribe } from '../../helpers/mqtt-subscriber.js';
import { decodeSparkplug, scriptedHost } from '../../helpers/sparkplug-host.js';
import { startTagd } from '../../helpers/tagd-process.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { until } from '../../helpers/until.js';

test('tagd killed (kill -9) while storing: after the restart every stored sample is forwarded once, in order, as historical', async (t) => {
  const folder = await tempDir(t);
  const stateDir = join(folder, 'state');
  const profileFile = join(folder, 'profile.json');
  const broker = await startMosquitto(t);
  const host = await scriptedHost(t, broker.url);
  await host.state(false, 1_000);
  const profile = await demoProfileDocument();
  profile.publishers = {
    mqtt: [
      {
        name: 'edge',
        brokerUrl: broker.url,
        collections: ['Line1'],
        format: 'sparkplugB',
        groupId: 'Plant1',
        edgeNodeId: 'gw1',
        primaryHostId: 'central',
        loggingMode: 'Everything',
        updateIntervalMs: 100,
      },
    ],
  };
  await writeFile(profileFile, JSON.stringify(profile));
  const env = { TAGD_STATE_DIR: stateDir };
  const args = [
    'start',
    '--profile',
    profileFile,
    '--listen',
    '127.0.0.1:0',
    '--extensions-listen',
    '127.0.0.1:0',
  ];
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/#');
  const first = startTagd(args, { env });
  t.teardown(() => first.child.kill('SIGKILL'));
  await first.waitForLog('tagd ready');
  const outboxFile = join(stateDir, 'outbox', 'mqtt-edge.db');
  const read = (): StoredSample[] => {
    try {
      const db = new Database(outboxFile, { readonly: true, fileMustExist: true });
      try {
        const rows = db.prepare('SELECT topic, payload FROM messages ORDER BY id').all() as {
          topic: string;
          payload: Buffer;
        }[];
        return rows.flatMap((row) => storedSamplesOf(row.topic, row.payload) ?? []);
      } finally {
        db.close();
      }
    } catch {
      return [];
    }
  };
  await until(() => read().length >= 50, 'fifty samples stored', 60_000);
  first.child.kill('SIGKILL');
  await first.exited;
  const kept = read();
  t.true(kept.length >= 50);
  // Only the Will (NDEATH) of the killed session: no births, no data while the host is offline.
  t.deepEqual(
    decodeSparkplug(sub.messages).map((m) => m.type),
    ['NDEATH'],
  );
  const before = sub.messages.length;

  const second = startTagd(args, { env });
  t.teardown(() => second.child.kill('SIGKILL'));
  await second.waitForLog('tagd ready');
  await host.state(true, 2_000);
  const key = (tag: string, timestamp: number) => `${tag}@${timestamp}`;
  const keptKeys = kept.map((sample) => key(sample.fullTagId, sample.timestamp));
  const historical = () =>
    decodeSparkplug(sub.messages)
      .filter((m) => m.type === 'DDATA')
      .flatMap((m) => m.metrics)
      .filter((m) => m.historical);
  await until(() => historical().length >= kept.length, 'the stored samples forwarded', 60_000);
  // Live data follows the catch-up.
  await until(
    () =>
      decodeSparkplug(sub.messages).some(
        (m) => m.type === 'DDATA' && m.metrics.some((x) => !x.historical),
      ),
    'live data',
    60_000,
  );
  // In order per device (a historical DDATA holds one device's samples of a window), so per tag.
  const forwarded = historical();
  const device = (key: string) => key.slice(0, key.indexOf('/'));
  const byDevice = (pairs: [string, unknown][]) => {
    const map = new Map<string, [string, unknown][]>();
    for (const pair of pairs) {
      const list = map.get(device(pair[0])) ?? [];
      list.push(pair);
      map.set(device(pair[0]), list);
    }
    return map;
  };
  const keptByDevice = byDevice(kept.map((sample, i) => [keptKeys[i] as string, sample.value]));
  const forwardedByDevice = byDevice(
    forwarded.map((m) => [key(m.tag, m.timestamp), m.value] as [string, unknown]),
  );
  t.true(keptByDevice.size >= 1);
  for (const [name, list] of keptByDevice) {
    t.deepEqual(forwardedByDevice.get(name)?.slice(0, list.length), list, name);
  }
  const all = decodeSparkplug(sub.messages)
    .filter((m) => m.type === 'DDATA')
    .flatMap((m) => m.metrics.map((x) => key(x.tag, x.timestamp)));
  t.is(new Set(all).size, all.length, 'no sample is sent twice');
  const types = decodeSparkplug(sub.messages.slice(before)).map((m) => m.type);
  t.deepEqual(types.slice(0, 2), ['NBIRTH', 'DBIRTH']);
  second.child.kill('SIGTERM');
  await second.exited;
});
