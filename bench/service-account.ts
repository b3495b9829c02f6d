/**
 * The accounts of an API under measurement, with one service account (`scada`, Viewers) whose
 * Bearer token the benchmark's client sends, as a SCADA system would.
 */
import type { Logger } from 'pino';
import { AccountService } from '../src/auth/account-service.js';
import { SignInLimiter } from '../src/auth/sign-in-limiter.js';
import { defaultLifetimes, TokenService } from '../src/auth/token-service.js';
import { UserStore } from '../src/auth/user-store.js';
import { SecretBox } from '../src/profile/secret-box.js';

/** The account service for `createApp`, the service account's token, and how to stop it. */
export interface ServiceAccount {
  accounts: AccountService;
  /** The Bearer token of the service account `scada`. */
  token: string;
  /** Stops the user store. */
  stop(): Promise<void>;
}

/** Opens users, tokens and secrets in `stateDir` (a fresh folder) and adds `scada`; `audit` logs. */
export async function serviceAccount(stateDir: string, audit: Logger): Promise<ServiceAccount> {
  const users = new UserStore({ stateDir });
  await users.start();
  const tokens = await TokenService.open(stateDir, defaultLifetimes);
  const accounts = new AccountService({
    users,
    tokens,
    limiter: new SignInLimiter(Date.now),
    secretBox: await SecretBox.open(stateDir),
    audit,
    now: Date.now,
  });
  await users.add({ username: 'scada', kind: 'service', roles: ['Viewers'] });
  const token = await accounts.generateServiceToken('scada');
  return { accounts, token, stop: () => users.stop() };
}
