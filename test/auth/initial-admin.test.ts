import { copyFile, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { initialAdminPasswordFile } from '../../src/auth/account-service.js';
import { verifyPassword } from '../../src/auth/password.js';
import type { UserRecord } from '../../src/auth/user-store.js';
import { Daemon } from '../../src/daemon.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { repoRoot } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

/** Starts the demo profile on `stateDir`; returns its URL and log capture. */
async function start(t: ExecutionContext, stateDir: string, profileFile: string) {
  const logs = captureLogs();
  const daemon = new Daemon({
    profileFile,
    stateDir,
    logger: logs.logger,
    clock: new ManualClock(Date.now()),
    listen: { host: '127.0.0.1', port: 0 },
    extensionsListen: { host: '127.0.0.1', port: 0 },
  });
  t.teardown(() => daemon.stop());
  await daemon.start();
  return { daemon, logs, url: daemon.url() as string };
}

async function accounts(stateDir: string): Promise<UserRecord[]> {
  return (
    JSON.parse(await readFile(join(stateDir, 'users.json'), 'utf8')) as { users: UserRecord[] }
  ).users;
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

test('the first start creates admin with a one-time password; the second start does not', async (t) => {
  const folder = await tempDir(t);
  const profileFile = join(folder, 'profile.json');
  await copyFile(join(repoRoot, 'config/demo.json'), profileFile);
  const stateDir = join(folder, 'state');

  const first = await start(t, stateDir, profileFile);
  const file = join(stateDir, initialAdminPasswordFile);
  t.is(initialAdminPasswordFile, 'initial-admin-password');
  t.is((await stat(file)).mode & 0o777, 0o600);
  const content = await readFile(file, 'utf8');
  t.regex(content, /^[A-Za-z0-9_-]{20}\n$/);
  const password = content.trim();

  const [admin, ...others] = await accounts(stateDir);
  t.is(others.length, 0);
  t.like(admin, {
    username: 'admin',
    kind: 'user',
    roles: ['Administrators'],
    disabled: false,
    requiresPasswordChange: true,
  });
  t.true(await verifyPassword(password, admin?.passwordHash ?? ''));
  t.false((await readFile(join(stateDir, 'users.json'), 'utf8')).includes(password));

  t.is(occurrences(first.logs.text(), password), 1, 'the password is logged exactly once');
  const warning = first.logs.lines.find((line) => line.msg?.includes(password));
  t.is(warning?.level, 40);
  t.is(
    warning?.msg,
    `First start: created account 'admin' with password ${password} (also in ${file}); it must be changed at first sign-in.`,
  );
  t.false(
    JSON.stringify(first.logs.recentEvents.list()).includes(password),
    "the console's event view never shows it",
  );
  t.like(
    first.logs.lines.find((line) => line.event === 'account-created'),
    { component: 'audit', username: 'admin' },
  );

  const response = await fetch(`${first.url}/api/v2/Users/Authenticate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  t.is(response.status, 200);
  const body = (await response.json()) as Record<string, unknown>;
  t.is(body.requiresPasswordChange, true);
  t.is(typeof body.preAuthToken, 'string');
  t.is(body.token, undefined, 'no session until the password is changed');
  t.is(body.username, 'admin');
  await first.daemon.stop();

  const second = await start(t, stateDir, profileFile);
  const after = await accounts(stateDir);
  t.is(after.length, 1);
  t.is(after[0]?.id, admin?.id, 'the same admin, not a new one');
  t.is(after[0]?.passwordHash, admin?.passwordHash);
  t.is(await readFile(file, 'utf8'), content, 'the password file is not rewritten');
  t.false(second.logs.lines.some((line) => line.event === 'account-created'));
  t.false(second.logs.text().includes(password));
  t.false(second.logs.lines.some((line) => /First start/.test(line.msg ?? '')));
});

test('the first-start password file is removed once admin has changed the password', async (t) => {
  const folder = await tempDir(t);
  const profileFile = join(folder, 'profile.json');
  await copyFile(join(repoRoot, 'config/demo.json'), profileFile);
  const stateDir = join(folder, 'state');
  const { url } = await start(t, stateDir, profileFile);
  const file = join(stateDir, initialAdminPasswordFile);
  const password = (await readFile(file, 'utf8')).trim();
  const post = (path: string, body: unknown, token?: string) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    });
  const pending = (await (
    await post('/api/v2/Users/Authenticate', { username: 'admin', password })
  ).json()) as {
    preAuthToken: string;
  };
  const changed = await post(
    '/api/v2/Users/Current/ChangePassword',
    { currentPassword: password, newPassword: 'plant floor 2026 admin' },
    pending.preAuthToken,
  );
  t.is(changed.status, 200);
  await t.throwsAsync(() => stat(file), undefined, 'the stale password file is gone');
});
