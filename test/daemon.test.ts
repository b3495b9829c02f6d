import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { Daemon } from '../src/daemon.js';
import { captureLogs } from './helpers/log-capture.js';
import { ManualClock } from './helpers/manual-clock.js';
import { tempDir } from './helpers/temp-dir.js';

const demoProfile = new URL('../config/demo.json', import.meta.url);

async function demoDaemon(t: import('ava').ExecutionContext, profile?: unknown) {
  const folder = await tempDir(t);
  const profileFile = join(folder, 'profile.json');
  if (profile === undefined) await copyFile(demoProfile, profileFile);
  else await writeFile(profileFile, JSON.stringify(profile));
  const logs = captureLogs();
  const clock = new ManualClock();
  const daemon = new Daemon({
    profileFile,
    stateDir: join(folder, 'state'),
    logger: logs.logger,
    clock,
    listen: { host: '127.0.0.1', port: 0 },
  });
  t.teardown(() => daemon.stop());
  return { daemon, logs, clock, profileFile, folder };
}

test('the demo profile starts: simulator tags are Good and the API answers', async (t) => {
  const { daemon, clock } = await demoDaemon(t);
  await daemon.start();
  const store = daemon.store;
  if (!store) return t.fail('no store');
  const ids = [...store.ids()];
  t.deepEqual(ids, [
    'Demo/Line1/Temperature',
    'Demo/Line1/FillLevel',
    'Demo/Line1/Pressure',
    'Demo/Line1/Valve',
    'Demo/Line1/PartsCount',
    'Demo/Line1/PumpRunning',
    'Demo/Line1/MachineState',
  ]);
  for (const id of ids) t.is(store.require(id).quality, 'Good', id);
  clock.advance(3000);
  t.is(store.require('Demo/Line1/PartsCount').value, 3, 'the counter moved with the clock');
  const response = await fetch(`${daemon.url()}/healthz`);
  t.is(response.status, 200);
});

test('components start in dependency order and stop in reverse', async (t) => {
  const { daemon, logs } = await demoDaemon(t);
  await daemon.start();
  const url = daemon.url() as string;
  await daemon.stop();
  const order = logs.lines.map((line) => line.msg);
  t.true(order.indexOf('simulator started') < order.indexOf('API listening'));
  t.true(order.indexOf('API listening') < order.indexOf('tagd ready'));
  t.true(order.indexOf('tagd ready') < order.indexOf('simulator stopped'));
  await t.throwsAsync(() => fetch(`${url}/healthz`), undefined, 'the port is closed after stop');
  t.is(daemon.store?.require('Demo/Line1/Temperature').quality, 'Unavailable');
  t.is(daemon.url(), undefined);
});

test('the ready line reports start-up time, tag count and URL', async (t) => {
  const { daemon, logs } = await demoDaemon(t);
  await daemon.start();
  const ready = logs.lines.find((line) => line.msg === 'tagd ready');
  t.is(ready?.tags, 7);
  t.is(ready?.url, daemon.url());
  t.is(typeof ready?.startupMs, 'number');
});

test('a disabled driver is not started and its tags do not exist', async (t) => {
  const profile = JSON.parse(await readFile(demoProfile, 'utf8'));
  profile.drivers[0].enabled = false;
  const { daemon, logs } = await demoDaemon(t, profile);
  await daemon.start();
  t.is(daemon.store?.size, 0);
  t.true(logs.lines.some((line) => line.msg === 'driver disabled in the profile'));
});

test('an invalid profile stops start-up with every error and nothing left running', async (t) => {
  const { daemon } = await demoDaemon(t, {
    server: { http: { port: 'eighty' } },
    drivers: [
      { type: 'simulator', name: 'A', tags: [{ name: 'x', kind: 'sine' }] },
      { type: 'simulator', name: 'A', tags: [{ name: 'bad path', kind: 'sine' }] },
    ],
    extra: true,
  });
  const error = await t.throwsAsync(() => daemon.start());
  t.is((error as { code?: string }).code, 'profile-invalid');
  const paths = ((error as unknown as { errors: { path: string }[] }).errors ?? []).map(
    (e) => e.path,
  );
  t.deepEqual(paths.sort(), [
    'drivers[1].name',
    'drivers[1].tags[0].name',
    'extra',
    'server.http.port',
  ]);
  t.is(daemon.url(), undefined);
  t.is(daemon.store, undefined, 'nothing was started');
});

test('a refused listener stops the drivers that had started', async (t) => {
  const profile = JSON.parse(await readFile(demoProfile, 'utf8'));
  const folder = await tempDir(t);
  const profileFile = join(folder, 'profile.json');
  profile.server.http.host = '0.0.0.0';
  await writeFile(profileFile, JSON.stringify(profile));
  const daemon = new Daemon({
    profileFile,
    stateDir: join(folder, 'state'),
    logger: captureLogs().logger,
    clock: new ManualClock(),
  });
  const error = await t.throwsAsync(() => daemon.start());
  t.is((error as { code?: string }).code, 'listener-failed');
  t.is(daemon.store?.require('Demo/Line1/Temperature').quality, 'Unavailable', 'driver stopped');
});
