import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { UserStore, usersFileName } from '../../src/auth/user-store.js';
import { captureLogs } from '../helpers/log-capture.js';
import { tempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

test('accounts persist in a 0600 file and names are unique', async (t) => {
  const dir = await tempDir(t);
  const store = new UserStore({ stateDir: dir });
  await store.start();
  const alice = await store.add({ username: 'alice', kind: 'user', roles: ['Viewers'] });
  await t.throwsAsync(() => store.add({ username: 'alice', kind: 'user', roles: [] }), {
    message: "An account named 'alice' exists.",
  });
  t.is((await stat(join(dir, usersFileName))).mode & 0o777, 0o600);
  const reopened = new UserStore({ stateDir: dir });
  await reopened.start();
  t.deepEqual(reopened.findByName('alice'), alice);
  t.deepEqual(reopened.findById(alice.id), alice);
  t.is(alice.tokenVersion, 1);
});

test('account names are case-insensitive: ADMIN cannot be added beside admin, and finds it', async (t) => {
  const store = new UserStore({ stateDir: await tempDir(t) });
  await store.start();
  const admin = await store.add({ username: 'admin', kind: 'user', roles: ['Administrators'] });
  await t.throwsAsync(() => store.add({ username: 'ADMIN', kind: 'user', roles: ['Viewers'] }), {
    message: "An account named 'admin' exists (names are compared without case).",
  });
  t.is(store.list().length, 1);
  // The name keeps the case it was created with; any case finds it.
  t.is(store.findByName('Admin')?.id, admin.id);
  t.is(store.require('ADMIN').id, admin.id);
  t.is(store.findByName('admin')?.username, 'admin');
});

test('a users file that already holds names differing only in case: exact names only, and a warning', async (t) => {
  const dir = await tempDir(t);
  const account = (id: string, username: string) => ({
    id,
    username,
    kind: 'user',
    roles: ['Viewers'],
    disabled: false,
    tokenVersion: 1,
    requiresPasswordChange: false,
    createdAt: '2026-01-01T00:00:00.000Z',
  });
  await writeFile(
    join(dir, usersFileName),
    JSON.stringify({
      users: [account('1', 'admin'), account('2', 'ADMIN'), account('3', 'Bob')],
      refreshFamilies: [],
    }),
  );
  const { logger, lines } = captureLogs();
  const store = new UserStore({ stateDir: dir, logger });
  await store.start();
  t.is(store.findByName('admin')?.id, '1');
  t.is(store.findByName('ADMIN')?.id, '2');
  t.is(store.findByName('Admin'), undefined, 'neither, when the case matches none exactly');
  t.is(store.findByName('bob')?.id, '3');
  const warnings = lines.filter((line) => line.level === 40);
  t.is(warnings.length, 1);
  t.deepEqual(warnings[0]?.usernames, ['admin', 'ADMIN']);
  t.regex(String(warnings[0]?.msg), /differ only in case/);
  // Neither can be added again in another case.
  await t.throwsAsync(() => store.add({ username: 'Admin', kind: 'user', roles: [] }), {
    message: "An account named 'admin' exists (names are compared without case).",
  });
});

test('update with revokeTokens bumps the version and drops the refresh families', async (t) => {
  const store = new UserStore({ stateDir: await tempDir(t), now: () => 1_000 });
  await store.start();
  const user = await store.add({ username: 'bob', kind: 'user', roles: [] });
  await store.addRefreshFamily({
    id: 'f',
    userId: user.id,
    currentJti: 'j',
    expiresAt: 2_000,
    revoked: false,
  });
  await store.update(user, { roles: ['Viewers'] }, false);
  t.is(user.tokenVersion, 1);
  t.truthy(store.findRefreshFamily('f'));
  await store.update(user, { disabled: true }, true);
  t.is(user.tokenVersion, 2);
  t.is(store.findRefreshFamily('f'), undefined);
});

test('expired refresh families are pruned on save', async (t) => {
  let now = 1_000;
  const store = new UserStore({ stateDir: await tempDir(t), now: () => now });
  await store.start();
  await store.addRefreshFamily({
    id: 'old',
    userId: 'u',
    currentJti: 'j',
    expiresAt: 1_500,
    revoked: false,
  });
  now = 2_000;
  await store.addRefreshFamily({
    id: 'new',
    userId: 'u',
    currentJti: 'k',
    expiresAt: 9_000,
    revoked: false,
  });
  t.is(store.findRefreshFamily('old'), undefined);
  t.truthy(store.findRefreshFamily('new'));
});

test('a watching store picks up changes another process writes', async (t) => {
  const dir = await tempDir(t);
  const daemonSide = new UserStore({ stateDir: dir, watch: true });
  await daemonSide.start();
  t.teardown(() => daemonSide.stop());
  const cliSide = new UserStore({ stateDir: dir });
  await cliSide.start();
  await cliSide.add({ username: 'carol', kind: 'service', roles: ['Viewers'] });
  // The watch's reload comes when the event loop gets to it: a safety net, not a 2 s bound.
  await until(() => daemonSide.findByName('carol') !== undefined, 'the watching store reloads');
  t.truthy(daemonSide.findByName('carol'));
  const text = await readFile(join(dir, usersFileName), 'utf8');
  await writeFile(join(dir, 'unrelated.txt'), text);
  t.is(daemonSide.list().length, 1);
});

test('a store with a stale copy does not undo what another process saved', async (t) => {
  const dir = await tempDir(t);
  const daemonSide = new UserStore({ stateDir: dir });
  await daemonSide.start();
  const user = await daemonSide.add({ username: 'dave', kind: 'user', roles: ['Viewers'] });
  const cliSide = new UserStore({ stateDir: dir });
  await cliSide.start();
  await cliSide.update(cliSide.require('dave'), { disabled: true }, true);
  // The daemon side has not reloaded: its copy still says enabled. Its next save must not win.
  await daemonSide.addRefreshFamily({
    id: 'f',
    userId: user.id,
    currentJti: 'j',
    expiresAt: Date.now() + 60_000,
    revoked: false,
  });
  const fresh = new UserStore({ stateDir: dir });
  await fresh.start();
  t.is(fresh.require('dave').disabled, true);
  t.is(fresh.require('dave').tokenVersion, 2);
  t.truthy(fresh.findRefreshFamily('f'));
});

test('a two-factor step is claimed once, even by two stores at once', async (t) => {
  const dir = await tempDir(t);
  const one = new UserStore({ stateDir: dir });
  await one.start();
  const user = await one.add({
    username: 'erin',
    kind: 'user',
    roles: [],
    twoFactor: { sealedSecret: 'x' },
  });
  const two = new UserStore({ stateDir: dir });
  await two.start();
  const claims = await Promise.all([
    one.claimTotpStep(user, 100),
    two.claimTotpStep(two.require('erin'), 100),
  ]);
  t.deepEqual(claims.sort(), [false, true]);
  t.false(await one.claimTotpStep(user, 99), 'an earlier step is refused too');
  t.true(await one.claimTotpStep(user, 101));
});

test('a refresh family rotates once; the losing use revokes it', async (t) => {
  const store = new UserStore({ stateDir: await tempDir(t) });
  await store.start();
  const expiresAt = Date.now() + 60_000;
  await store.addRefreshFamily({
    id: 'f',
    userId: 'u',
    currentJti: 'a',
    expiresAt,
    revoked: false,
  });
  t.is(await store.rotateRefreshFamily('f', 'a', 'b'), 'rotated');
  t.is(store.findRefreshFamily('f')?.expiresAt, expiresAt, 'rotation never moves the deadline');
  t.is(await store.rotateRefreshFamily('f', 'a', 'c'), 'revoked');
  t.is(store.findRefreshFamily('f'), undefined, 'a revoked family is no longer live');
  t.is(await store.rotateRefreshFamily('f', 'b', 'd'), 'gone');
  t.is(await store.rotateRefreshFamily('nope', 'a', 'b'), 'gone');
});

test('a revoked sign-in family stays revoked for a store opened afterwards (a restart)', async (t) => {
  const dir = await tempDir(t);
  const store = new UserStore({ stateDir: dir });
  await store.start();
  for (const id of ['ended', 'other']) {
    await store.addRefreshFamily({
      id,
      userId: 'u',
      currentJti: 'a',
      expiresAt: Date.now() + 60_000,
      revoked: false,
    });
  }
  t.true(await store.revokeRefreshFamily('ended'));
  t.false(await store.revokeRefreshFamily('ended'), 'only once');
  const restarted = new UserStore({ stateDir: dir });
  await restarted.start();
  t.is(restarted.findRefreshFamily('ended'), undefined);
  t.truthy(restarted.findRefreshFamily('other'));
  const text = await readFile(join(dir, usersFileName), 'utf8');
  t.false(text.includes('"ended"'), 'the file keeps live families only: it stays bounded');
});

test('update removes a key given as undefined, in the file and in the caller copy', async (t) => {
  const dir = await tempDir(t);
  const store = new UserStore({ stateDir: dir });
  await store.start();
  const user = await store.add({
    username: 'fay',
    kind: 'user',
    roles: [],
    twoFactor: { sealedSecret: 's' },
  });
  await store.update(user, { twoFactor: undefined }, true);
  t.false('twoFactor' in user);
  const text = await readFile(join(dir, usersFileName), 'utf8');
  t.false(text.includes('twoFactor'));
});
