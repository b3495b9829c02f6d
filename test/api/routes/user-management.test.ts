import test, { type ExecutionContext } from 'ava';
import { newTotpSecret } from '../../../src/auth/totp.js';
import { type ApiHarness, startApi, testPassword } from '../../helpers/api-harness.js';

const users = '/api/v2/Users';

/** The API with the administrator `root` signed in. */
async function adminApi(t: ExecutionContext): Promise<ApiHarness & { admin: string }> {
  const api = await startApi(t);
  await api.addUser('root', ['Administrators']);
  return Object.assign(api, { admin: await api.signIn('root') });
}

function auditLines(api: ApiHarness, event: string) {
  return api.logs.lines.filter((line) => line.component === 'audit' && line.event === event);
}

test('Viewers and Operators get 403 on every management route; no token is 401', async (t) => {
  const api = await adminApi(t);
  await api.addUser('olga', ['Operators']);
  await api.addUser('vera', ['Viewers']);
  const calls: [string, string, unknown?][] = [
    ['GET', users],
    ['POST', users, { username: 'x1' }],
    ['GET', `${users}/root`],
    ['PUT', `${users}/root`, { enabled: false }],
    ['DELETE', `${users}/root`],
    ['POST', `${users}/root/ResetPassword`],
    ['POST', `${users}/root/Token`],
    ['DELETE', `${users}/root/TwoFactor`],
  ];
  for (const name of ['olga', 'vera']) {
    const token = await api.signIn(name);
    for (const [method, path, body] of calls) {
      const response = await api.request(path, { method, token, body });
      t.is(response.status, 403, `${name} ${method} ${path}`);
      t.is(response.json.code, 'forbidden');
    }
  }
  t.is((await api.request(users)).status, 401);
  t.is((await api.request(`${users}/root`)).status, 401);
});

test('list and get show accounts without hashes, secrets or tokens', async (t) => {
  const api = await adminApi(t);
  await api.addUser('scada', ['Viewers'], { kind: 'service' });
  await api.addUser('olga', ['Operators'], {
    twoFactor: { sealedSecret: api.secretBox.seal(newTotpSecret()) },
  });
  const list = await api.request(users, { token: api.admin });
  t.is(list.status, 200);
  const accounts = list.json.users as Record<string, unknown>[];
  t.deepEqual(
    accounts.map((account) => account.username),
    ['root', 'scada', 'olga'],
  );
  t.deepEqual(Object.keys(accounts[2] ?? {}).sort(), [
    'createdAt',
    'enabled',
    'id',
    'requiresPasswordChange',
    'roles',
    'service',
    'twoFactor',
    'username',
  ]);
  t.like(accounts[1], { service: true, roles: ['Viewers'], enabled: true });
  t.like(accounts[2], { service: false, twoFactor: true });
  const text = JSON.stringify(list.body);
  t.false(text.includes('scrypt') || text.includes('sealed') || text.includes('enc:'));
  const one = await api.request(`${users}/olga`, { token: api.admin });
  t.is(one.status, 200);
  t.deepEqual(one.json, accounts[2]);
  const missing = await api.request(`${users}/ghost`, { token: api.admin });
  t.is(missing.status, 404);
  t.is(missing.json.code, 'not-found');
});

test('create without a password answers a one-time password that must be changed at sign-in', async (t) => {
  const api = await adminApi(t);
  const created = await api.request(users, {
    method: 'POST',
    token: api.admin,
    body: { username: 'olga', roles: ['Operators'] },
  });
  t.is(created.status, 201);
  t.is(created.headers.get('location'), '/api/v2/Users/olga');
  t.like(created.json, { username: 'olga', roles: ['Operators'], requiresPasswordChange: true });
  const oneTime = created.json.oneTimePassword as string;
  t.true(oneTime.length >= 10);

  const signIn = await api.request(`${users}/Authenticate`, {
    method: 'POST',
    body: { username: 'olga', password: oneTime },
  });
  t.true(signIn.json.requiresPasswordChange as boolean);
  t.is(signIn.json.token, undefined);
  const changed = await api.request(`${users}/Current/ChangePassword`, {
    method: 'POST',
    token: signIn.json.preAuthToken as string,
    body: { currentPassword: oneTime, newPassword: 'olga has a new password' },
  });
  t.is(changed.status, 200);
  t.is(typeof changed.json.token, 'string');

  const [line] = auditLines(api, 'account-created');
  t.like(line, { username: 'olga', kind: 'user', roles: ['Operators'], by: 'root' });
  t.false(api.logs.text().includes(oneTime), 'the one-time password is never logged');
});

test('create with a password, duplicate names, bad input and a service account', async (t) => {
  const api = await adminApi(t);
  const created = await api.request(users, {
    method: 'POST',
    token: api.admin,
    body: { username: 'vera', password: 'vera password 1' },
  });
  t.is(created.status, 201);
  t.like(created.json, { roles: ['Viewers'], requiresPasswordChange: false, enabled: true });
  t.is(created.json.oneTimePassword, undefined);
  t.is(typeof (await api.signIn('vera', 'vera password 1')), 'string');

  const again = await api.request(users, {
    method: 'POST',
    token: api.admin,
    body: { username: 'vera' },
  });
  t.is(again.status, 409);
  t.is(again.json.code, 'already-exists');

  const bad = await api.request(users, {
    method: 'POST',
    token: api.admin,
    body: { username: '-x', roles: ['Wizards'], password: 'short' },
  });
  t.is(bad.status, 400);
  t.deepEqual((bad.json.errors as { path: string }[]).map((error) => error.path).sort(), [
    'roles[0]',
    'username',
  ]);
  const short = await api.request(users, {
    method: 'POST',
    token: api.admin,
    body: { username: 'piet', password: 'short' },
  });
  t.is(short.status, 400);
  t.is((short.json.errors as { path: string }[])[0]?.path, 'password');

  const service = await api.request(users, {
    method: 'POST',
    token: api.admin,
    body: { username: 'scada', service: true, roles: ['Viewers'] },
  });
  t.is(service.status, 201);
  t.like(service.json, { service: true, requiresPasswordChange: false });
  t.is(service.json.oneTimePassword, undefined);
});

test('names are case-insensitive: ADMIN beside admin is 409, and /Users/{name} takes any case', async (t) => {
  const api = await adminApi(t);
  t.is(
    (await api.request(users, { method: 'POST', token: api.admin, body: { username: 'Vera' } }))
      .status,
    201,
  );
  const again = await api.request(users, {
    method: 'POST',
    token: api.admin,
    body: { username: 'VERA' },
  });
  t.is(again.status, 409);
  t.is(again.json.code, 'already-exists');
  const found = await api.request(`${users}/vera`, { token: api.admin });
  t.is(found.status, 200);
  t.is(found.json.username, 'Vera', 'the name keeps the case it was created with');
});

test('fixed Users routes are reserved names: never created, never shadowed', async (t) => {
  const api = await adminApi(t);
  for (const username of ['Refresh', 'current', 'SIGNOUT', 'Authenticate']) {
    const response = await api.request(users, {
      method: 'POST',
      token: api.admin,
      body: { username },
    });
    t.is(response.status, 400, username);
    t.is((response.json.errors as { path: string }[])[0]?.path, 'username');
    t.regex((response.json.errors as { message: string }[])[0]?.message ?? '', /is reserved/);
  }
  // GET Users/Refresh is still the token renewal, whoever asks.
  const refresh = await api.request(`${users}/Refresh`, { token: api.admin });
  t.is(refresh.status, 200);
  t.is(typeof refresh.json.token, 'string');
  t.is(refresh.json.username, 'root');
  // The other methods of the fixed routes are not account routes either: 405 as before.
  for (const [method, path, allow] of [
    ['PUT', `${users}/Refresh`, 'HEAD, GET'],
    ['DELETE', `${users}/SignOut`, 'POST'],
    ['GET', `${users}/Authenticate`, 'POST'],
    ['DELETE', `${users}/Authenticate/TwoFactor`, 'POST'],
  ] as const) {
    const response = await api.request(path, {
      method,
      token: api.admin,
      ...(method === 'GET' ? {} : { body: {} }),
    });
    t.is(response.status, 405, `${method} ${path}`);
    t.is(response.json.code, 'method-not-allowed');
    t.is(response.headers.get('allow'), allow);
  }
});

test("a role change and disabling void the account's tokens; a kind change is refused", async (t) => {
  const api = await adminApi(t);
  await api.addUser('olga', ['Operators']);
  const token = await api.signIn('olga');
  const demoted = await api.request(`${users}/olga`, {
    method: 'PUT',
    token: api.admin,
    body: { roles: ['Viewers'] },
  });
  t.is(demoted.status, 200);
  t.deepEqual(demoted.json.roles, ['Viewers']);
  t.is((await api.request('/api/v2/Tags?limit=1', { token })).status, 401);
  t.like(auditLines(api, 'role-changed')[0], {
    username: 'olga',
    roles: ['Viewers'],
    previousRoles: ['Operators'],
    by: 'root',
  });

  const second = await api.signIn('olga');
  const disabled = await api.request(`${users}/olga`, {
    method: 'PUT',
    token: api.admin,
    body: { enabled: false },
  });
  t.is(disabled.json.enabled, false);
  t.is((await api.request('/api/v2/Tags?limit=1', { token: second })).status, 401);
  t.is(auditLines(api, 'account-disabled').length, 1);

  const kind = await api.request(`${users}/olga`, {
    method: 'PUT',
    token: api.admin,
    body: { service: true },
  });
  t.is(kind.status, 400);
  t.is((kind.json.errors as { path: string }[])[0]?.path, 'service');

  const forced = await api.request(`${users}/olga`, {
    method: 'PUT',
    token: api.admin,
    body: { enabled: true, requiresPasswordChange: true },
  });
  t.like(forced.json, { enabled: true, requiresPasswordChange: true });
  const signIn = await api.request(`${users}/Authenticate`, {
    method: 'POST',
    body: { username: 'olga', password: testPassword },
  });
  t.true(signIn.json.requiresPasswordChange as boolean);
});

test('the last administrator cannot be deleted, disabled or demoted', async (t) => {
  const api = await adminApi(t);
  // A service account with the role does not count: it cannot sign in to repair anything.
  await api.addUser('robot', ['Administrators'], { kind: 'service' });
  await api.addUser('ex', ['Administrators'], { disabled: true });
  const attempts: [string, unknown?][] = [
    ['DELETE'],
    ['PUT', { enabled: false }],
    ['PUT', { roles: ['Operators'] }],
  ];
  for (const [method, body] of attempts) {
    const response = await api.request(`${users}/root`, { method, token: api.admin, body });
    t.is(response.status, 409, `${method} ${JSON.stringify(body)}`);
    t.is(response.json.code, 'last-administrator');
    t.regex(response.json.detail as string, /last enabled administrator/);
  }
  const root = api.users.findByName('root');
  t.like(root, { disabled: false, roles: ['Administrators'], tokenVersion: 1 });
  t.is(auditLines(api, 'account-deleted').length, 0);

  // With a second administrator, the first may go (even itself).
  await api.request(`${users}/ex`, { method: 'PUT', token: api.admin, body: { enabled: true } });
  const removed = await api.request(`${users}/root`, { method: 'DELETE', token: api.admin });
  t.is(removed.status, 204);
  t.is(api.users.findByName('root'), undefined);
  t.is((await api.request(users, { token: api.admin })).status, 401, 'its token died with it');
  t.like(auditLines(api, 'account-deleted')[0], { username: 'root', by: 'root' });
});

test('ResetPassword answers a one-time password, voids tokens and forces a change', async (t) => {
  const api = await adminApi(t);
  await api.addUser('olga', ['Operators']);
  const token = await api.signIn('olga');
  const reset = await api.request(`${users}/olga/ResetPassword`, {
    method: 'POST',
    token: api.admin,
  });
  t.is(reset.status, 200);
  const oneTime = reset.json.oneTimePassword as string;
  t.is(typeof oneTime, 'string');
  t.is((await api.request('/api/v2/Tags?limit=1', { token })).status, 401);
  const old = await api.request(`${users}/Authenticate`, {
    method: 'POST',
    body: { username: 'olga', password: testPassword },
  });
  t.is(old.status, 401);
  const signIn = await api.request(`${users}/Authenticate`, {
    method: 'POST',
    body: { username: 'olga', password: oneTime },
  });
  t.true(signIn.json.requiresPasswordChange as boolean);
  t.like(auditLines(api, 'password-reset')[0], { username: 'olga', generated: true, by: 'root' });
  t.false(api.logs.text().includes(oneTime));

  await api.addUser('scada', ['Viewers'], { kind: 'service' });
  const service = await api.request(`${users}/scada/ResetPassword`, {
    method: 'POST',
    token: api.admin,
  });
  t.is(service.status, 400);
});

test('Token regenerates a service token that works as Bearer; the previous one dies', async (t) => {
  const api = await adminApi(t);
  const previous = await api.serviceToken('scada', ['Viewers']);
  const generated = await api.request(`${users}/scada/Token`, {
    method: 'POST',
    token: api.admin,
  });
  t.is(generated.status, 200);
  const token = generated.json.token as string;
  t.is((await api.request('/api/v2/Tags?limit=1', { token })).status, 200);
  t.is((await api.request('/api/v2/Tags?limit=1', { token: previous })).status, 401);
  t.like(auditLines(api, 'service-token-generated').at(-1), { username: 'scada', by: 'root' });
  t.false(api.logs.text().includes(token), 'the token is never logged');

  await api.addUser('olga', ['Viewers']);
  const user = await api.request(`${users}/olga/Token`, { method: 'POST', token: api.admin });
  t.is(user.status, 400);
});

test('TwoFactor removal lets the user sign in with the password alone', async (t) => {
  const api = await adminApi(t);
  await api.addUser('olga', ['Viewers'], {
    twoFactor: { sealedSecret: api.secretBox.seal(newTotpSecret()) },
  });
  const before = await api.request(`${users}/Authenticate`, {
    method: 'POST',
    body: { username: 'olga', password: testPassword },
  });
  t.true(before.json.requiresTwoFactor as boolean);
  const removed = await api.request(`${users}/olga/TwoFactor`, {
    method: 'DELETE',
    token: api.admin,
  });
  t.is(removed.status, 204);
  t.is(typeof (await api.signIn('olga')), 'string');
  t.like(auditLines(api, 'two-factor-disabled')[0], { username: 'olga', by: 'root' });
  const again = await api.request(`${users}/olga/TwoFactor`, {
    method: 'DELETE',
    token: api.admin,
  });
  t.is(again.status, 204, 'idempotent');
  t.is(auditLines(api, 'two-factor-disabled').length, 1);
});

test('a cookie session must send the CSRF header on management changes', async (t) => {
  const api = await adminApi(t);
  const signIn = await fetch(`${api.baseUrl}${users}/Authenticate?useCookies=true`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'root', password: testPassword }),
  });
  const pairs = signIn.headers
    .getSetCookie()
    .map((line) => line.split(';')[0] ?? '')
    .filter((pair) => !pair.endsWith('='));
  const cookie = pairs.join('; ');
  const csrf = pairs.find((pair) => pair.startsWith('tagd_csrf='))?.split('=')[1] ?? '';
  const body = { username: 'olga' };
  const without = await api.request(users, { method: 'POST', body, headers: { Cookie: cookie } });
  t.is(without.status, 403);
  t.is(without.json.code, 'csrf-failed');
  const withHeader = await api.request(users, {
    method: 'POST',
    body,
    headers: { Cookie: cookie, 'X-CSRF-Token': csrf },
  });
  t.is(withHeader.status, 201);
});
