/**
 * The systemd notifications, against a fake notify socket (a unix datagram socket bound by a
 * Python helper), sent through the real systemd-notify by a real `tagd start`.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import test from 'ava';
import pino from 'pino';
import { SystemdNotifier, watchdogIntervalMs } from '../../src/systemd/notifier.js';
import { fakeNotifySocket } from '../helpers/fake-notify-socket.js';
import { logWaitMs, startTagd } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const haveSystemdNotify = spawnSync('systemd-notify', ['--version']).status === 0;
const silent = pino({ level: 'silent' });

test('the watchdog interval is half of WATCHDOG_USEC, for this pid only', (t) => {
  t.is(watchdogIntervalMs({ WATCHDOG_USEC: '30000000' }, 42), 15_000);
  t.is(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '42' }, 42), 15_000);
  t.is(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '43' }, 42), undefined);
  t.is(watchdogIntervalMs({}, 42), undefined);
  t.is(watchdogIntervalMs({ WATCHDOG_USEC: '0' }, 42), undefined);
  t.is(watchdogIntervalMs({ WATCHDOG_USEC: 'soon' }, 42), undefined);
});

test('without NOTIFY_SOCKET every notification is a no-op', async (t) => {
  const notifier = new SystemdNotifier({
    logger: silent,
    env: { WATCHDOG_USEC: '1000000' },
    command: '/nonexistent/systemd-notify',
  });
  t.false(notifier.enabled);
  t.is(notifier.watchdogInterval, undefined);
  await notifier.ready();
  await notifier.stopping();
  notifier.startWatchdog();
  notifier.stopWatchdog();
  t.pass();
});

test('a missing sender is logged once, never thrown', async (t) => {
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
  const notifier = new SystemdNotifier({
    logger,
    env: { NOTIFY_SOCKET: '/nonexistent.sock' },
    command: '/nonexistent/systemd-notify',
  });
  await notifier.ready();
  await notifier.ready();
  t.is(warnings.length, 1);
  t.regex(warnings[0] ?? '', /cannot notify systemd \(ready\)/);
});

if (haveSystemdNotify) {
  test('a reload is bracketed by RELOADING=1 with MONOTONIC_USEC and READY=1, also when it fails', async (t) => {
    const folder = await tempDir(t);
    const socket = await fakeNotifySocket(t, folder);
    const notifier = new SystemdNotifier({
      logger: silent,
      env: { ...process.env, NOTIFY_SOCKET: socket.path },
    });
    t.is(await notifier.reload(async () => 'applied'), 'applied');
    const reloading = await socket.waitFor('RELOADING=1');
    t.regex(reloading, /MONOTONIC_USEC=\d+/);
    await socket.waitFor('READY=1', socket.messages().indexOf(reloading) + 1);
    const before = socket.messages().length;
    await t.throwsAsync(
      notifier.reload(async () => {
        throw new Error('bad profile');
      }),
      { message: 'bad profile' },
    );
    const ready = await socket.waitFor('READY=1', before);
    t.regex(ready, /STATUS=reload failed/);
  });

  test('tagd start: READY=1 once the API answers, WATCHDOG=1 pings, RELOADING=1 on SIGHUP, STOPPING=1 on SIGTERM', async (t) => {
    t.timeout(logWaitMs + 60_000);
    const folder = await tempDir(t);
    const socket = await fakeNotifySocket(t, folder);
    const run = startTagd(
      ['start', '--demo', '--listen', '127.0.0.1:0', '--extensions-listen', '127.0.0.1:0'],
      {
        env: {
          TAGD_STATE_DIR: join(folder, 'state'),
          NOTIFY_SOCKET: socket.path,
          // 0.4 s: a ping every 0.2 s, so the test sees several without waiting long.
          WATCHDOG_USEC: '400000',
        },
      },
    );
    t.teardown(() => run.child.kill('SIGKILL'));

    await socket.waitFor('READY=1', 0, run);
    // READY=1 is sent after the 'tagd ready' line, so the API already listens.
    const ready = await run.waitForLog('tagd ready');
    const health = await fetch(`${ready.url}/healthz`);
    t.is(health.status, 200);

    // Keep-alives go on after start-up, from the event loop's timer.
    const afterReady = socket.messages().length;
    await socket.waitFor('WATCHDOG=1', afterReady);
    await socket.waitFor('WATCHDOG=1', socket.messages().length);

    const beforeReload = socket.messages().length;
    run.child.kill('SIGHUP');
    const reloading = await socket.waitFor('RELOADING=1', beforeReload);
    t.regex(reloading, /MONOTONIC_USEC=\d+/);
    await socket.waitFor('READY=1', socket.messages().indexOf(reloading) + 1);
    t.is((await fetch(`${ready.url}/healthz`)).status, 200, 'a reload does not stop the daemon');

    const beforeStop = socket.messages().length;
    run.child.kill('SIGTERM');
    await socket.waitFor('STOPPING=1', beforeStop);
    t.is(await run.exited, 0);
  });
} else if (process.env.CI) {
  test('systemd notifications through systemd-notify', (t) => {
    t.fail('systemd-notify is not on PATH; .ci/run installs systemd for this test');
  });
} else {
  test.skip('systemd notifications (skipped: systemd-notify not on PATH)', () => {});
}
