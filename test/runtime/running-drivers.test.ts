import test from 'ava';
import { driverConfigSchema } from '../../drivers/registry.js';
import { type LicenseState, unlicensed } from '../../src/license/license.js';
import {
  filesUnusableMessage,
  RunningDrivers,
  startFailedMessage,
} from '../../src/runtime/running-drivers.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** A server license: the data relay feature. */
const server: LicenseState = { edition: 'server', features: new Set(['dataRelay']) };

function setup(license: () => LicenseState = () => unlicensed) {
  const clock = new ManualClock();
  const store = new TagStore({ clock });
  const logs = captureLogs();
  const drivers = new RunningDrivers({
    store,
    logger: logs.logger,
    license,
    shared: { clock, stateDir: '/nonexistent', profileDir: '/nonexistent' },
  });
  return { clock, store, logs, drivers };
}

const simulator = (name: string, tags: string[], extra: Record<string, unknown> = {}) =>
  driverConfigSchema.parse({
    type: 'simulator',
    name,
    scanIntervalMs: 1000,
    tags: tags.map((tag) => ({ name: tag, kind: 'counter' })),
    ...extra,
  });

test('a restarted driver defines its tags anew; tags it dropped leave the store', async (t) => {
  const { store, drivers } = setup();
  t.teardown(() => drivers.stopAll());
  const first = await drivers.start(simulator('A', ['x', 'y']));
  await drivers.start(simulator('B', ['z']));
  t.true(first.ok && first.driver !== undefined);
  t.deepEqual([...store.ids()].sort(), ['A/x', 'A/y', 'B/z']);
  await drivers.start(simulator('A', ['y']));
  t.deepEqual([...store.ids()].sort(), ['A/y', 'B/z']);
  t.is(store.get('B/z')?.quality, 'Good', 'B was not touched');
  drivers.arrange(['B', 'A']);
  t.deepEqual(
    drivers.list().map((driver) => driver.name),
    ['B', 'A'],
  );
  t.deepEqual(await drivers.stop('A'), ['A/y']);
  t.is(drivers.get('A'), undefined);
  t.deepEqual([...store.ids()], ['B/z']);
});

test('a disabled driver does not start; one that fails is reported and listed Failed, not thrown', async (t) => {
  const { clock, drivers, logs } = setup();
  const disabled = await drivers.start(simulator('A', ['x'], { enabled: false }));
  t.deepEqual(disabled, { ok: true, driver: undefined, disabled: true });
  const broken = await drivers.start(
    driverConfigSchema.parse({
      type: 'can',
      name: 'Bus',
      dbcFile: '/nonexistent/bus.dbc',
      transport: { kind: 'replay', file: '/nonexistent/bus.log' },
    }),
  );
  t.false(broken.ok);
  t.is(drivers.get('Bus'), undefined, 'not running');
  t.deepEqual(
    drivers.list().map((driver) => [driver.name, driver.type, driver.status()]),
    [
      [
        'Bus',
        'can',
        {
          state: 'Error',
          since: new Date(clock.now()).toISOString(),
          message: startFailedMessage,
          tagCount: 0,
          counters: {},
        },
      ],
    ],
  );
  t.true(
    logs.lines.some((line) => line.msg?.includes('failed to start') && line.component === 'Bus'),
  );
  // Fixed (here: disabled), it is no longer listed; stopping it for good removes it too.
  await drivers.start(
    driverConfigSchema.parse({
      type: 'can',
      name: 'Bus',
      enabled: false,
      dbcFile: '/nonexistent/bus.dbc',
      transport: { kind: 'replay', file: '/nonexistent/bus.log' },
    }),
  );
  t.deepEqual(drivers.list(), []);
});

test('a driver left out for its files is listed Failed, naming only the fields', async (t) => {
  const { store, drivers } = setup();
  const config = simulator('A', ['x']);
  await drivers.start(config);
  await drivers.leaveOut(config, [
    {
      path: 'drivers[0].certificateFile',
      message: 'The file /etc/passwd holds no PEM certificate.',
    },
    { path: 'drivers[0].privateKeyFile', message: 'Cannot read it: no such file.' },
  ]);
  t.is(drivers.get('A'), undefined, 'the running driver was stopped');
  t.deepEqual([...store.ids()], [], 'and its tags removed');
  const status = drivers.list()[0]?.status();
  t.is(status?.state, 'Error');
  t.is(status?.message, filesUnusableMessage(['certificateFile', 'privateKeyFile']));
  t.false(String(status?.message).includes('/etc/passwd'), 'no path, no content');
  await drivers.stop('A');
  t.deepEqual(drivers.list(), []);
});

test('stopAll keeps the tags, Unavailable, as a daemon stop always did', async (t) => {
  const { store, drivers } = setup();
  await drivers.start(simulator('A', ['x']));
  await drivers.stopAll();
  t.is(store.get('A/x')?.quality, 'Unavailable');
  t.deepEqual(drivers.list(), []);
});

test('hooks hear of each driver started and of each before it stops', async (t) => {
  const clock = new ManualClock();
  const store = new TagStore({ clock });
  const heard: string[] = [];
  const drivers = new RunningDrivers({
    store,
    logger: captureLogs().logger,
    license: () => unlicensed,
    shared: { clock, stateDir: '/nonexistent' },
    hooks: {
      started: (driver) => heard.push(`started ${driver.name}`),
      stopping: (driver) => heard.push(`stopping ${driver.name} ${driver.status().state}`),
    },
  });
  await drivers.start(simulator('A', ['x']));
  await drivers.start(simulator('A', ['y']));
  await drivers.stopAll();
  t.deepEqual(heard, ['started A', 'stopping A Running', 'started A', 'stopping A Running']);
});

test('a relay driver does not start without the data relay feature: listed in Error saying why', async (t) => {
  let license: LicenseState = unlicensed;
  const { clock, store, drivers, logs } = setup(() => license);
  t.teardown(() => drivers.stopAll());
  // A broker nobody listens on: a started driver would only be Reconnecting, never fail.
  const relay = (type: 'mqtt' | 'sparkplug', name: string) =>
    driverConfigSchema.parse({
      type,
      name,
      brokerUrl: 'mqtt://127.0.0.1:1',
      ...(type === 'mqtt' ? { subscriptions: [{ topic: 'a', tag: 'A' }] } : { hostId: 'scada' }),
    });
  const unlicensedMessage =
    'The MQTT subscriber driver (`mqtt`) needs the data relay feature of the server or enterprise edition; this installation is not licensed.';
  t.deepEqual(await drivers.start(relay('mqtt', 'Sub')), { ok: false, message: unlicensedMessage });
  const sparkplug = await drivers.start(relay('sparkplug', 'Host'));
  t.false(sparkplug.ok);
  await drivers.start(simulator('Sim', ['x']));
  t.is(drivers.get('Sub'), undefined, 'not running');
  drivers.arrange(['Sub', 'Host', 'Sim']);
  t.deepEqual(
    drivers.list().map((driver) => [driver.name, driver.status().state]),
    [
      ['Sub', 'Error'],
      ['Host', 'Error'],
      ['Sim', 'Running'],
    ],
  );
  t.deepEqual(drivers.list()[0]?.status(), {
    state: 'Error',
    since: new Date(clock.now()).toISOString(),
    message: unlicensedMessage,
    tagCount: 0,
    counters: {},
  });
  t.regex(
    String(drivers.list()[1]?.status().message),
    /^The Sparkplug host driver \(`sparkplug`\) needs the data relay feature/,
  );
  t.deepEqual([...store.ids()], ['Sim/x'], 'no tag of an unlicensed driver');
  t.like(
    logs.lines.find((line) => line.component === 'Sub'),
    { level: 40, driver: 'mqtt', msg: `driver not started: ${unlicensedMessage}` },
  );

  // A standard license lacks the feature too; the message says which edition is installed.
  license = { edition: 'standard', features: new Set() };
  t.regex(
    String(drivers.licenseBlocker({ type: 'mqtt' })),
    /needs the data relay feature of the server or enterprise edition; this installation is licensed for the standard edition\.$/,
  );
  t.is(drivers.licenseBlocker({ type: 'simulator' }), undefined);

  // Licensed: the same entry starts (connecting in the background: Starting, not Error).
  license = server;
  const started = await drivers.start(relay('mqtt', 'Sub'));
  t.true(started.ok && started.driver !== undefined);
  t.not(drivers.get('Sub')?.status().state, 'Error');
  t.is(drivers.licenseBlocker({ type: 'sparkplug' }), undefined);
});
