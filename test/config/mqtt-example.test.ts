/**
 * config/examples/mqtt.json, the MQTT example of docs/publishers-mqtt.md, passes `tagd profile check` and runs in
 * a daemon against a real Mosquitto: only the broker address is changed (and the license made
 * absolute, since the profile is written elsewhere).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { decode } from '../../src/publishers/mqtt/sparkplug-payloads.js';
import { demoDaemon } from '../helpers/demo-daemon.js';
import { startMosquitto } from '../helpers/mosquitto.js';
import { subscribe } from '../helpers/mqtt-subscriber.js';
import { startTagd } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const exampleFile = fileURLToPath(new URL('../../config/examples/mqtt.json', import.meta.url));

test('tagd profile check accepts the MQTT example', async (t) => {
  const check = startTagd(['profile', 'check', exampleFile], {
    env: { TAGD_STATE_DIR: await tempDir(t) },
  });
  t.is(await check.exited, 0, check.stdout() + check.stderr());
});

test('the MQTT example publishes json-per-tag and Sparkplug B to a local broker', async (t) => {
  const broker = await startMosquitto(t);
  const example = JSON.parse(await readFile(exampleFile, 'utf8'));
  example.$schema = undefined;
  example.license.file = fileURLToPath(new URL('../../config/demo-license.json', import.meta.url));
  for (const publisher of example.publishers.mqtt) publisher.brokerUrl = broker.url;
  const json = await subscribe(t, broker.url, 'plant/hall2/gw1/#');
  const spb = await subscribe(t, broker.url, 'spBv1.0/Hall2/#');
  const { clock } = await demoDaemon(t, { profile: example });
  const births = await spb.waitForCount(3);
  t.deepEqual(births.map((m) => m.topic).sort(), [
    'spBv1.0/Hall2/DBIRTH/gw1/Oven1',
    'spBv1.0/Hall2/DBIRTH/gw1/Press1',
    'spBv1.0/Hall2/NBIRTH/gw1',
  ]);
  const oven = decode(births.find((m) => m.topic.endsWith('/Oven1'))?.payload ?? Buffer.alloc(0));
  t.deepEqual(
    oven.metrics?.map((metric) => [metric.name, metric.type]),
    [
      ['Zone1/Temperature', 'Double'],
      ['Zone1/HeaterOn', 'Boolean'],
      ['Parts', 'Double'],
    ],
  );
  clock.advance(1000);
  const got = await json.waitFor((list) =>
    list.some((m) => m.topic === 'plant/hall2/gw1/Oven1/Zone1/Temperature'),
  );
  const entry = JSON.parse(
    String(got.find((m) => m.topic === 'plant/hall2/gw1/Oven1/Zone1/Temperature')?.payload),
  );
  t.is(entry.fullTagId, 'Oven1/Zone1/Temperature');
  t.is(entry.quality, 'Good');
  t.is(typeof entry.value, 'number');
});
