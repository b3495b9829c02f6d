import { AccountService } from '../../src/auth/account-service.js';
import { SignInLimiter } from '../../src/auth/sign-in-limiter.js';
import { TokenService } from '../../src/auth/token-service.js';
import { UserStore } from '../../src/auth/user-store.js';
import { SecretBox } from '../../src/profile/secret-box.js';
import { captureLogs } from './log-capture.js';

/**
 * The accounts of `stateDir` as a daemon opens them in `tagd start`: its own user store
 * (started: stop it if the test needs the folder back), token service, sign-in limiter and
 * secret box, and an account service on them whose audit lines `logs` keeps.
 */
export async function daemonAccounts(stateDir: string) {
  const logs = captureLogs();
  const users = new UserStore({ stateDir });
  await users.start();
  const accounts = new AccountService({
    users,
    tokens: await TokenService.open(stateDir),
    limiter: new SignInLimiter(Date.now),
    secretBox: await SecretBox.open(stateDir),
    audit: logs.logger,
    now: Date.now,
  });
  return { logs, users, accounts };
}
