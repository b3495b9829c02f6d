/**
 * The OPC UA driver against a real node-opcua server on loopback (one per file, started once):
 * values arrive through the subscription, OPC UA statuses map to qualities, security None and
 * SignAndEncrypt, anonymous and user name identities. Expected values are the ones the test
 * sets on the server.
 */
import { chmod, copyFile, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { DriverDeps } from '../../../drivers/driver.js';
import { createOpcuaDriver } from '../../../drivers/opcua/index.js';
import type { OpcuaDriver } from '../../../drivers/opcua/opcua-driver.js';
import { opcuaPkiDir, trustedCertsDir } from '../../../drivers/opcua/pki.js';
import { type OpcuaDriverConfig, opcuaDriverSchema } from '../../../drivers/opcua/schema.js';
import { createDriver, driverConfigSchema } from '../../../drivers/registry.js';
import { systemClock } from '../../../src/clock.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { OpcuaTestServer, testNodeId, testUser } from '../../helpers/opcua-server.js';
import { until } from '../../helpers/until.js';
import { driverContract } from '../contract.js';

/** One folder for the whole file: the server's and the client's certificates are made once. */
const root = await mkdtemp(join(tmpdir(), 'tagd-opcua-'));
const serverPki = join(root, 'server-pki');
const stateDir = join(root, 'state');
let server: OpcuaTestServer;

test.before(async () => {
  server = await OpcuaTestServer.start({ pkiDir: serverPki });
});
test.after.always(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const fast = { publishingIntervalMs: 50, samplingIntervalMs: 20, reconnectDelayMs: 100 };

function config(input: Record<string, unknown> = {}): OpcuaDriverConfig {
  return opcuaDriverSchema.parse({
    type: 'opcua',
    name: 'Plc',
    endpointUrl: server.endpointUrl,
    ...fast,
    tags: [
      { name: 'Line1/Temperature', nodeId: testNodeId('Temperature'), unit: '°C' },
      { name: 'Line1/Counter', nodeId: testNodeId('Counter') },
      { name: 'Line1/Running', nodeId: testNodeId('Running') },
      { name: 'Line1/Mode', nodeId: testNodeId('Mode') },
    ],
    ...input,
  });
}

function setup(input: Record<string, unknown> = {}, state = stateDir, logLevel = 'debug') {
  const store = new TagStore({ clock: systemClock });
  const logs = captureLogs(logLevel);
  const deps: DriverDeps = { store, clock: systemClock, logger: logs.logger, stateDir: state };
  const driver = createOpcuaDriver(config(input), deps) as OpcuaDriver;
  return { driver, store, logs };
}

const running = (driver: OpcuaDriver) =>
  until(() => driver.status().state === 'Running', `the driver runs (${driver.status().message})`);

driverContract(test, {
  type: 'opcua',
  hasPeer: true,
  async setup() {
    // A server of its own, so that disconnect can take it away.
    const own = await OpcuaTestServer.start({ pkiDir: serverPki });
    let alive = true;
    const { driver, store } = setup({ endpointUrl: own.endpointUrl });
    const tagIds = [
      'Plc/Line1/Temperature',
      'Plc/Line1/Counter',
      'Plc/Line1/Running',
      'Plc/Line1/Mode',
    ];
    return {
      driver,
      store,
      tagIds,
      async produce() {
        if (!alive) {
          await until(
            () => tagIds.every((id) => store.get(id)?.quality === 'Unavailable'),
            'the tags are Unavailable',
          );
          return;
        }
        await until(
          () => tagIds.every((id) => store.get(id)?.quality === 'Good'),
          'every tag is Good',
        );
      },
      async disconnect() {
        alive = false;
        await own.stop();
      },
      async teardown() {
        if (alive) await own.stop();
      },
    };
  },
});

test.serial('values arrive through the subscription, with changes as they happen', async (t) => {
  server.set('Temperature', 21.5);
  server.set('Counter', 7);
  const { driver, store } = setup();
  t.teardown(() => driver.stop());
  await driver.start();
  await running(driver);
  await until(() => store.get('Plc/Line1/Counter')?.value === 7, 'the first Counter value');
  t.like(store.require('Plc/Line1/Temperature'), {
    quality: 'Good',
    value: 21.5,
    metadata: { unit: '°C', source: `${server.endpointUrl}#ns=1;s=Temperature` },
  });
  t.like(store.require('Plc/Line1/Running'), { quality: 'Good', value: true });
  t.like(store.require('Plc/Line1/Mode'), { quality: 'Good', value: 'Auto' });

  server.set('Counter', 8);
  server.set('Temperature', 22.25);
  await until(() => store.get('Plc/Line1/Counter')?.value === 8, 'Counter changes to 8');
  await until(() => store.get('Plc/Line1/Temperature')?.value === 22.25, 'Temperature changes');
  const status = driver.status();
  t.is(status.tagCount, 4);
  t.like(status.counters, { subscriptions: 1, monitoredItems: 4, monitoredItemsFailed: 0 });
  t.true((status.counters?.notifications ?? 0) >= 6);
});

test.serial('OPC UA statuses and value types map to qualities', async (t) => {
  server.set('Level', 1);
  server.set('Pressure', 2.5);
  const { driver, store } = setup({
    tags: [
      { name: 'Level', nodeId: testNodeId('Level') },
      { name: 'Pressure', nodeId: testNodeId('Pressure') },
      { name: 'Started', nodeId: testNodeId('Started') },
      { name: 'Big', nodeId: testNodeId('Big') },
      { name: 'Huge', nodeId: testNodeId('Huge') },
      { name: 'Negative', nodeId: testNodeId('Negative') },
      { name: 'Label', nodeId: testNodeId('Label') },
      { name: 'Vector', nodeId: testNodeId('Vector') },
      { name: 'Missing', nodeId: 'ns=1;s=NoSuchVariable' },
    ],
  });
  t.teardown(() => driver.stop());
  await driver.start();
  await running(driver);
  await until(() => store.get('Plc/Started')?.quality === 'Good', 'the first values');
  t.like(store.require('Plc/Started'), { value: '2026-01-02T03:04:05.678Z' });
  t.like(store.require('Plc/Big'), { value: 2 ** 32 + 2 });
  t.like(store.require('Plc/Negative'), { value: -2 });
  // 2^53 + 1 as the nearest double, with the exact decimal alongside.
  t.like(store.require('Plc/Huge'), {
    quality: 'Good',
    value: 2 ** 53,
    metadata: { valueText: '9007199254740993' },
  });
  t.like(store.require('Plc/Label'), { value: 'Filling' });
  t.like(store.require('Plc/Vector'), { quality: 'Bad', reason: 'DecodeError' });
  t.like(store.require('Plc/Missing'), { quality: 'Bad', reason: 'DeviceException' });
  t.regex(store.require('Plc/Missing').message ?? '', /BadNodeIdUnknown/);
  t.like(driver.status().counters, { monitoredItems: 8, monitoredItemsFailed: 1 });

  server.set('Level', 2, 'BadDeviceFailure');
  await until(() => store.get('Plc/Level')?.quality === 'Bad', 'Level turns Bad');
  t.like(store.require('Plc/Level'), { reason: 'DeviceException', value: undefined });
  t.regex(store.require('Plc/Level').message ?? '', /BadDeviceFailure/);

  server.set('Level', 3, 'UncertainLastUsableValue');
  await until(() => store.get('Plc/Level')?.value === 3, 'Level is Uncertain');
  t.like(store.require('Plc/Level'), {
    quality: 'Good',
    metadata: { statusCode: 'UncertainLastUsableValue' },
  });

  server.set('Level', 4, 'BadWaitingForInitialData');
  await until(() => store.get('Plc/Level')?.quality === 'Unavailable', 'Level is Unavailable');
  t.like(store.require('Plc/Level'), { reason: 'NeverRead' });

  server.set('Pressure', Number.POSITIVE_INFINITY);
  await until(() => store.get('Plc/Pressure')?.quality === 'Bad', 'Pressure turns Bad');
  t.like(store.require('Plc/Pressure'), { reason: 'DecodeError' });
  server.set('Pressure', 3.5);
  await until(() => store.get('Plc/Pressure')?.value === 3.5, 'Pressure is Good again');
});

test.serial('an absolute deadband holds back the small changes', async (t) => {
  server.set('Level', 10);
  const { driver, store } = setup({
    tags: [
      { name: 'Level', nodeId: testNodeId('Level'), deadband: 5 },
      { name: 'Counter', nodeId: testNodeId('Counter') },
    ],
  });
  t.teardown(() => driver.stop());
  await driver.start();
  await running(driver);
  await until(() => store.get('Plc/Level')?.value === 10, 'the first Level value');
  server.set('Level', 12);
  server.set('Counter', 100);
  await until(() => store.get('Plc/Counter')?.value === 100, 'the Counter change');
  // Sampled at least once more after the Counter change was published.
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.is(store.require('Plc/Level').value, 10, 'a change of 2 is within the deadband');
  server.set('Level', 16);
  await until(() => store.get('Plc/Level')?.value === 16, 'a change of 6 passes');
  t.pass();
});

test.serial(
  'a user name and its password open the session (security None, the password encrypted by its token policy); a wrong password is refused',
  async (t) => {
    const checks = server.userChecks;
    // Trace: whatever node-opcua or the driver logs at any level is in the text checked.
    const good = setup(
      {
        identity: { kind: 'username', username: testUser.username, password: testUser.password },
      },
      stateDir,
      'trace',
    );
    t.teardown(() => good.driver.stop());
    await good.driver.start();
    await running(good.driver);
    await until(() => good.store.get('Plc/Line1/Mode')?.quality === 'Good', 'values arrive');
    t.true(server.userChecks > checks, 'the server checked the password');
    t.false(good.logs.text().includes(testUser.password), 'the password is never logged');
    t.false(good.logs.text().includes('in clear'), 'no warning: the password was encrypted');

    const bad = setup(
      {
        identity: { kind: 'username', username: testUser.username, password: 'wrong-password' },
      },
      stateDir,
      'trace',
    );
    t.teardown(() => bad.driver.stop());
    await bad.driver.start();
    await until(() => bad.driver.status().state === 'Reconnecting', 'the session is refused');
    t.regex(bad.driver.status().message ?? '', /refused the user identity/);
    t.like(bad.store.require('Plc/Line1/Mode'), { quality: 'Unavailable' });
    t.false(bad.logs.text().includes('wrong-password'), 'the password is never logged');
  },
);

for (const securityPolicy of [
  'Basic256Sha256',
  'Aes128_Sha256_RsaOaep',
  'Aes256_Sha256_RsaPss',
] as const) {
  test.serial(
    `SignAndEncrypt with ${securityPolicy} once the server certificate is trusted`,
    async (t) => {
      const state = join(root, `state-${securityPolicy}`);
      const trusted = trustedCertsDir(opcuaPkiDir(state));
      await mkdir(trusted, { recursive: true });
      await copyFile(server.certificateFile, join(trusted, 'server.pem'));
      const { driver, store } = setup(
        {
          securityMode: 'SignAndEncrypt',
          securityPolicy,
          identity: { kind: 'username', username: testUser.username, password: testUser.password },
        },
        state,
      );
      t.teardown(() => driver.stop());
      await driver.start();
      await running(driver);
      server.set('Counter', 42);
      await until(() => store.get('Plc/Line1/Counter')?.value === 42, 'values arrive');
      t.deepEqual(await readdir(join(opcuaPkiDir(state), 'rejected')), []);
    },
  );
}

test.serial(
  'a password that would travel in clear is not sent, unless allowInsecurePassword',
  async (t) => {
    const clear = await OpcuaTestServer.start({ pkiDir: serverPki, clearPassword: true });
    t.teardown(() => clear.stop());
    const identity = {
      kind: 'username',
      username: testUser.username,
      password: testUser.password,
    };
    const refused = setup({ endpointUrl: clear.endpointUrl, identity }, stateDir, 'trace');
    t.teardown(() => refused.driver.stop());
    await refused.driver.start();
    await until(
      () => (refused.driver.status().counters?.failedAttempts ?? 0) >= 2,
      'two attempts are refused',
    );
    const status = refused.driver.status();
    t.is(status.state, 'Reconnecting', 'retried on the backoff');
    t.regex(status.message ?? '', /Refused to send the password of user 'operator' in clear/);
    t.regex(status.message ?? '', /allowInsecurePassword/);
    t.like(refused.store.require('Plc/Line1/Mode'), {
      quality: 'Unavailable',
      reason: 'Disconnected',
    });
    const warnings = refused.logs.lines.filter(
      (line) => line.level === 40 && /in clear/.test(line.msg ?? ''),
    );
    t.is(warnings.length, 1, 'logged once, not at every attempt');
    t.is(clear.userChecks, 0, 'the server never received the password');
    await refused.driver.stop();

    const allowed = setup(
      { endpointUrl: clear.endpointUrl, identity, allowInsecurePassword: true },
      stateDir,
      'trace',
    );
    t.teardown(() => allowed.driver.stop());
    await allowed.driver.start();
    await running(allowed.driver);
    await until(() => allowed.store.get('Plc/Line1/Mode')?.quality === 'Good', 'values arrive');
    t.true(clear.userChecks > 0);
    const allowedWarnings = allowed.logs.lines.filter(
      (line) => line.level === 40 && /crosses the network in clear/.test(line.msg ?? ''),
    );
    t.is(allowedWarnings.length, 1, 'a warning');
    t.false(allowed.logs.text().includes(testUser.password), 'the password is never logged');
  },
);

test.serial('the PKI folder and its private key are for the owner only', async (t) => {
  const state = join(root, 'state-modes');
  const pki = opcuaPkiDir(state);
  // Left open to others by someone else: the driver closes it.
  await mkdir(pki, { recursive: true });
  await chmod(pki, 0o755);
  const { driver } = setup({}, state);
  t.teardown(() => driver.stop());
  await driver.start();
  await running(driver);
  const mode = async (path: string) => (await stat(path)).mode & 0o777;
  t.is(await mode(pki), 0o700, 'pki');
  t.is(await mode(join(pki, 'own', 'private')), 0o700, 'own/private');
  const keys = await readdir(join(pki, 'own', 'private'));
  t.true(keys.length > 0, 'a private key was generated');
  for (const key of keys) {
    t.is((await mode(join(pki, 'own', 'private', key))) & 0o077, 0, `${key}: no group or other`);
  }
});

test.serial(
  'a server that is not there: Reconnecting, Unavailable, and stop ends the attempts',
  async (t) => {
    const { driver, store } = setup({ endpointUrl: 'opc.tcp://127.0.0.1:1' });
    await driver.start();
    await until(() => driver.status().state === 'Reconnecting', 'the first attempt fails');
    t.regex(driver.status().message ?? '', /Cannot reach opc\.tcp:\/\/127\.0\.0\.1:1/);
    t.like(store.require('Plc/Line1/Mode'), { quality: 'Unavailable', reason: 'Disconnected' });
    const before = Date.now();
    await driver.stop();
    t.true(Date.now() - before < 5000, 'stop does not wait for the attempts');
    t.is(driver.status().state, 'Stopped');
  },
);

test.serial('monitored items are created in calls no larger than the server allows', async (t) => {
  const limited = await OpcuaTestServer.start({ pkiDir: serverPki, maxMonitoredItemsPerCall: 4 });
  t.teardown(() => limited.stop());
  const names = ['Temperature', 'Counter', 'Running', 'Mode', 'Started', 'Label', 'Level'];
  const { driver, store } = setup({
    endpointUrl: limited.endpointUrl,
    tags: [
      ...names.map((name) => ({ name, nodeId: testNodeId(name) })),
      { name: 'Slow/Counter', nodeId: testNodeId('Counter'), publishingIntervalMs: 200 },
    ],
  });
  t.teardown(() => driver.stop());
  await driver.start();
  await running(driver);
  // 7 items at 50 ms in calls of 4 and 3; 1 item at 200 ms in a subscription of its own.
  t.like(driver.status().counters, { subscriptions: 2, createCalls: 3, monitoredItems: 8 });
  await until(() => store.get('Plc/Slow/Counter')?.quality === 'Good', 'the slow tag');
});

test.serial(
  'attempts that fail are retried on the injected clock, waits doubling up to the cap',
  async (t) => {
    const clock = new ManualClock();
    const store = new TagStore({ clock });
    const logs = captureLogs();
    const driver = createOpcuaDriver(
      config({
        reconnectDelayMs: 1000,
        maxReconnectDelayMs: 4000,
        identity: { kind: 'username', username: testUser.username, password: 'wrong-password' },
      }),
      { store, clock, logger: logs.logger, stateDir },
    );
    t.teardown(() => driver.stop());
    const failed = () => (driver.status().counters?.failedAttempts ?? 0) as number;
    await driver.start();
    for (const [attempt, delayMs] of [
      [1, 1000],
      [2, 2000],
      [3, 4000],
      [4, 4000],
    ] as const) {
      await until(
        () => failed() === attempt && clock.pendingTimers() === 1,
        `attempt ${attempt} fails and a retry is scheduled`,
      );
      clock.advance(delayMs - 1);
      t.is(clock.pendingTimers(), 1, `no retry before ${delayMs} ms`);
      clock.advance(1);
      t.is(clock.pendingTimers(), 0, `the retry after ${delayMs} ms has started`);
    }
    await until(() => failed() === 5, 'attempt 5 fails');
    const warnings = logs.lines.filter(
      (line) => line.level === 40 && line.msg?.startsWith('OPC UA connection failed'),
    );
    t.is(warnings.length, 1, 'the same failure is logged once, not at every retry');
    await driver.stop();
    t.is(clock.pendingTimers(), 0);
  },
);

test.serial('the registry builds the driver from a profile entry', async (t) => {
  const entry = driverConfigSchema.parse({
    type: 'opcua',
    name: 'Plc',
    endpointUrl: server.endpointUrl,
    tags: [{ name: 'T', nodeId: testNodeId('Temperature') }],
  });
  const store = new TagStore({ clock: systemClock });
  const driver = await createDriver(entry, {
    store,
    clock: systemClock,
    logger: captureLogs().logger,
    stateDir,
  });
  t.is(driver.type, 'opcua');
  t.is(driver.status().state, 'Stopped');
});
