/**
 * One tagd reads another without Sparkplug: an edge tagd publishes its simulator's tags as
 * json-per-tag through its MQTT publisher; a central tagd's MQTT driver (format tagd) makes them
 * its own tags, with the edge's values and timestamps. Killing the edge leaves the central tags
 * Stale at the bound, never Good; the central tagd shows the driver in its Drivers API and
 * metrics. Both are real `tagd start` processes on a real Mosquitto.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { adminToken } from '../../helpers/demo-daemon.js';
import { startMosquitto } from '../../helpers/mosquitto.js';
import { sampleWhen } from '../../helpers/sample-when.js';
import { startTagd } from '../../helpers/tagd-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const license = fileURLToPath(new URL('../../../config/demo-license.json', import.meta.url));

test('a central tagd reads an edge tagd’s json-per-tag output with an mqtt driver', async (t) => {
  t.timeout(600_000);
  const broker = await startMosquitto(t);
  const folder = await tempDir(t);
  const edgeProfile = {
    license: { file: license },
    drivers: [
      {
        type: 'simulator',
        name: 'Oven1',
        scanIntervalMs: 100,
        tags: [
          { name: 'Zone1/Setpoint', kind: 'square', low: 180, high: 180, unit: '°C' },
          { name: 'Parts', kind: 'counter', start: 0, step: 1 },
        ],
      },
    ],
    collections: [{ name: 'Ovens', members: ['Oven1/**'] }],
    publishers: {
      mqtt: [
        {
          name: 'site',
          brokerUrl: broker.url,
          collections: ['Ovens'],
          format: 'json-per-tag',
          loggingMode: 'Everything',
          updateIntervalMs: 100,
          topicPrefix: 'plant/gw1',
        },
      ],
    },
  };
  const centralProfile = {
    // The mqtt driver relays another gateway's data: the data relay feature of the license.
    license: { file: license },
    drivers: [
      {
        type: 'mqtt',
        name: 'Gw1',
        brokerUrl: broker.url,
        staleAfterMs: 3000,
        subscriptions: [{ topic: 'plant/gw1/#', tag: '{1}', format: 'tagd' }],
      },
    ],
  };
  const start = async (name: string, profile: unknown) => {
    const file = join(folder, `${name}.json`);
    await writeFile(file, JSON.stringify(profile));
    const stateDir = join(folder, name);
    const process = startTagd(
      ['start', '--profile', file, '--listen', '127.0.0.1:0', '--extensions-listen', '127.0.0.1:0'],
      { env: { TAGD_STATE_DIR: stateDir } },
    );
    t.teardown(() => process.child.kill('SIGKILL'));
    const url = (await process.waitForLog('tagd ready')).url as string;
    return { process, url, token: await adminToken(url, stateDir) };
  };
  const central = await start('central', centralProfile);
  const edge = await start('edge', edgeProfile);

  const setpoint = await sampleWhen(
    central.url,
    central.token,
    'Gw1/Oven1/Zone1/Setpoint',
    (sample) => sample.quality === 'Good',
  );
  t.is(setpoint.value, 180);
  t.is(setpoint.metadata?.source, 'mqtt:plant/gw1/Oven1/Zone1/Setpoint');
  // The counter climbs on the central side as on the edge, with the edge's own timestamps.
  const first = await sampleWhen(
    central.url,
    central.token,
    'Gw1/Oven1/Parts',
    (s) => s.quality === 'Good',
  );
  const later = await sampleWhen(
    central.url,
    central.token,
    'Gw1/Oven1/Parts',
    (s) => s.quality === 'Good' && (s.value as number) > (first.value as number),
  );
  t.true(Date.parse(later.utcTimestamp) > Date.parse(first.utcTimestamp));
  const edgeParts = await sampleWhen(edge.url, edge.token, 'Oven1/Parts', () => true);
  t.true((edgeParts.value as number) >= (later.value as number));

  const drivers = (await (
    await fetch(`${central.url}/api/v2/Drivers/Gw1`, {
      headers: { Authorization: `Bearer ${central.token}` },
    })
  ).json()) as { type: string; state: string; tagCount: number; counters: Record<string, number> };
  t.is(drivers.type, 'mqtt');
  t.is(drivers.state, 'Running');
  t.true((drivers.counters.messagesReceived ?? 0) > 0);
  t.is(drivers.counters.malformed, 0);
  const metrics = await (await fetch(`${central.url}/metrics`)).text();
  t.regex(metrics, /tagd_driver_state\{driver="Gw1",type="mqtt",state="Running"\} 1/);

  // The edge dies without a word (no Will for the json formats): its tags go Stale at the bound.
  edge.process.child.kill('SIGKILL');
  await edge.process.exited;
  const stale = await sampleWhen(
    central.url,
    central.token,
    'Gw1/Oven1/Parts',
    (s) => s.quality !== 'Good',
  );
  t.is(stale.quality, 'Stale');
  t.is(stale.reason, 'NoUpdate');
  central.process.child.kill('SIGTERM');
  await central.process.exited;
});
