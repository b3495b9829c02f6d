import { access, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import { createSimulatorDriver } from '../drivers/simulator/index.js';
import { AlarmJournal } from '../src/alarms/alarm-journal.js';
import { AlarmService } from '../src/alarms/alarm-service.js';
import {
  demoProfileDocument,
  demoProfileFileName,
  demoSectionsAddedLater,
  prepareDemoProfile,
} from '../src/demo-profile.js';
import { packageRoot } from '../src/package-root.js';
import { profileSchema } from '../src/profile/schema.js';
import { TagStore } from '../src/tags/tag-store.js';
import { ManualClock } from './helpers/manual-clock.js';
import { tempDir } from './helpers/temp-dir.js';

test('the demo document names the andon app by an absolute folder that exists', async (t) => {
  const demo = (await demoProfileDocument()) as {
    extensions: { apps: { name: string; folder: string }[] };
  };
  const folder = demo.extensions.apps[0]?.folder ?? '';
  t.is(folder, join(packageRoot, 'config/apps/andon'));
  for (const file of ['index.html', 'app.js', 'style.css']) {
    await t.notThrowsAsync(access(join(folder, file)), file);
  }
});

test('the first start copies the demo; a later one keeps the copy as it is', async (t) => {
  const stateDir = join(await tempDir(t), 'state');
  const first = await prepareDemoProfile(stateDir);
  t.deepEqual(first, { file: join(stateDir, demoProfileFileName), added: [] });
  t.is((await stat(first.file)).mode & 0o777, 0o600);
  const edited = JSON.parse(await readFile(first.file, 'utf8'));
  edited.collections.push({ name: 'Mine', members: ['Demo/**'] });
  edited.extensions.enableDocs = true;
  await writeFile(first.file, JSON.stringify(edited));
  const second = await prepareDemoProfile(stateDir);
  t.deepEqual(second.added, []);
  t.deepEqual(JSON.parse(await readFile(second.file, 'utf8')), edited, 'untouched');
});

test('a copy made before the extensions server gets its section added, and nothing else changes', async (t) => {
  t.deepEqual(demoSectionsAddedLater, ['extensions', 'alarms', 'assistant']);
  const stateDir = await tempDir(t);
  const file = join(stateDir, demoProfileFileName);
  const old = await demoProfileDocument();
  delete old.extensions;
  (old.publishers as { webhooks: { destinationUrl: string }[] }).webhooks[0] = {
    ...(old.publishers as { webhooks: { destinationUrl: string }[] }).webhooks[0],
    destinationUrl: 'enc:v1:sealed-by-this-installation',
  } as { destinationUrl: string };
  await writeFile(file, JSON.stringify(old), { mode: 0o600 });

  const prepared = await prepareDemoProfile(stateDir);
  t.deepEqual(prepared.added, ['extensions']);
  const copy = JSON.parse(await readFile(file, 'utf8'));
  const { extensions, ...rest } = copy;
  t.deepEqual(rest, old, 'every other section as it was, sealed secrets included');
  t.deepEqual(extensions, (await demoProfileDocument()).extensions);
  t.is((await stat(file)).mode & 0o777, 0o600, 'still private');
  t.deepEqual((await prepareDemoProfile(stateDir)).added, [], 'added once');
});

test('a copy that does not parse is left alone for the daemon to report', async (t) => {
  const stateDir = await tempDir(t);
  const file = join(stateDir, demoProfileFileName);
  await writeFile(file, '{ "server": ');
  t.deepEqual((await prepareDemoProfile(stateDir)).added, []);
  t.is(await readFile(file, 'utf8'), '{ "server": ');
});

test('a copy made before the alarms gets the demo alarms added; emptied alarms stay empty', async (t) => {
  const stateDir = await tempDir(t);
  const file = join(stateDir, demoProfileFileName);
  const old = await demoProfileDocument();
  delete old.alarms;
  await writeFile(file, JSON.stringify(old), { mode: 0o600 });
  t.deepEqual((await prepareDemoProfile(stateDir)).added, ['alarms']);
  const copy = JSON.parse(await readFile(file, 'utf8'));
  t.deepEqual(copy.alarms, (await demoProfileDocument()).alarms);
  copy.alarms = [];
  await writeFile(file, JSON.stringify(copy), { mode: 0o600 });
  t.deepEqual((await prepareDemoProfile(stateDir)).added, [], 'a removal through the API stays');
});

test('the demo offers MCP on its loopback listener and lets assistants propose the oven setpoint only', async (t) => {
  const demo = profileSchema.parse(await demoProfileDocument());
  t.is(demo.server.http.host, '127.0.0.1');
  t.is(demo.server.https, undefined, 'no plant-network listener');
  t.is(demo.assistant.mcp.enabled, undefined, 'the default: on for loopback connections');
  t.deepEqual(demo.assistant.writableTags, ['Demo/Controls/Setpoint']);
  const stateDir = await tempDir(t);
  const old = await demoProfileDocument();
  delete old.assistant;
  await writeFile(join(stateDir, demoProfileFileName), JSON.stringify(old), { mode: 0o600 });
  t.deepEqual((await prepareDemoProfile(stateDir)).added, ['assistant']);
});

test('the demo alarms on the simulator: OvenHot trips every minute, PumpStopped, EngineSignalLost', async (t) => {
  const demo = profileSchema.parse(await demoProfileDocument());
  const clock = new ManualClock();
  const store = new TagStore({ clock });
  const simulator = demo.drivers.find((driver) => driver.name === 'Demo');
  if (simulator?.type !== 'simulator') throw new Error('the demo has no simulator named Demo');
  const logger = pino({ level: 'silent' });
  const driver = createSimulatorDriver(simulator, {
    store,
    clock,
    logger,
    stateDir: '/nonexistent',
  });
  const engine = 'Vehicle/EngineData/EngineSpeed';
  const engineSample = (quality: 'Good' | 'Unavailable') => ({
    fullTagId: engine,
    utcTimestamp: new Date(clock.now()).toISOString(),
    quality,
    ...(quality === 'Good' ? { value: 800 } : { reason: 'Disconnected' as const }),
  });
  store.write([engineSample('Good')]);
  const alarms = new AlarmService({
    store,
    clock,
    logger,
    journal: new AlarmJournal({ file: join(await tempDir(t), 'alarms.db') }),
    definitions: demo.alarms,
  });
  const heard: string[] = [];
  alarms.subscribe((batch) => heard.push(...batch.map((x) => `${x.name}:${x.event}`)));
  await driver.start();
  await alarms.start();
  t.teardown(async () => {
    await alarms.stop();
    await driver.stop();
  });
  for (let second = 0; second < 180; second++) clock.advance(1000);
  const count = (what: string) => heard.filter((entry) => entry === what).length;
  t.is(count('OvenHot:Activated'), 3, 'once a minute');
  t.is(count('OvenHot:Cleared'), 3);
  t.is(count('PumpStopped:Activated'), 6, 'the pump stops every 30 s');
  t.is(count('EngineSignalLost:Activated'), 0);
  t.like(alarms.get('OvenHot'), { unit: '°C', limit: 64 });
  t.regex(alarms.get('OvenHot')?.message ?? '', /^Oven at [\d.]+ °C, above 64 °C$/);

  store.write([engineSample('Unavailable')]);
  clock.advance(9_999);
  t.is(count('EngineSignalLost:Activated'), 0);
  clock.advance(1);
  t.is(count('EngineSignalLost:Activated'), 1);
  t.is(
    alarms.get('EngineSignalLost')?.message,
    'Engine speed is Unavailable: no trustworthy reading',
  );
});
