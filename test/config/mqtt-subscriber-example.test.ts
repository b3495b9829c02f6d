/**
 * config/examples/mqtt-subscriber.json, the example that opens docs/mqtt-subscriber.md, passes
 * `tagd profile check` and works against a real Mosquitto with the MQTT example as its edge:
 * only the broker addresses change.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { connectAsync } from 'mqtt';
import type { Sample } from '../../src/tags/sample.js';
import { adminToken, demoDaemon } from '../helpers/demo-daemon.js';
import { startMosquitto } from '../helpers/mosquitto.js';
import { startTagd } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const exampleFile = fileURLToPath(
  new URL('../../config/examples/mqtt-subscriber.json', import.meta.url),
);
const edgeFile = fileURLToPath(new URL('../../config/examples/mqtt.json', import.meta.url));
const license = fileURLToPath(new URL('../../config/demo-license.json', import.meta.url));

test('tagd profile check accepts the MQTT subscriber example', async (t) => {
  const check = startTagd(['profile', 'check', exampleFile], {
    env: { TAGD_STATE_DIR: await tempDir(t) },
  });
  t.is(await check.exited, 0, check.stdout() + check.stderr());
});

test('the MQTT subscriber example reads the MQTT example’s gateway and two sensors', async (t) => {
  const broker = await startMosquitto(t);
  const central = JSON.parse(await readFile(exampleFile, 'utf8'));
  central.$schema = undefined;
  central.drivers[0].brokerUrl = broker.url;
  central.license.file = license;
  const edge = JSON.parse(await readFile(edgeFile, 'utf8'));
  edge.$schema = undefined;
  edge.license.file = license;
  for (const publisher of edge.publishers.mqtt) publisher.brokerUrl = broker.url;
  const centralDaemon = await demoDaemon(t, { profile: central });
  const edgeDaemon = await demoDaemon(t, { profile: edge });
  const token = await adminToken(centralDaemon.url, centralDaemon.stateDir);
  const sampleWhen = async (path: string, accept: (sample: Sample) => boolean) => {
    for (;;) {
      const response = await fetch(`${centralDaemon.url}/api/v2/Tags/Sample/${path}`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      const sample = (await response.json()) as Sample;
      if (response.status === 200 && accept(sample)) return sample;
      // Pacing only; each round also lets the edge publish once more.
      edgeDaemon.clock.advance(1000);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const sensor = await connectAsync(broker.url, { reconnectPeriod: 0 });
  t.teardown(() => sensor.endAsync(true));
  await sampleWhen('Hall2/gw1/Oven1/Parts', (s) => s.quality === 'Good');
  const temperature = await sampleWhen(
    'Hall2/gw1/Oven1/Zone1/Temperature',
    (s) => s.quality === 'Good',
  );
  t.is(typeof temperature.value, 'number');
  await sensor.publishAsync('sensors/s1/temperature', '21.5');
  await sensor.publishAsync(
    'sensors/s1/status',
    JSON.stringify({ state: 'Running', ts: '2026-11-27T06:00:00Z' }),
  );
  const s1 = await sampleWhen('Hall2/Sensors/s1/Temperature', (s) => s.quality === 'Good');
  t.is(s1.value, 21.5);
  t.is(s1.metadata?.unit, '°C');
  const state = await sampleWhen('Hall2/Sensors/s1/State', (s) => s.quality === 'Good');
  t.is(state.value, 'Running');
  t.is(state.utcTimestamp, '2026-11-27T06:00:00.000Z');
});
