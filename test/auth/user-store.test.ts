import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { UserStore, usersFileName } from '../../src/auth/user-store.js';
import { tempDir } from '../helpers/temp-dir.js';

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
  const deadline = Date.now() + 2_000;
  while (!daemonSide.findByName('carol') && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  t.truthy(daemonSide.findByName('carol'));
  const text = await readFile(join(dir, usersFileName), 'utf8');
  await writeFile(join(dir, 'unrelated.txt'), text);
  t.is(daemonSide.list().length, 1);
});
