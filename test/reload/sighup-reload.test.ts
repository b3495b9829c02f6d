import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { demoProfileDocument } from '../../src/demo-profile.js';
import { adminToken } from '../helpers/demo-daemon.js';
import { startTagd, type TagdProcess } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

type LogLine = Record<string, unknown> & { msg: string };

/** Resolves with the `count`-th JSON log line that `match` accepts (rejects if tagd exits first). */
function nthLog(run: TagdProcess, match: (line: LogLine) => boolean, count: number) {
  return new Promise<LogLine>((resolve, reject) => {
    const check = () => {
      const lines = run
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as LogLine)
        .filter(match);
      const line = lines[count - 1];
      if (line) {
        cleanup();
        resolve(line);
      }
    };
    const onExit = () => {
      cleanup();
      reject(new Error(`tagd exited; stdout: ${run.stdout()}`));
    };
    const cleanup = () => {
      run.child.stdout?.off('data', check);
      run.child.off('exit', onExit);
    };
    run.child.stdout?.on('data', check);
    run.child.on('exit', onExit);
    check();
  });
}

const reloaded = (line: LogLine) => line.msg === 'profile reloaded';
const refused = (line: LogLine) => line.msg.startsWith('profile reload refused');

test('SIGHUP and tagd profile import reload a running tagd; the API answers throughout', async (t) => {
  t.timeout(600_000);
  const folder = await tempDir(t);
  const file = join(folder, 'profile.json');
  const stateDir = join(folder, 'state');
  await writeFile(file, JSON.stringify(await demoProfileDocument()));
  const env = { TAGD_STATE_DIR: stateDir };
  const run = startTagd(
    ['start', '--profile', file, '--listen', '127.0.0.1:0', '--extensions-listen', '127.0.0.1:0'],
    { env },
  );
  t.teardown(() => run.child.kill('SIGKILL'));
  const url = (await run.waitForLog('tagd ready')).url as string;
  const token = await adminToken(url, stateDir);
  const get = async (path: string) => {
    const response = await fetch(`${url}${path}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  // Polls the API the whole time: a reload must never take it down.
  let polling = true;
  const statuses: number[] = [];
  const poller = (async () => {
    while (polling) {
      statuses.push((await get('/api/v2/Drivers/Vehicle')).status);
      // Pacing only, so the poller does not take a core of a shared machine; nothing waits on it.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const vehicleSince = (await get('/api/v2/Drivers/Vehicle')).json.since;

  const profile = JSON.parse(await readFile(file, 'utf8'));
  profile.drivers[0].scanIntervalMs = 500;
  await writeFile(file, JSON.stringify(profile));
  run.child.kill('SIGHUP');
  const first = await nthLog(run, reloaded, 1);
  t.deepEqual(first.restarted, ['drivers/Demo']);
  t.true((first.unchanged as string[]).includes('drivers/Vehicle'));
  t.is((await get('/api/v2/Drivers/Vehicle')).json.since, vehicleSince);

  // An invalid profile: refused with every error, the daemon runs on with what it had.
  profile.drivers[0].scanIntervalMs = 'fast';
  profile.drivers[1].colour = 'red';
  await writeFile(file, JSON.stringify(profile));
  run.child.kill('SIGHUP');
  const refusal = await nthLog(run, refused, 1);
  t.deepEqual((refusal.errors as { path: string }[]).map((error) => error.path).sort(), [
    'drivers[0].scanIntervalMs',
    'drivers[1].colour',
  ]);
  const inForce = (await get('/api/v2/Profile')).json.drivers as { scanIntervalMs: number }[];
  t.is(inForce[0]?.scanIntervalMs, 500);

  // tagd profile import saves a valid profile and tells this daemon to reload.
  profile.drivers[0].scanIntervalMs = 2000;
  delete profile.drivers[1].colour;
  const incoming = join(folder, 'incoming.json');
  await writeFile(incoming, JSON.stringify(profile));
  const imported = startTagd(['profile', 'import', incoming, '--profile', file], { env });
  t.is(await imported.exited, 0, imported.stderr());
  t.regex(imported.stdout(), /is reloading the profile/);
  const second = await nthLog(run, reloaded, 2);
  t.deepEqual(second.restarted, ['drivers/Demo']);

  polling = false;
  await poller;
  t.true(statuses.length > 0);
  t.true(
    statuses.every((status) => status === 200),
    `statuses: ${[...new Set(statuses)]}`,
  );
  t.is(run.child.exitCode, null, 'tagd still runs');
});
