import { execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { access, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import test from 'ava';
import { hashPassword } from '../src/auth/password.js';
import { UserStore } from '../src/auth/user-store.js';
import { Daemon } from '../src/daemon.js';
import { canonicalTerms, type LicenseTerms } from '../src/license/license.js';
import { isConfigError } from '../src/main.js';
import { caFileUnusableReason } from '../src/publishers/webhook/webhook-publisher.js';
import { adminToken, demoDaemon as startableDemo } from './helpers/demo-daemon.js';
import { captureLogs } from './helpers/log-capture.js';
import { ManualClock } from './helpers/manual-clock.js';
import { seriesValue } from './helpers/prometheus-text.js';
import { tempDir } from './helpers/temp-dir.js';
import { until, untilTimeoutMs } from './helpers/until.js';
import { startReceiver } from './helpers/webhook-receiver.js';

const demoProfile = new URL('../config/demo.json', import.meta.url);

/** The demo profile (or `profile`) on an in-process daemon, not started yet. */
function demoDaemon(t: import('ava').ExecutionContext, profile?: unknown) {
  return startableDemo(t, { profile, start: false, clock: new ManualClock() });
}

test('the demo profile starts: simulator tags are Good and the API answers', async (t) => {
  const { daemon, clock } = await demoDaemon(t);
  await daemon.start();
  const store = daemon.store;
  if (!store) return t.fail('no store');
  const ids = [...store.ids()].filter((id) => id.startsWith('Demo/'));
  t.deepEqual(ids, [
    'Demo/Line1/Temperature',
    'Demo/Line1/FillLevel',
    'Demo/Line1/Pressure',
    'Demo/Line1/Valve',
    'Demo/Line1/PartsCount',
    'Demo/Line1/PumpRunning',
    'Demo/Line1/MachineState',
    'Demo/Controls/Setpoint',
    'Demo/Controls/ConveyorOn',
    'Demo/Line1/FlowRaw',
    'Demo/Line1/StatusWord',
  ]);
  t.deepEqual(
    [...store.ids()].filter((id) => id.startsWith('Publishers/')),
    [
      'Publishers/demo-receiver/Status',
      'Publishers/demo-receiver/LastDeliverySuccess',
      'Publishers/demo-receiver/LastDeliveryError',
    ],
    'and the demo publisher health tags',
  );
  for (const id of ids) t.is(store.require(id).quality, 'Good', id);
  clock.advance(3000);
  t.is(store.require('Demo/Line1/PartsCount').value, 3, 'the counter moved with the clock');
  const response = await fetch(`${daemon.url()}/healthz`);
  t.is(response.status, 200);
});

test('the daemon routes writes to the demo simulator’s writable tags, with its audit', async (t) => {
  const { daemon, stateDir, logs } = await demoDaemon(t);
  await daemon.start();
  const url = daemon.url() as string;
  const token = await adminToken(url, stateDir);
  const write = (writes: unknown) =>
    fetch(`${url}/api/v2/Tags/Write`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ writes }),
    });
  const response = await write([
    { fullTagId: 'Demo/Controls/Setpoint', value: 75 },
    { fullTagId: 'Demo/Controls/ConveyorOn', value: true },
  ]);
  t.is(response.status, 200);
  t.deepEqual(await response.json(), {
    results: [
      { fullTagId: 'Demo/Controls/Setpoint', status: 'Good' },
      { fullTagId: 'Demo/Controls/ConveyorOn', status: 'Good' },
    ],
  });
  t.is(daemon.store?.require('Demo/Controls/Setpoint').value, 75);
  const refused = await write([
    { fullTagId: 'Demo/Controls/Setpoint', value: 95 },
    { fullTagId: 'Demo/Line1/Temperature', value: 1 },
  ]);
  t.is(refused.status, 400);
  t.deepEqual(((await refused.json()) as { errors: unknown }).errors, [
    { path: 'writes[0].value', message: 'Tag Demo/Controls/Setpoint: 95 is above writeMax 90.' },
    { path: 'writes[1].fullTagId', message: 'Tag Demo/Line1/Temperature is not writable.' },
  ]);
  t.true(
    logs.lines.some(
      (line) =>
        line.component === 'audit' &&
        line.event === 'tag-write' &&
        line.account === 'admin' &&
        line.requestedValue === 75,
    ),
  );
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
  const canSignals = [...(daemon.store?.ids() ?? [])].filter((id) => id.startsWith('Vehicle/'));
  t.true(canSignals.length > 0, 'the demo CAN bus declares its signals');
  t.is(
    ready?.tags,
    11 + 3 + canSignals.length + 4 + 3 * 3 + 2,
    'simulator tags, publisher health tags, CAN signals, derived tags, alarm state tags, alarm e-mail health tags (Off without a notifications section)',
  );
  t.is(ready?.url, daemon.url());
  t.is(typeof ready?.startupMs, 'number');
});

test('a disabled driver is not started and its tags do not exist', async (t) => {
  const profile = JSON.parse(await readFile(demoProfile, 'utf8'));
  profile.drivers[0].enabled = false;
  const { daemon, logs } = await demoDaemon(t, profile);
  await daemon.start();
  t.deepEqual(
    [...(daemon.store?.ids() ?? [])].filter((id) => id.startsWith('Demo/')),
    [],
  );
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

test('plain HTTP on a non-loopback address is refused before anything starts', async (t) => {
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
  // profile-invalid: a configuration error (exit 78), listed like every other profile error.
  t.is((error as { code?: string }).code, 'profile-invalid');
  t.like((error as unknown as { errors: unknown[] }).errors, [{ path: 'server.http.host' }]);
  t.true(isConfigError(error));
  t.is(daemon.store, undefined, 'nothing was started');
});

test('a port in use stops the drivers that had started, and is no configuration error', async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const port = (taken.address() as AddressInfo).port;
  const { daemon } = await demoDaemon(t);
  // The demo daemon listens where --listen says: on the port that is taken.
  (daemon as unknown as { options: { listen: unknown } }).options.listen = {
    host: '127.0.0.1',
    port,
  };
  const error = await t.throwsAsync(() => daemon.start());
  t.is((error as { code?: string }).code, 'listener-failed');
  t.false(isConfigError(error), 'EADDRINUSE may clear: exit 1, systemd restarts');
  t.is(daemon.store?.require('Demo/Line1/Temperature').quality, 'Unavailable', 'driver stopped');
});

// --- Start-up checks, files the profile names, one daemon per state directory (issue 10) ---

test('a second daemon on the same state directory is refused, naming the first one', async (t) => {
  const first = await startableDemo(t, { clock: new ManualClock() });
  const second = await startableDemo(t, {
    stateDir: first.stateDir,
    start: false,
    clock: new ManualClock(),
  });
  const error = await t.throwsAsync(() => second.daemon.start());
  t.is((error as { code?: string }).code, 'state-dir-locked');
  t.true(isConfigError(error));
  t.regex(error?.message ?? '', new RegExp(`\\(pid ${process.pid}\\) runs on the state directory`));
  t.is(second.daemon.store, undefined, 'nothing of the second one started');
  t.is((await fetch(`${first.url}/healthz`)).status, 200, 'the first one still serves');
  await first.daemon.stop();
  await second.daemon.start();
  t.truthy(second.daemon.url(), 'once the first stopped, the lock is free');
});

test('temporary files a crash left mid-save are removed at start', async (t) => {
  const { daemon, stateDir, folder, logs } = await startableDemo(t, {
    start: false,
    clock: new ManualClock(),
  });
  const gone = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => gone.on('exit', resolve));
  await mkdir(stateDir, { recursive: true });
  const leftovers = [
    join(stateDir, `.users.json.${gone.pid}.0123456789ab.tmp`),
    join(stateDir, `secret.key.${gone.pid}.01234567.tmp`),
    join(folder, `.profile.json.${gone.pid}.0123456789ab.tmp`),
  ];
  for (const file of leftovers) await writeFile(file, '{');
  await writeFile(join(folder, 'operator.tmp'), "not tagd's");
  await daemon.start();
  for (const file of leftovers) await t.throwsAsync(() => access(file), undefined, file);
  await access(join(folder, 'operator.tmp'));
  t.like(
    logs.lines.find((line) => line.msg === 'removed temporary files left by a crash'),
    {
      files: leftovers,
    },
  );
});

test('a FIFO as caFile: the daemon starts, the publisher is Error saying only that the caFile is unusable, metrics flag it, and stop is prompt', async (t) => {
  const fifoFolder = await tempDir(t);
  const fifo = join(fifoFolder, 'ca.fifo');
  execFileSync('mkfifo', [fifo]);
  const { daemon, stateDir, logs } = await startableDemo(t, {
    start: false,
    clock: new ManualClock(),
    // biome-ignore lint/suspicious/noExplicitAny: the demo profile as JSON, edited at known paths
    profile: (demo: any) => {
      demo.publishers.webhooks[0].caFile = fifo;
    },
  });
  const users = new UserStore({ stateDir });
  await users.start();
  await users.add({
    username: 'viewer',
    kind: 'user',
    roles: ['Operators'],
    passwordHash: await hashPassword('a viewer password 1'),
  });
  await users.stop();
  await daemon.start();
  const url = daemon.url() as string;
  const signIn = await fetch(`${url}/api/v2/Users/Authenticate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'viewer', password: 'a viewer password 1' }),
  });
  const { token } = (await signIn.json()) as { token: string };
  const shown = await getJson(`${url}/api/v2/Publishers/Webhooks/demo-receiver`, token);
  t.is(shown.status, 200);
  t.like(shown.json, { state: { status: 'Error', reason: caFileUnusableReason } });
  // What monitoring sees: the health tag, and the series the TagdPublisherError alert watches.
  t.is(daemon.store?.get('Publishers/demo-receiver/Status')?.value, 'Error');
  const metrics = await (await fetch(`${url}/metrics`)).text();
  t.is(
    seriesValue(metrics, 'tagd_publisher_status', {
      publisher: 'demo-receiver',
      type: 'webhook',
      status: 'Error',
    }),
    1,
  );
  t.false(
    JSON.stringify(shown.json.state).includes('FIFO'),
    'no detail for a PublisherView caller',
  );
  t.true(
    logs.text().includes(`Cannot read the CA file ${fifo}: it is not a regular file`),
    'the log has the detail',
  );
  const began = Date.now();
  await daemon.stop();
  t.true(Date.now() - began < 10_000, 'stopped within the 10 s deadline');
});

test('a driver whose DBC file is unusable is left out; the other drivers run', async (t) => {
  const folder = await tempDir(t);
  const { daemon, logs } = await startableDemo(t, {
    clock: new ManualClock(),
    // biome-ignore lint/suspicious/noExplicitAny: the demo profile as JSON, edited at known paths
    profile: (demo: any) => {
      demo.drivers[1].dbcFile = join(folder, 'missing.dbc');
    },
  });
  const ids = [...(daemon.store?.ids() ?? [])];
  t.false(ids.some((id) => id.startsWith('Vehicle/')));
  t.true(ids.includes('Demo/Line1/Temperature'));
  t.like(
    logs.lines.find((line) => String(line.msg).startsWith('driver left out')),
    {
      level: 50,
      component: 'Vehicle',
      msg: `driver left out: Cannot read the DBC file ${join(folder, 'missing.dbc')}: no such file.`,
    },
  );
});

// --- Webhook publishers and the license (issue 4) ---

const demoLicense = new URL('../config/demo-license.json', import.meta.url);

async function getJson(url: string, token: string) {
  const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** The demo profile with its publisher pointed at `url`. */
async function demoWithPublisherAt(url: string) {
  const profile = JSON.parse(await readFile(demoProfile, 'utf8'));
  profile.publishers.webhooks[0].destinationUrl = url;
  return profile;
}

test('the demo publisher delivers Line1 to a local receiver; GET shows it On with counters', async (t) => {
  const receiver = await startReceiver(t);
  const { daemon, logs, clock, folder, profileFile } = await demoDaemon(
    t,
    await demoWithPublisherAt(receiver.url),
  );
  await copyFile(demoLicense, join(folder, 'demo-license.json'));
  await daemon.start();
  t.like(
    logs.lines.find((line) => line.component === 'license'),
    { edition: 'server', msg: 'licensed: server edition for tagd demo (not for production)' },
  );
  const onDisk = await readFile(profileFile, 'utf8');
  t.regex(JSON.parse(onDisk).publishers.webhooks[0].destinationUrl, /^enc:v1:/);
  t.false(onDisk.includes(receiver.url), 'the destination URL is sealed in the profile');

  clock.advance(10_000);
  const [publish] = await receiver.waitForRequests(1);
  t.regex(String(publish?.headers['user-agent']), /^tagd\//);
  t.is(publish?.headers['content-type'], 'application/json');
  const entries = publish?.json as { fullTagId: string; quality: string; value: unknown }[];
  // Booleans and strings are not finite numbers: PumpRunning, MachineState and the derived
  // GuardClosed are left out. The derived tags come with the line's own.
  t.deepEqual(
    entries.map((entry) => entry.fullTagId),
    [
      'Demo/Line1/Temperature',
      'Demo/Line1/FillLevel',
      'Demo/Line1/Pressure',
      'Demo/Line1/Valve',
      'Demo/Line1/PartsCount',
      'Demo/Line1/FlowRaw',
      'Demo/Line1/StatusWord',
      'Derived/Line1/Flow',
      'Derived/Line1/FlowAvg5m',
      'Derived/Line1/FlowTotal',
    ],
  );
  for (const entry of entries) {
    t.is(entry.quality, 'Good');
    t.is(typeof entry.value, 'number');
  }
  t.is(entries[4]?.value, 10, 'the counter after 10 s');

  const url = daemon.url() as string;
  const token = await adminToken(url, join(folder, 'state'));
  // The receiver holds the POST before the publisher has read its 200 and recorded it.
  let shown = await getJson(`${url}/api/v2/Publishers/Webhooks/demo-receiver`, token);
  await until(
    async () => {
      shown = await getJson(`${url}/api/v2/Publishers/Webhooks/demo-receiver`, token);
      return (shown.json.state as { lastDelivery?: unknown }).lastDelivery !== undefined;
    },
    'the delivery recorded',
    untilTimeoutMs,
    20,
  );
  t.is(shown.status, 200);
  t.like(shown.json, {
    name: 'demo-receiver',
    destinationUrl: '********',
    collections: ['Line1'],
    loggingMode: 'Snapshot',
    updateIntervalSeconds: 10,
    autoConnect: true,
    state: {
      status: 'On',
      lastDelivery: { ok: true, httpStatus: 200, attempts: 1, samples: 10 },
      counters: { batches: 1, samples: 10, failures: 0, skippedTicks: 0, droppedSamples: 0 },
    },
  });
  const status = await getJson(`${url}/api/v2/Tags/Sample/Publishers/demo-receiver/Status`, token);
  t.is(status.json.value, 'On');
  t.false(logs.text().includes(receiver.url), 'the log never shows the destination URL');

  await daemon.stop();
  const order = logs.lines.map((line) => line.msg);
  const publisherStopped = order.indexOf("Webhook publisher 'demo-receiver' stopped (stopped).");
  t.true(publisherStopped >= 0);
  t.true(publisherStopped < order.indexOf('simulator stopped'), 'publishers stop first');
});

test('without its license file the demo publisher stays Off and the publisher routes answer 403', async (t) => {
  const receiver = await startReceiver(t);
  const { daemon, logs, clock, folder } = await demoDaemon(
    t,
    await demoWithPublisherAt(receiver.url),
  );
  await daemon.start();
  const warning = logs.lines.find((line) => line.component === 'license');
  t.is(warning?.level, 40);
  t.regex(
    String(warning?.msg),
    /^license refused: Cannot read the license file .*demo-license\.json: no such file/,
  );
  t.is(daemon.license?.edition, 'unlicensed');
  clock.advance(30_000);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(receiver.requests.length, 0);
  const url = daemon.url() as string;
  const token = await adminToken(url, join(folder, 'state'));
  const status = await getJson(`${url}/api/v2/Tags/Sample/Publishers/demo-receiver/Status`, token);
  t.is(status.json.value, 'Off');
  const refused = await getJson(`${url}/api/v2/Publishers/Webhooks`, token);
  t.is(refused.status, 403);
  t.like(refused.json, {
    code: 'feature-unavailable',
    detail:
      'The webhook publisher needs the data relay feature of the server or enterprise edition; this installation is not licensed.',
  });
});

test('licenseKeys: a standard license signed by a trusted key is in force, without data relay', async (t) => {
  const keys = generateKeyPairSync('ed25519');
  const terms: LicenseTerms = {
    id: 'test-std-1',
    licensee: 'Test plant',
    edition: 'standard',
    issued: '2026-01-01',
    expires: null,
  };
  const folder = await tempDir(t);
  const profile = JSON.parse(await readFile(demoProfile, 'utf8'));
  profile.license.file = 'licenses/site.json';
  const profileFile = join(folder, 'profile.json');
  await writeFile(profileFile, JSON.stringify(profile));
  await mkdir(join(folder, 'licenses'));
  await writeFile(
    join(folder, 'licenses/site.json'),
    JSON.stringify({
      license: terms,
      signature: sign(null, canonicalTerms(terms), keys.privateKey).toString('base64'),
    }),
  );
  const logs = captureLogs();
  const daemon = new Daemon({
    profileFile,
    stateDir: join(folder, 'state'),
    logger: logs.logger,
    clock: new ManualClock(),
    listen: { host: '127.0.0.1', port: 0 },
    extensionsListen: { host: '127.0.0.1', port: 0 },
    licenseKeys: [keys.publicKey],
  });
  t.teardown(() => daemon.stop());
  await daemon.start();
  t.like(daemon.license, { edition: 'standard', licensee: 'Test plant' });
  t.like(
    logs.lines.find((line) => line.component === 'license'),
    { level: 30, msg: 'licensed: standard edition for Test plant' },
  );
  const url = daemon.url() as string;
  const token = await adminToken(url, join(folder, 'state'));
  const refused = await getJson(`${url}/api/v2/Publishers/Webhooks/demo-receiver`, token);
  t.is(refused.status, 403);
  t.is(
    refused.json.detail,
    'The webhook publisher needs the data relay feature of the server or enterprise edition; this installation is licensed for the standard edition.',
  );
  // A valid license without the feature keeps the profile's publisher Off, saying why.
  t.true(
    logs.lines.some((line) =>
      /stays Off: The data relay feature is not licensed/.test(String(line.msg)),
    ),
  );
});
