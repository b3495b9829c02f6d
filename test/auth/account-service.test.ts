/**
 * Sign-in families across a restart: what ended a sign-in is in users.json, so a daemon started
 * afterwards (new store, new token service, new account service on the same state directory)
 * still refuses its tokens.
 */
import test from 'ava';
import { hashPassword } from '../../src/auth/password.js';
import { daemonAccounts } from '../helpers/daemon-accounts.js';
import { tempDir } from '../helpers/temp-dir.js';

const password = 'correct horse battery';

test('an ended sign-in stays ended after a restart; a live one goes on', async (t) => {
  const stateDir = await tempDir(t);
  const before = await daemonAccounts(stateDir);
  await before.users.add({
    username: 'alice',
    kind: 'user',
    roles: ['Viewers'],
    passwordHash: await hashPassword(password),
  });
  const signedOut = await before.accounts.signIn('alice', password, '127.0.0.1');
  const reused = await before.accounts.signIn('alice', password, '127.0.0.1');
  const live = await before.accounts.signIn('alice', password, '127.0.0.1');
  await before.accounts.signOut(
    before.accounts.authenticate(signedOut.token as string, ['access']),
    '127.0.0.1',
  );
  await before.accounts.refresh(reused.refreshToken as string);
  await t.throwsAsync(() => before.accounts.refresh(reused.refreshToken as string));

  const after = await daemonAccounts(stateDir);
  for (const token of [signedOut.token, signedOut.refreshToken, reused.token]) {
    t.throws(() => after.accounts.authenticate(token as string, ['access', 'refresh']), {
      message: 'The token has been revoked.',
    });
  }
  t.is(after.accounts.authenticate(live.token as string, ['access']).user.username, 'alice');
  t.is(typeof (await after.accounts.refresh(live.refreshToken as string)).refreshToken, 'string');
});
