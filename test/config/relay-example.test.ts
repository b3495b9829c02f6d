/**
 * config/examples/relay-edge.json and relay-central.json, the two gateways of docs/relay.md:
 * both pass `tagd profile check`; run against a real Mosquitto (only the broker address and the
 * listen address changed), a real tagd edge process publishes Sparkplug B and the central
 * gateway's Sparkplug host driver relays its tags; a kill -9 of the edge turns them Unavailable
 * on the central side (the broker publishes the edge's NDEATH Will).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { demoDaemon } from '../helpers/demo-daemon.js';
import { startMosquitto } from '../helpers/mosquitto.js';
import { startTagd } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const example = (name: string) =>
  fileURLToPath(new URL(`../../config/examples/${name}.json`, import.meta.url));
const license = fileURLToPath(new URL('../../config/demo-license.json', import.meta.url));

for (const name of ['relay-edge', 'relay-central']) {
  test(`tagd profile check accepts ${name}.json`, async (t) => {
    const check = startTagd(['profile', 'check', example(name)], {
      env: { TAGD_STATE_DIR: await tempDir(t) },
    });
    t.is(await check.exited, 0, check.stdout() + check.stderr());
  });
}

test('a real tagd edge relays its tags to the central gateway; killed, they go Unavailable there', async (t) => {
  const broker = await startMosquitto(t);
  const folder = await tempDir(t);
  const edgeProfile = JSON.parse(await readFile(example('relay-edge'), 'utf8'));
  edgeProfile.$schema = undefined;
  edgeProfile.license.file = license;
  edgeProfile.publishers.mqtt[0].brokerUrl = broker.url;
  const edgeFile = join(folder, 'edge.json');
  await writeFile(edgeFile, JSON.stringify(edgeProfile));

  const centralProfile = JSON.parse(await readFile(example('relay-central'), 'utf8'));
  centralProfile.$schema = undefined;
  centralProfile.license.file = license;
  centralProfile.drivers[0].brokerUrl = broker.url;
  const central = await demoDaemon(t, { profile: centralProfile });
  const store = central.daemon.store;
  if (store === undefined) throw new Error('the central daemon has no store');

  const edge = startTagd(['start', '--profile', edgeFile, '--listen', '127.0.0.1:0'], {
    env: { TAGD_STATE_DIR: join(folder, 'edge-state') },
  });
  t.teardown(() => {
    edge.child.kill('SIGKILL');
  });
  await edge.waitForLog('tagd ready');

  const temperature = 'site/Hall2/line1/Oven1/Zone1/Temperature';
  const until = (predicate: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`condition not met: ${JSON.stringify(store.get(temperature))}`));
      }, 120_000);
      const check = () => {
        if (!predicate()) return;
        stop();
        resolve();
      };
      const unsubscribe = store.subscribe(check);
      const stop = () => {
        unsubscribe();
        clearTimeout(timer);
      };
      check();
    });
  await until(() => store.get(temperature)?.quality === 'Good');
  const sample = store.get(temperature);
  t.is(typeof sample?.value, 'number');
  t.is(sample?.metadata?.source, 'sparkplug:Hall2/line1/Oven1/Zone1/Temperature');
  t.is(store.get('site/Hall2/line1/Oven1/Zone1/HeaterOn')?.quality, 'Good');
  const nodes = (
    central.daemon as unknown as { drivers: { get(name: string): unknown } }
  ).drivers.get('site') as {
    relayNodes(): { edgeNodeId: string; online: boolean; devices: unknown[] }[];
  };
  t.like(nodes.relayNodes()[0], { edgeNodeId: 'line1', online: true });

  // The driver's series, like every driver's.
  const metrics = await (await fetch(`${central.url}/metrics`)).text();
  const messages =
    /^tagd_driver_relay_messages_total\{driver="site",type="sparkplug"\} (\d+)$/m.exec(metrics);
  t.true(Number(messages?.[1]) > 0, metrics.slice(0, 300));

  // A reload that changes the driver restarts it: its tags go and come back. The old driver
  // drains (docs/relay.md, "Stopping the host"): the edge, following its STATE, has ended its
  // session before the new driver subscribes, and births on the new online STATE by itself, so
  // the new driver sees no DATA before a birth and asks for no rebirth.
  centralProfile.drivers[0].staleAfterMs = 30_000;
  await writeFile(central.profileFile, JSON.stringify(centralProfile));
  await central.daemon.reload('cli');
  t.not(store.get(temperature)?.quality, 'Good');
  await until(() => store.get(temperature)?.quality === 'Good');
  const site = (
    central.daemon as unknown as { drivers: { get(name: string): unknown } }
  ).drivers.get('site') as {
    relayNodes(): { rebirthsRequested: number }[];
    status(): { counters?: Record<string, number> };
  };
  t.is(site.relayNodes()[0]?.rebirthsRequested, 0);
  t.is(site.status().counters?.dataBeforeBirth, 0);

  edge.child.kill('SIGKILL');
  // The broker notices the dead connection (its socket closed) and publishes the NDEATH Will.
  await until(() => store.get(temperature)?.quality === 'Unavailable');
  t.regex(store.get(temperature)?.message ?? '', /NDEATH/);
  t.is(store.get('site/Hall2/line1/Oven1/Parts')?.quality, 'Unavailable');
});
