import test from 'ava';
import { hashPassword } from '../../src/auth/password.js';
import { TokenService } from '../../src/auth/token-service.js';
import { UserManagement, usernameProblems } from '../../src/auth/user-management.js';
import { UserStore } from '../../src/auth/user-store.js';
import { ConflictError } from '../../src/errors.js';
import { captureLogs } from '../helpers/log-capture.js';
import { tempDir } from '../helpers/temp-dir.js';

async function management(stateDir: string) {
  const users = new UserStore({ stateDir });
  await users.start();
  const logs = captureLogs();
  const service = new UserManagement({
    users,
    tokens: () => TokenService.open(stateDir),
    audit: logs.logger.child({ component: 'audit' }),
  });
  return { users, logs, service };
}

test('two processes taking away "the other" administrator at once: one of them is refused', async (t) => {
  const stateDir = await tempDir(t);
  // Two stores on one state directory stand for the daemon (API) and `tagd users` (CLI).
  const api = await management(stateDir);
  const passwordHash = await hashPassword('correct horse battery');
  await api.users.add({ username: 'ann', kind: 'user', roles: ['Administrators'], passwordHash });
  await api.users.add({ username: 'bob', kind: 'user', roles: ['Administrators'], passwordHash });
  const cli = await management(stateDir);
  const results = await Promise.allSettled([
    api.service.update('ann', { enabled: false }),
    cli.service.remove('bob'),
  ]);
  const refused = results.filter((result) => result.status === 'rejected');
  t.is(refused.length, 1);
  t.true((refused[0] as PromiseRejectedResult).reason instanceof ConflictError);
  t.is((refused[0] as PromiseRejectedResult).reason.code, 'last-administrator');
  const check = new UserStore({ stateDir });
  await check.start();
  const acting = check
    .list()
    .filter((user) => !user.disabled && user.roles.includes('Administrators'));
  t.is(acting.length, 1, 'exactly one administrator is left');
});

test('changes to other accounts pass even where no acting administrator exists', async (t) => {
  const { users, service } = await management(await tempDir(t));
  await users.add({ username: 'vera', kind: 'user', roles: ['Viewers'] });
  await users.add({ username: 'robot', kind: 'service', roles: ['Administrators'] });
  await service.update('vera', { enabled: false });
  await service.update('robot', { roles: ['Viewers'] });
  await service.remove('robot');
  t.deepEqual(
    users.list().map((user) => user.username),
    ['vera'],
  );
});

test('an unchanged update writes nothing and audits nothing', async (t) => {
  const { users, service, logs } = await management(await tempDir(t));
  await users.add({ username: 'vera', kind: 'user', roles: ['Viewers'] });
  await service.update('vera', {
    roles: ['Viewers'],
    enabled: true,
    requiresPasswordChange: false,
  });
  t.is(users.findByName('vera')?.tokenVersion, 1);
  t.is(logs.lines.length, 0);
});

test('account names: the pattern, and the reserved route names in any case', (t) => {
  t.deepEqual(usernameProblems('olga.m@plant-1'), []);
  t.is(usernameProblems('-x')[0]?.path, 'username');
  t.is(usernameProblems('')[0]?.path, 'username');
  for (const name of ['Refresh', 'refresh', 'CURRENT', 'SignOut', 'authenticate']) {
    t.regex(usernameProblems(name)[0]?.message ?? '', /is reserved/, name);
  }
});
