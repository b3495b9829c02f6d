import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';
import type { Logger } from 'pino';
import { type ApiDeps, createApp } from '../../src/api/app.js';
import { AccountService } from '../../src/auth/account-service.js';
import { hashPassword } from '../../src/auth/password.js';
import type { RoleName } from '../../src/auth/permissions.js';
import { defaultSignInLimits, SignInLimiter } from '../../src/auth/sign-in-limiter.js';
import {
  defaultLifetimes,
  type TokenLifetimes,
  TokenService,
} from '../../src/auth/token-service.js';
import { UserManagement } from '../../src/auth/user-management.js';
import { type UserRecord, UserStore } from '../../src/auth/user-store.js';
import { SecretBox } from '../../src/profile/secret-box.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { captureLogs } from './log-capture.js';
import { ManualClock } from './manual-clock.js';
import { tempDir } from './temp-dir.js';

/** Password every harness account gets unless told otherwise. */
export const testPassword = 'correct horse battery';

/** A response with its body parsed (JSON when it is JSON, else text). */
export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
  /** Shorthand for `body` as a record. */
  json: Record<string, unknown>;
}

/** The API served over real HTTP on 127.0.0.1, with its collaborators exposed for tests. */
export interface ApiHarness {
  baseUrl: string;
  store: TagStore;
  users: UserStore;
  accounts: AccountService;
  tokens: TokenService;
  secretBox: SecretBox;
  clock: ManualClock;
  stateDir: string;
  logs: ReturnType<typeof captureLogs>;
  deps: ApiDeps;
  /** Adds an account (password {@link testPassword} for users). */
  addUser(username: string, roles: RoleName[], fields?: Partial<UserRecord>): Promise<UserRecord>;
  /** Signs in and returns the access token (the account must need no further step). */
  signIn(username: string, password?: string): Promise<string>;
  /** Creates a service account with these roles and returns its token. */
  serviceToken(username: string, roles: RoleName[]): Promise<string>;
  /** Sends a request; `token` becomes the Bearer header, `body` is sent as JSON. */
  request(
    path: string,
    options?: {
      method?: string;
      token?: string;
      body?: unknown;
      headers?: Record<string, string>;
      raw?: string;
    },
  ): Promise<ApiResponse>;
}

/** What the harness builds before the app, for deps that need it. */
export interface ApiHarnessBase {
  store: TagStore;
  clock: ManualClock;
  logs: ReturnType<typeof captureLogs>;
  audit: Logger;
  secretBox: SecretBox;
  stateDir: string;
  accounts: AccountService;
}

/** Options of {@link startApi}. */
export interface ApiHarnessOptions {
  lifetimes?: Partial<TokenLifetimes>;
  /**
   * Extra deps for createApp (history, DBC catalogue, …), or a function building them from the
   * harness's own store, clock and logs (collections on the store, publishers on the clock).
   */
  deps?:
    | Partial<ApiDeps>
    | ((base: ApiHarnessBase) => Partial<ApiDeps> | Promise<Partial<ApiDeps>>);
}

/**
 * Starts the API on an ephemeral loopback port with a fresh state directory, a manual clock
 * for token times, and a log capture. Everything is torn down with the test.
 */
export async function startApi(
  t: ExecutionContext,
  options: ApiHarnessOptions = {},
): Promise<ApiHarness> {
  const stateDir = await tempDir(t);
  const clock = new ManualClock(Date.now());
  const now = () => clock.now();
  const logs = captureLogs();
  const users = new UserStore({ stateDir, now });
  await users.start();
  const tokens = await TokenService.open(
    stateDir,
    { ...defaultLifetimes, ...options.lifetimes },
    now,
  );
  const secretBox = await SecretBox.open(stateDir);
  const audit = logs.logger.child({ component: 'audit' });
  const accounts = new AccountService({
    users,
    tokens,
    limiter: new SignInLimiter(now, defaultSignInLimits),
    secretBox,
    audit,
    now,
  });
  const store = new TagStore({ clock });
  const extra =
    typeof options.deps === 'function'
      ? await options.deps({ store, clock, logs, audit, secretBox, stateDir, accounts })
      : options.deps;
  const deps: ApiDeps = {
    store,
    logger: logs.logger,
    version: '0.0.0-test',
    accounts,
    audit,
    now,
    userManagement: new UserManagement({
      users,
      tokens: async () => tokens,
      audit,
      secretBox: async () => secretBox,
    }),
    ...extra,
  };
  const server: Server = createServer(createApp(deps).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await users.stop();
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const harness: ApiHarness = {
    baseUrl,
    store,
    users,
    accounts,
    tokens,
    secretBox,
    clock,
    stateDir,
    logs,
    deps,
    async addUser(username, roles, fields = {}) {
      const kind = fields.kind ?? 'user';
      return users.add({
        username,
        kind,
        roles,
        ...(kind === 'user' ? { passwordHash: await hashPassword(testPassword) } : {}),
        ...fields,
      });
    },
    async signIn(username, password = testPassword) {
      const response = await harness.request('/api/v2/Users/Authenticate', {
        method: 'POST',
        body: { username, password },
      });
      if (response.status !== 200 || typeof response.json.token !== 'string') {
        throw new Error(
          `sign-in of ${username} failed: ${response.status} ${JSON.stringify(response.body)}`,
        );
      }
      return response.json.token;
    },
    async serviceToken(username, roles) {
      await harness.addUser(username, roles, { kind: 'service' });
      return accounts.generateServiceToken(username);
    },
    async request(path, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      if (requestOptions.token) headers.Authorization = `Bearer ${requestOptions.token}`;
      let body: string | undefined = requestOptions.raw;
      if (requestOptions.body !== undefined) {
        body = JSON.stringify(requestOptions.body);
        headers['Content-Type'] ??= 'application/json';
      }
      const response = await fetch(`${baseUrl}${path}`, {
        method: requestOptions.method ?? 'GET',
        headers,
        ...(body !== undefined ? { body } : {}),
      });
      const text = await response.text();
      const type = response.headers.get('content-type') ?? '';
      const parsed: unknown = type.includes('json') && text ? JSON.parse(text) : text;
      return {
        status: response.status,
        headers: response.headers,
        body: parsed,
        json: (parsed && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>,
      };
    },
  };
  return harness;
}

/** The tokens of the three accounts {@link signInRoles} makes, by role. */
export interface RoleTokens {
  /** `admin`, an Administrator. */
  admin: string;
  /** `operator`, an Operator. */
  operator: string;
  /** `viewer`, a Viewer. */
  viewer: string;
}

/** Adds `admin`, `operator` and `viewer` (one per built-in group) and signs each in. */
export async function signInRoles(api: ApiHarness): Promise<RoleTokens> {
  await api.addUser('admin', ['Administrators']);
  await api.addUser('operator', ['Operators']);
  await api.addUser('viewer', ['Viewers']);
  return {
    admin: await api.signIn('admin'),
    operator: await api.signIn('operator'),
    viewer: await api.signIn('viewer'),
  };
}
