import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import test from 'ava';
import {
  type DaemonStatus,
  formatStatus,
  statusProblems,
  statusStateDir,
} from '../../src/cli/status-command.js';
import { logWaitMs, startTagd } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const healthy: DaemonStatus = {
  version: '0.1.0',
  pid: 42,
  uptimeSeconds: 3725,
  drivers: [
    {
      name: 'Line1',
      type: 'simulator',
      state: 'Running',
      driverState: 'Running',
      since: '2026-01-01T00:00:00.000Z',
      counters: {},
      tagCount: 3,
      tagsByQuality: { Good: 3, Stale: 0, Unavailable: 0, Bad: 0 },
    },
  ],
  publishers: [{ name: 'mes', type: 'webhook', status: 'On' }],
  history: { backend: 'sqlite', state: 'Ok', buffered: 0, appended: 10, dropped: 0 },
  listeners: [{ name: 'http', url: 'http://127.0.0.1:8080' }],
};

test('a healthy status prints its tables and no problem', (t) => {
  t.deepEqual(statusProblems(healthy), []);
  const text = formatStatus(healthy, 'http://127.0.0.1:8080');
  t.regex(text, /^tagd 0\.1\.0, pid 42, up 1h 2m, at http:\/\/127\.0\.0\.1:8080$/m);
  t.regex(text, /^DRIVER +TYPE +STATE +TAGS +GOOD +STALE +UNAVAILABLE +BAD +MESSAGE$/m);
  t.regex(text, /^Line1 +simulator +Running +3 +3 +0 +0 +0$/m);
  t.regex(text, /^mes +webhook +On$/m);
  t.regex(text, /^sqlite +Ok +0 +10 +0$/m);
  t.regex(text, /^http +http:\/\/127\.0\.0\.1:8080$/m);
  t.regex(text, /all well\n$/);
});

test('a reconnecting driver, a publisher in Error and a history outage are problems', (t) => {
  const driver = healthy.drivers[0] as DaemonStatus['drivers'][number];
  const status: DaemonStatus = {
    ...healthy,
    drivers: [{ ...driver, state: 'Reconnecting', message: 'ECONNREFUSED 10.0.0.5:502' }],
    publishers: [{ name: 'mes', type: 'mqtt', status: 'Error', lastError: 'HTTP 503' }],
    history: { backend: 'postgres', state: 'Outage', buffered: 5, appended: 0, dropped: 0 },
  };
  t.deepEqual(statusProblems(status), [
    'driver Line1: Reconnecting',
    'publisher mes: Error',
    'history: Outage',
  ]);
  const text = formatStatus(status, 'http://127.0.0.1:8080');
  t.regex(text, /Reconnecting .*ECONNREFUSED 10\.0\.0\.5:502/);
  t.regex(text, /^mes +mqtt +Error +HTTP 503$/m);
  t.regex(text, /in error: driver Line1: Reconnecting; publisher mes: Error; history: Outage\n$/);
});

test('the state directory: TAGD_STATE_DIR, else ./var when present, else the unit’s', (t) => {
  t.is(statusStateDir({ TAGD_STATE_DIR: '/srv/tagd' }), '/srv/tagd');
  // The tests run in the repository, which may or may not have a ./var.
  t.true(['/var/lib/tagd', join(process.cwd(), 'var')].includes(statusStateDir({})));
});

test('tagd status asks the running daemon with the token from the state directory', async (t) => {
  t.timeout(logWaitMs + 60_000);
  const folder = await tempDir(t);
  const stateDir = join(folder, 'state');
  const daemon = startTagd(
    ['start', '--demo', '--listen', '127.0.0.1:0', '--extensions-listen', '127.0.0.1:0'],
    {
      env: { TAGD_STATE_DIR: stateDir },
    },
  );
  t.teardown(() => daemon.child.kill('SIGKILL'));
  const ready = await daemon.waitForLog('tagd ready');
  const url = ready.url as string;

  // The route takes the status token and nothing else.
  t.is((await fetch(`${url}/api/v2/Status`)).status, 401);
  const wrong = await fetch(`${url}/api/v2/Status`, {
    headers: { Authorization: `Bearer ${randomBytes(32).toString('base64url')}` },
  });
  t.is(wrong.status, 401);

  const json = startTagd(['status', '--json'], { env: { TAGD_STATE_DIR: stateDir } });
  const jsonCode = await json.exited;
  const status = JSON.parse(json.stdout()) as DaemonStatus;
  t.is(status.pid, daemon.child.pid as number);
  t.deepEqual(status.listeners[0], { name: 'http', url });
  t.true(status.drivers.length > 0);
  t.is(status.history?.backend, 'sqlite');
  // The demo's webhook receiver may or may not be reached yet: the exit code follows what the
  // answer says.
  t.is(jsonCode, statusProblems(status).length === 0 ? 0 : 3, json.stderr());

  const table = startTagd(['status'], { env: { TAGD_STATE_DIR: stateDir } });
  t.true([0, 3].includes((await table.exited) as number), table.stderr());
  t.regex(table.stdout(), /^DRIVER +TYPE +STATE/m);
  t.true(table.stdout().includes(url));
});

test('tagd status exits 1 when the daemon cannot be asked', async (t) => {
  t.timeout(logWaitMs);
  const folder = await tempDir(t);

  // No daemon ever started here.
  const none = startTagd(['status'], { env: { TAGD_STATE_DIR: join(folder, 'empty') } });
  t.is(await none.exited, 1);
  t.regex(none.stderr(), /no daemon has started on the state directory/);

  // A token, and a URL where nothing listens any more.
  const stateDir = join(folder, 'state');
  await mkdir(stateDir, { mode: 0o700 });
  await writeFile(join(stateDir, 'status.key'), randomBytes(32), { mode: 0o600 });
  const port = await closedPort();
  await writeFile(
    join(stateDir, 'status.json'),
    JSON.stringify({ url: `http://127.0.0.1:${port}`, pid: 1 }),
  );
  const gone = startTagd(['status'], { env: { TAGD_STATE_DIR: stateDir } });
  t.is(await gone.exited, 1);
  t.regex(gone.stderr(), /the daemon does not answer at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
});

// A loopback port that was just free: bound, then closed.
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
