import { randomBytes } from 'node:crypto';
import test from 'ava';
import jwt from 'jsonwebtoken';
import { newTotpSecret, totpCode } from '../../../src/auth/totp.js';
import { type ApiHarness, startApi, testPassword } from '../../helpers/api-harness.js';
import { adminToken, demoDaemon } from '../../helpers/demo-daemon.js';

const authenticate = '/api/v2/Users/Authenticate';
const sample = '/api/v2/Tags/Sample/Demo/Line1/Temperature';

async function withTag(t: import('ava').ExecutionContext) {
  const api = await startApi(t);
  api.store.write([
    {
      fullTagId: 'Demo/Line1/Temperature',
      utcTimestamp: '2026-01-01T00:00:00.000Z',
      quality: 'Good',
      value: 61.5,
    },
  ]);
  return api;
}

function signIn(api: ApiHarness, username: string, password = testPassword, query = '') {
  return api.request(`${authenticate}${query}`, { method: 'POST', body: { username, password } });
}

function problemCode(response: { json: Record<string, unknown> }): unknown {
  return response.json.code;
}

test('sign-in answers token, refresh token, identity and permissions', async (t) => {
  const api = await withTag(t);
  const user = await api.addUser('alice', ['Operators']);
  const response = await signIn(api, 'alice');
  t.is(response.status, 200);
  t.deepEqual(Object.keys(response.json).sort(), [
    'id',
    'permissions',
    'refreshToken',
    'token',
    'username',
  ]);
  t.is(response.json.username, 'alice');
  t.is(response.json.id, user.id);
  t.deepEqual(response.json.permissions, [
    'TagView',
    'TagWrite',
    'DBCView',
    'DriverView',
    'PublisherView',
    'MetricsView',
    'AlertView',
    'AlertAcknowledge',
    'AlertShelve',
    'AssistantUse',
  ]);
  const read = await api.request(sample, { token: response.json.token as string });
  t.is(read.status, 200);
  t.is((read.json as { value?: number }).value, 61.5);
});

test('sign-in takes the account name in any case; the answer names it as created', async (t) => {
  const api = await withTag(t);
  const user = await api.addUser('Alice', ['Viewers']);
  for (const name of ['alice', 'ALICE', 'Alice']) {
    const response = await signIn(api, name);
    t.is(response.status, 200, name);
    t.is(response.json.id, user.id);
    t.is(response.json.username, 'Alice');
  }
});

test('a wrong password and an unknown name get the same 401, and both are audited', async (t) => {
  const api = await withTag(t);
  await api.addUser('alice', ['Viewers']);
  const wrong = await signIn(api, 'alice', 'not the password');
  const unknown = await signIn(api, 'mallory', 'whatever-it-is');
  for (const response of [wrong, unknown]) {
    t.is(response.status, 401);
    t.is(response.headers.get('content-type'), 'application/problem+json');
    t.is(problemCode(response), 'unauthorized');
    t.is(response.json.detail, 'Wrong username or password.');
    t.is(response.headers.get('www-authenticate'), 'Bearer realm="tagd"');
  }
  const audit = api.logs.lines.filter(
    (line) => line.component === 'audit' && line.event === 'sign-in-failed',
  );
  t.deepEqual(
    audit.map((line) => line.username),
    ['alice', 'mallory'],
  );
  t.false(api.logs.text().includes('not the password'), 'passwords never reach the log');
});

test('a disabled account and a service account cannot sign in with a password', async (t) => {
  const api = await withTag(t);
  await api.addUser('bob', ['Viewers'], { disabled: true });
  await api.addUser('svc', ['Viewers'], { kind: 'service' });
  t.is((await signIn(api, 'bob')).status, 401);
  t.is((await signIn(api, 'svc')).status, 401);
});

test('failed sign-ins are limited per account: 429 with Retry-After, then allowed after the window', async (t) => {
  const api = await withTag(t);
  await api.addUser('alice', ['Viewers']);
  for (let i = 0; i < 5; i++) t.is((await signIn(api, 'alice', 'wrong-password')).status, 401);
  const limited = await signIn(api, 'alice');
  t.is(limited.status, 429, 'even the right password waits');
  t.is(problemCode(limited), 'too-many-requests');
  t.is(limited.headers.get('retry-after'), '900');
  api.clock.advance(15 * 60_000 + 1);
  t.is((await signIn(api, 'alice')).status, 200);
});

test('failed sign-ins are limited per address across account names', async (t) => {
  const api = await withTag(t);
  await api.addUser('alice', ['Viewers']);
  for (let i = 0; i < 20; i++) t.is((await signIn(api, `user${i}`, 'wrong-password')).status, 401);
  const limited = await signIn(api, 'alice');
  t.is(limited.status, 429);
  t.true(api.logs.lines.some((line) => line.event === 'sign-in-limited'));
});

test('missing, malformed and foreign tokens get 401', async (t) => {
  const api = await withTag(t);
  await api.addUser('alice', ['Viewers']);
  const token = await api.signIn('alice');
  const [header, payload] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload as string, 'base64url').toString());
  const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
  const foreign = jwt.sign(claims, randomBytes(32), { algorithm: 'HS256' });
  const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url')}.${token.split('.')[2]}`;
  const cases: [string, Record<string, string>][] = [
    ['no token', {}],
    ['not Bearer', { Authorization: `Basic ${Buffer.from('alice:x').toString('base64')}` }],
    ['garbage', { Authorization: 'Bearer not-a-jwt' }],
    ['alg none', { Authorization: `Bearer ${unsigned}` }],
    ['signed with another key', { Authorization: `Bearer ${foreign}` }],
    ['altered claims', { Authorization: `Bearer ${tampered}` }],
  ];
  for (const [name, headers] of cases) {
    const response = await api.request(sample, { headers });
    t.is(response.status, 401, name);
    t.is(problemCode(response), 'unauthorized', name);
  }
});

test('an access token expires after its lifetime (15 minutes by default)', async (t) => {
  const api = await withTag(t);
  await api.addUser('alice', ['Viewers']);
  const token = await api.signIn('alice');
  api.clock.advance(14 * 60_000);
  t.is((await api.request(sample, { token })).status, 200);
  api.clock.advance(60_000);
  const expired = await api.request(sample, { token });
  t.is(expired.status, 401);
  t.is(expired.json.detail, 'The token has expired.');
});

test('a refresh token is no access token; an access token refreshes without rotating', async (t) => {
  const api = await withTag(t);
  await api.addUser('alice', ['Viewers']);
  const session = (await signIn(api, 'alice')).json;
  const asAccess = await api.request(sample, { token: session.refreshToken as string });
  t.is(asAccess.status, 401);
  t.is(asAccess.json.detail, 'A refresh token cannot be used here.');
  const renewed = await api.request('/api/v2/Users/Refresh', { token: session.token as string });
  t.is(renewed.status, 200);
  t.is(typeof renewed.json.token, 'string');
  t.is(renewed.json.refreshToken, undefined, 'an access token does not mint refresh tokens');
  t.is((await api.request(sample, { token: renewed.json.token as string })).status, 200);
});

test('refresh tokens rotate, and reusing an old one revokes the whole family', async (t) => {
  const api = await withTag(t);
  await api.addUser('alice', ['Viewers']);
  const first = (await signIn(api, 'alice')).json;
  const second = await api.request('/api/v2/Users/Refresh', {
    token: first.refreshToken as string,
  });
  t.is(second.status, 200);
  t.not(second.json.refreshToken, first.refreshToken);
  const reuse = await api.request('/api/v2/Users/Refresh', { token: first.refreshToken as string });
  t.is(reuse.status, 401);
  const afterReuse = await api.request('/api/v2/Users/Refresh', {
    token: second.json.refreshToken as string,
  });
  t.is(afterReuse.status, 401, 'the rotated token of the same family is revoked too');
  t.true(api.logs.lines.some((line) => line.event === 'refresh-reuse'));
  const other = (await signIn(api, 'alice')).json;
  t.is(
    (await api.request('/api/v2/Users/Refresh', { token: other.refreshToken as string })).status,
    200,
    'other sign-ins are unaffected',
  );
});

test('an account lacking the permission gets 403, not 401', async (t) => {
  const api = await withTag(t);
  await api.addUser('nobody', []);
  const response = await api.request(sample, { token: await api.signIn('nobody') });
  t.is(response.status, 403);
  t.is(problemCode(response), 'forbidden');
  t.is(response.json.detail, 'This route needs the TagView permission.');
});

test('service tokens never expire and die on regeneration, role change or disabling', async (t) => {
  const api = await withTag(t);
  const first = await api.serviceToken('scada', ['Viewers']);
  api.clock.advance(400 * 86_400_000);
  t.is((await api.request(sample, { token: first })).status, 200, 'still valid after 400 days');
  const second = await api.accounts.generateServiceToken('scada');
  t.is(
    (await api.request(sample, { token: first })).status,
    401,
    'regeneration voids the old token',
  );
  t.is((await api.request(sample, { token: second })).status, 200);
  const account = api.users.require('scada');
  await api.users.update(account, { roles: ['Operators'] }, true);
  t.is((await api.request(sample, { token: second })).status, 401, 'a role change voids it');
  const third = await api.accounts.generateServiceToken('scada');
  await api.users.update(account, { disabled: true }, true);
  t.is((await api.request(sample, { token: third })).status, 401, 'disabling voids it');
  t.true(api.logs.lines.some((line) => line.event === 'service-token-generated'));
});

test('two-factor: preAuthToken first, a code once, five wrong codes void it', async (t) => {
  const api = await withTag(t);
  const secret = newTotpSecret();
  await api.addUser('carol', ['Viewers'], {
    twoFactor: { sealedSecret: api.secretBox.seal(secret) },
  });
  const pending = (await signIn(api, 'carol')).json;
  t.is(pending.token, undefined);
  t.is(pending.requiresTwoFactor, true);
  t.is(typeof pending.preAuthToken, 'string');
  t.is(
    (await api.request(sample, { token: pending.preAuthToken as string })).status,
    401,
    'preauth is no access',
  );
  const code = totpCode('carol', secret, api.clock.now());
  const done = await api.request('/api/v2/Users/Authenticate/TwoFactor', {
    method: 'POST',
    body: { preAuthToken: pending.preAuthToken, code },
  });
  t.is(done.status, 200);
  t.is((await api.request(sample, { token: done.json.token as string })).status, 200);

  const again = (await signIn(api, 'carol')).json;
  const replay = await api.request('/api/v2/Users/Authenticate/TwoFactor', {
    method: 'POST',
    body: { preAuthToken: again.preAuthToken, code },
  });
  t.is(replay.status, 401, 'a used time step is refused');

  // Let the replayed code's failure leave the limiter window before counting five more.
  api.clock.advance(15 * 60_000 + 1);
  const third = (await signIn(api, 'carol')).json;
  api.clock.advance(90_000);
  for (let i = 0; i < 5; i++) {
    const wrong = await api.request('/api/v2/Users/Authenticate/TwoFactor', {
      method: 'POST',
      body: {
        preAuthToken: third.preAuthToken,
        code: '000000' === totpCode('carol', secret, api.clock.now()) ? '111111' : '000000',
      },
    });
    t.is(wrong.status, 401);
  }
  const voided = await api.request('/api/v2/Users/Authenticate/TwoFactor', {
    method: 'POST',
    body: { preAuthToken: third.preAuthToken, code: totpCode('carol', secret, api.clock.now()) },
  });
  t.is(voided.status, 401);
  t.is(voided.json.detail, 'Too many wrong codes; sign in again.');
  // Wrong codes count against the account: a new preAuthToken does not buy five more guesses.
  t.is((await signIn(api, 'carol')).status, 429);
  const badShape = await api.request('/api/v2/Users/Authenticate/TwoFactor', {
    method: 'POST',
    body: { preAuthToken: third.preAuthToken, code: '12ab' },
  });
  t.is(badShape.status, 400);
  t.deepEqual(badShape.json.errors, [{ path: 'code', message: 'must be 6 digits' }]);
});

test('a required password change: preAuthToken, then a session; older tokens die', async (t) => {
  const api = await withTag(t);
  await api.addUser('dave', ['Viewers'], { requiresPasswordChange: true });
  const pending = (await signIn(api, 'dave')).json;
  t.is(pending.requiresPasswordChange, true);
  t.is(pending.token, undefined);
  const change = (body: unknown, token = pending.preAuthToken as string) =>
    api.request('/api/v2/Users/Current/ChangePassword', { method: 'POST', token, body });
  const wrongCurrent = await change({
    currentPassword: 'nope-nope-nope',
    newPassword: 'a much better password',
  });
  t.is(wrongCurrent.status, 401);
  const tooShort = await change({ currentPassword: testPassword, newPassword: 'short' });
  t.is(tooShort.status, 400);
  t.deepEqual(tooShort.json.errors, [
    { path: 'newPassword', message: 'Must be at least 10 characters.' },
  ]);
  const same = await change({ currentPassword: testPassword, newPassword: testPassword });
  t.deepEqual(same.json.errors, [
    { path: 'newPassword', message: 'Must differ from the current password.' },
  ]);
  const done = await change({
    currentPassword: testPassword,
    newPassword: 'a much better password',
  });
  t.is(done.status, 200);
  t.is((await api.request(sample, { token: done.json.token as string })).status, 200);
  t.is(
    (await change({ currentPassword: testPassword, newPassword: 'yet another password' })).status,
    401,
    'the preauth token died',
  );
  t.is((await signIn(api, 'dave')).status, 401, 'the old password no longer works');
  t.is((await signIn(api, 'dave', 'a much better password')).status, 200);
});

test('a voluntary password change with an access token voids the other sessions', async (t) => {
  const api = await withTag(t);
  await api.addUser('erin', ['Viewers']);
  const elsewhere = await api.signIn('erin');
  const here = await api.signIn('erin');
  const done = await api.request('/api/v2/Users/Current/ChangePassword', {
    method: 'POST',
    token: here,
    body: { currentPassword: testPassword, newPassword: 'rotated password 2026' },
  });
  t.is(done.status, 200);
  t.is((await api.request(sample, { token: elsewhere })).status, 401);
  t.is((await api.request(sample, { token: done.json.token as string })).status, 200);
});

test('browser sessions: HttpOnly cookies, no token in the body, CSRF on unsafe methods', async (t) => {
  const api = await withTag(t);
  await api.addUser('frank', ['Viewers']);
  const response = await signIn(api, 'frank', testPassword, '?useCookies=true');
  t.is(response.status, 200);
  t.is(response.json.token, undefined);
  t.is(response.json.refreshToken, undefined);
  const cookies = response.headers.getSetCookie();
  const byName = new Map(cookies.map((cookie) => [cookie.split('=')[0], cookie]));
  t.regex(byName.get('tagd_session') ?? '', /httponly/i);
  t.regex(byName.get('tagd_session') ?? '', /samesite=strict/i);
  t.notRegex(byName.get('tagd_session') ?? '', /secure/i, 'no Secure flag over plain HTTP');
  t.regex(byName.get('tagd_refresh') ?? '', /path=\/api\/v2\/Users\/Refresh/i);
  t.notRegex(
    byName.get('tagd_csrf') ?? '',
    /httponly/i,
    'the page script must read the CSRF cookie',
  );
  const jar = cookies.map((cookie) => cookie.split(';')[0]).join('; ');
  const csrf = (byName.get('tagd_csrf') ?? '').split(';')[0]?.split('=')[1] ?? '';
  t.is(
    (await api.request(sample, { headers: { Cookie: jar } })).status,
    200,
    'GET needs no CSRF header',
  );
  const body = { currentPassword: testPassword, newPassword: 'cookie changed pass' };
  const withoutCsrf = await api.request('/api/v2/Users/Current/ChangePassword', {
    method: 'POST',
    headers: { Cookie: jar },
    body,
  });
  t.is(withoutCsrf.status, 403);
  t.is(problemCode(withoutCsrf), 'csrf-failed');
  const wrongCsrf = await api.request('/api/v2/Users/Current/ChangePassword', {
    method: 'POST',
    headers: { Cookie: jar, 'X-CSRF-Token': `${csrf}x` },
    body,
  });
  t.is(wrongCsrf.status, 403);
  const withCsrf = await api.request('/api/v2/Users/Current/ChangePassword?useCookies=true', {
    method: 'POST',
    headers: { Cookie: jar, 'X-CSRF-Token': csrf },
    body,
  });
  t.is(withCsrf.status, 200);
  t.is(withCsrf.json.token, undefined);
});

test('a browser refreshes through its refresh cookie and gets new cookies', async (t) => {
  const api = await withTag(t);
  await api.addUser('gina', ['Viewers']);
  const response = await signIn(api, 'gina', testPassword, '?useCookies=true');
  const refreshCookie = response.headers
    .getSetCookie()
    .find((cookie) => cookie.startsWith('tagd_refresh='))
    ?.split(';')[0];
  const renewed = await api.request('/api/v2/Users/Refresh', {
    headers: { Cookie: refreshCookie ?? '' },
  });
  t.is(renewed.status, 200);
  t.is(renewed.json.token, undefined);
  t.true(renewed.headers.getSetCookie().some((cookie) => cookie.startsWith('tagd_session=')));
});

test('sign-in bodies are validated field by field', async (t) => {
  const api = await withTag(t);
  const response = await api.request(authenticate, {
    method: 'POST',
    body: { username: 5, extra: true },
  });
  t.is(response.status, 400);
  t.deepEqual((response.json.errors as { path: string }[]).map((error) => error.path).sort(), [
    'extra',
    'password',
    'username',
  ]);
  const notJson = await api.request(authenticate, {
    method: 'POST',
    raw: 'username=a',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  t.is(notJson.status, 415);
  const broken = await api.request(authenticate, {
    method: 'POST',
    raw: '{"username": ',
    headers: { 'Content-Type': 'application/json' },
  });
  t.is(broken.status, 400);
  t.is(broken.headers.get('content-type'), 'application/problem+json');
});

test('a CSRF header with bytes that are not UTF-8 is a 403, never a 500', async (t) => {
  const api = await withTag(t);
  await api.addUser('hank', ['Viewers']);
  const response = await signIn(api, 'hank', testPassword, '?useCookies=true');
  const jar = response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
  const csrf = /tagd_csrf=([^;]+)/.exec(jar)?.[1] ?? '';
  const { connect } = await import('node:net');
  const url = new URL(api.baseUrl);
  const body = JSON.stringify({ currentPassword: testPassword, newPassword: 'whatever 12345' });
  // Same string length as the cookie, but the last byte is 0xE9: 2 bytes once read as UTF-8.
  const head = Buffer.concat([
    Buffer.from(
      `POST /api/v2/Users/Current/ChangePassword HTTP/1.1\r\nHost: ${url.host}\r\nCookie: ${jar}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\nX-CSRF-Token: ${csrf.slice(0, -1)}`,
    ),
    Buffer.from([0xe9]),
    Buffer.from(`\r\n\r\n${body}`),
  ]);
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.end(head));
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  const status = Number(answer.split(' ')[1]);
  t.is(status, 403);
});

test('a dead cookie session hears 401 (sign in again), not a CSRF complaint', async (t) => {
  const api = await withTag(t);
  await api.addUser('ivy', ['Viewers']);
  const response = await signIn(api, 'ivy', testPassword, '?useCookies=true');
  const jar = response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
  await api.users.update(api.users.require('ivy'), { disabled: true }, true);
  const answer = await api.request('/api/v2/Users/Current/ChangePassword', {
    method: 'POST',
    headers: { Cookie: jar },
    body: { currentPassword: testPassword, newPassword: 'whatever 12345' },
  });
  t.is(answer.status, 401);
});

test('an account keeps at most 20 sign-ins; a refresh slides the refresh expiry within the sign-in', async (t) => {
  // A 30-day sign-in, so sliding 7-day refresh tokens can be seen to outlive the first one.
  const api = await startApi(t, { lifetimes: { session: 30 * 86_400 } });
  await api.addUser('jack', ['Viewers']);
  const sessions = [];
  for (let i = 0; i < 21; i++) sessions.push((await signIn(api, 'jack')).json);
  const refresh = (token: unknown) =>
    api.request('/api/v2/Users/Refresh', { token: token as string });
  t.is((await refresh(sessions[0]?.refreshToken)).status, 401, 'the oldest sign-in was forgotten');
  t.is((await refresh(sessions[0]?.token)).status, 401, 'its access token with it');
  t.is((await refresh(sessions[1]?.token)).status, 200);
  const renewed = await refresh(sessions[20]?.refreshToken);
  t.is(renewed.status, 200);
  // Six days on, refresh again; the first refresh token would have expired on day 7.
  api.clock.advance(6 * 86_400_000);
  const again = await refresh(renewed.json.refreshToken);
  t.is(again.status, 200);
  api.clock.advance(6 * 86_400_000);
  t.is(
    (await refresh(again.json.refreshToken)).status,
    200,
    'day 12: the refresh token slid (the sign-in ends on day 30)',
  );
});

// ---- Sessions end (issue 10 item 3): every access token belongs to a sign-in family. ----

const refreshPath = '/api/v2/Users/Refresh';
const signOutPath = '/api/v2/Users/SignOut';
const hourMs = 3_600_000;

function renew(api: ApiHarness, token: unknown) {
  return api.request(refreshPath, { token: token as string });
}

function claimsOf(token: unknown): Record<string, unknown> {
  return jwt.decode(token as string) as Record<string, unknown>;
}

/** The `name=value` pairs of a response's Set-Cookie headers, as a Cookie header. */
function jarOf(response: { headers: Headers }): string {
  return response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0] ?? '')
    .filter((pair) => !pair.endsWith('='))
    .join('; ');
}

/** A cookie as a browser keeps it. */
interface BrowserCookie {
  name: string;
  value: string;
  path: string;
  /** Wall-clock epoch ms (koa writes Expires from the wall clock). */
  expiresAt: number;
}

/** The cookies a response sets (expired ones, i.e. deletions, dropped). */
function browserCookies(response: { headers: Headers }): BrowserCookie[] {
  const receivedAt = Date.now();
  return response.headers
    .getSetCookie()
    .map((line) => {
      const [pair = '', ...attributes] = line.split(/;\s*/);
      const at = pair.indexOf('=');
      const attribute = (key: string) =>
        attributes
          .find((entry) => entry.toLowerCase().startsWith(`${key}=`))
          ?.slice(key.length + 1);
      const expires = attribute('expires');
      return {
        name: pair.slice(0, at),
        value: pair.slice(at + 1),
        path: attribute('path') ?? '/',
        expiresAt: expires === undefined ? Number.POSITIVE_INFINITY : Date.parse(expires),
      };
    })
    .filter((cookie) => cookie.value !== '' && cookie.expiresAt > receivedAt);
}

/**
 * The Cookie header a browser sends to `path` `elapsedMs` after it received `cookies`: only
 * cookies whose path matches (RFC 6265 §5.1.4) and that have not expired, longer paths first.
 */
function cookieHeaderFor(cookies: BrowserCookie[], path: string, elapsedMs = 0): string {
  const at = Date.now() + elapsedMs;
  const matches = (cookiePath: string) =>
    path === cookiePath ||
    (path.startsWith(cookiePath) && (cookiePath.endsWith('/') || path[cookiePath.length] === '/'));
  return cookies
    .filter((cookie) => matches(cookie.path) && cookie.expiresAt > at)
    .sort((a, b) => b.path.length - a.path.length)
    .map((cookie) => `${cookie.name}=${cookie.value}`)
    .join('; ');
}

test('reusing a rotated refresh token voids the access tokens of that sign-in at once', async (t) => {
  const api = await withTag(t);
  await api.addUser('kate', ['Viewers']);
  const first = (await signIn(api, 'kate')).json;
  const other = (await signIn(api, 'kate')).json;
  const second = (await renew(api, first.refreshToken)).json;
  const renewedAccess = (await renew(api, second.token)).json;
  for (const token of [first.token, second.token, renewedAccess.token]) {
    t.is((await api.request(sample, { token: token as string })).status, 200);
  }
  t.is((await renew(api, first.refreshToken)).status, 401, 'reuse is refused');
  for (const [name, token] of [
    ['the first access token', first.token],
    ['the rotated access token', second.token],
    ['an access token renewed from it', renewedAccess.token],
  ] as [string, unknown][]) {
    const answer = await api.request(sample, { token: token as string });
    t.is(answer.status, 401, name);
    t.is(answer.json.detail, 'The token has been revoked.', name);
  }
  t.is((await renew(api, second.token)).status, 401, 'nor can one renew itself');
  t.is((await api.request(sample, { token: other.token as string })).status, 200, 'other sign-in');
  t.is((await renew(api, other.refreshToken)).status, 200);
});

test('access tokens carry their sign-in family and the time the password was checked', async (t) => {
  const api = await withTag(t);
  await api.addUser('lena', ['Viewers']);
  const session = (await signIn(api, 'lena')).json;
  const access = claimsOf(session.token);
  const refresh = claimsOf(session.refreshToken);
  t.is(typeof access.fam, 'string');
  t.is(access.fam, refresh.fam);
  t.is(access.auth_time, Math.floor(api.clock.now() / 1000));
  t.is(refresh.auth_time, access.auth_time);
  api.clock.advance(60_000);
  const renewed = claimsOf((await renew(api, session.token)).json.token);
  t.is(renewed.fam, access.fam);
  t.is(renewed.auth_time, access.auth_time, 'a renewal is no new sign-in');
  const service = claimsOf(await api.serviceToken('scada', ['Viewers']));
  t.is(service.fam, undefined, 'service tokens belong to no sign-in');
  t.is(service.auth_time, undefined);
  t.is(service.exp, undefined);
});

test('an access token renews itself only up to sessionLifetimeHours (168 h by default)', async (t) => {
  // Day-long access tokens, so a week of renewals is a handful of requests.
  const api = await startApi(t, { lifetimes: { access: 86_400 } });
  api.store.write([
    {
      fullTagId: 'Demo/Line1/Temperature',
      utcTimestamp: '2026-01-01T00:00:00.000Z',
      quality: 'Good',
      value: 61.5,
    },
  ]);
  await api.addUser('mona', ['Viewers']);
  const signedInAt = api.clock.now();
  const deadline = Math.floor(signedInAt / 1000) + 168 * 3600;
  let token = (await signIn(api, 'mona')).json.token;
  for (let hour = 23; hour < 168; hour += 23) {
    api.clock.advance(23 * hourMs);
    const renewed = await renew(api, token);
    t.is(renewed.status, 200, `renewal at ${hour} h`);
    token = renewed.json.token;
    t.true((claimsOf(token).exp as number) <= deadline, `exp capped at ${hour} h`);
  }
  t.is(claimsOf(token).exp, deadline, 'the last renewal ends exactly at the deadline');
  api.clock.advance(signedInAt + 168 * hourMs - 1000 - api.clock.now());
  const last = await renew(api, token);
  t.is(last.status, 200, 'still valid one second before the deadline');
  t.is(claimsOf(last.json.token).exp, deadline);
  t.is((await api.request(sample, { token: last.json.token as string })).status, 200);
  api.clock.advance(1000);
  for (const candidate of [token, last.json.token]) {
    t.is((await api.request(sample, { token: candidate as string })).status, 401);
    t.is((await renew(api, candidate)).status, 401, 'no renewal past the deadline');
  }
  t.is((await signIn(api, 'mona')).status, 200, 'the password starts a new sign-in');
});

test('refresh-token rotation stops at the session deadline too', async (t) => {
  const api = await startApi(t, { lifetimes: { session: 10 * 3600 } });
  await api.addUser('nina', ['Viewers']);
  const signedInAt = api.clock.now();
  const deadline = Math.floor(signedInAt / 1000) + 10 * 3600;
  let session = (await signIn(api, 'nina')).json;
  t.is(claimsOf(session.refreshToken).exp, deadline, '7-day refresh token capped at 10 h');
  for (let i = 0; i < 3; i++) {
    api.clock.advance(3 * hourMs);
    const rotated = await renew(api, session.refreshToken);
    t.is(rotated.status, 200);
    session = rotated.json;
    t.is(claimsOf(session.refreshToken).exp, deadline);
    t.true((claimsOf(session.token).exp as number) <= deadline);
  }
  api.clock.advance(hourMs);
  t.is((await renew(api, session.refreshToken)).status, 401);
});

test('SignOut voids the access and refresh tokens of that sign-in only', async (t) => {
  const api = await withTag(t);
  await api.addUser('olga', ['Viewers']);
  const leaving = (await signIn(api, 'olga')).json;
  const staying = (await signIn(api, 'olga')).json;
  const renewed = (await renew(api, leaving.token)).json;
  const out = await api.request(signOutPath, { method: 'POST', token: leaving.token as string });
  t.is(out.status, 204);
  t.is(out.body, '');
  for (const token of [leaving.token, renewed.token]) {
    t.is((await api.request(sample, { token: token as string })).status, 401);
  }
  t.is((await renew(api, leaving.refreshToken)).status, 401, 'its refresh token too');
  t.is(
    (await api.request(signOutPath, { method: 'POST', token: renewed.token as string })).status,
    401,
  );
  t.is((await api.request(sample, { token: staying.token as string })).status, 200);
  t.is((await renew(api, staying.refreshToken)).status, 200, 'another sign-in is unaffected');
  t.true(api.logs.lines.some((line) => line.event === 'sign-out' && line.username === 'olga'));

  // With only a refresh token left (the access token expired), a client can still sign out.
  const idle = (await signIn(api, 'olga')).json;
  api.clock.advance(16 * 60_000);
  const byRefresh = await api.request(signOutPath, {
    method: 'POST',
    token: idle.refreshToken as string,
  });
  t.is(byRefresh.status, 204);
  t.is((await renew(api, idle.refreshToken)).status, 401);

  const service = await api.serviceToken('scada', ['Viewers']);
  const serviceOut = await api.request(signOutPath, { method: 'POST', token: service });
  t.is(serviceOut.status, 401, 'a service token has no sign-in to end');
  t.is((await api.request(sample, { token: service })).status, 200);
});

test('SignOut of a cookie session needs the CSRF header and clears the cookies', async (t) => {
  const api = await withTag(t);
  await api.addUser('paula', ['Viewers']);
  const response = await signIn(api, 'paula', testPassword, '?useCookies=true');
  const jar = jarOf(response);
  const csrf = /tagd_csrf=([^;]+)/.exec(jar)?.[1] ?? '';
  const refreshCookie = /tagd_refresh=[^;]+/.exec(jar)?.[0] ?? '';
  const without = await api.request(signOutPath, { method: 'POST', headers: { Cookie: jar } });
  t.is(without.status, 403);
  t.is(problemCode(without), 'csrf-failed');
  t.is((await api.request(sample, { headers: { Cookie: jar } })).status, 200, 'still signed in');
  const out = await api.request(signOutPath, {
    method: 'POST',
    headers: { Cookie: jar, 'X-CSRF-Token': csrf },
  });
  t.is(out.status, 204);
  assertClearsAllCookies(t, out);
  t.is((await api.request(sample, { headers: { Cookie: jar } })).status, 401);
  t.is((await api.request(refreshPath, { headers: { Cookie: refreshCookie } })).status, 401);
});

/** A response expires all three session cookies, each on the path it was set with. */
function assertClearsAllCookies(t: import('ava').ExecutionContext, response: { headers: Headers }) {
  const cleared = response.headers.getSetCookie();
  const paths = cleared.map((cookie) => {
    const name = cookie.split('=')[0];
    t.regex(cookie, new RegExp(`^${name}=;`), `${name} emptied`);
    t.regex(cookie, /expires=Thu, 01 Jan 1970/i, `${name} expired`);
    return `${name} ${/path=([^;]+)/i.exec(cookie)?.[1]}`;
  });
  t.deepEqual(paths.sort(), [
    'tagd_csrf /',
    'tagd_refresh /api/v2/Users/',
    // Where earlier versions set it: a browser may still hold one.
    'tagd_refresh /api/v2/Users/Refresh',
    'tagd_session /',
  ]);
}

test('a browser whose access cookie expired can still sign out: its refresh cookie is sent to SignOut', async (t) => {
  const api = await withTag(t);
  await api.addUser('sven', ['Viewers']);
  const response = await signIn(api, 'sven', testPassword, '?useCookies=true');
  t.is(response.status, 200);
  const browser = browserCookies(response);
  t.is(browser.find((cookie) => cookie.name === 'tagd_refresh')?.path, '/api/v2/Users/');
  t.notRegex(cookieHeaderFor(browser, sample), /tagd_refresh/, 'never sent to data routes');
  t.regex(cookieHeaderFor(browser, signOutPath), /tagd_refresh=/);
  t.regex(cookieHeaderFor(browser, refreshPath), /tagd_refresh=/);
  // The sign-in also expires a refresh cookie left on the path of earlier versions.
  t.true(
    response.headers
      .getSetCookie()
      .some((cookie) => /^tagd_refresh=;.*path=\/api\/v2\/Users\/Refresh/i.test(cookie)),
  );

  // 16 idle minutes: the access token and its cookie (15 minutes) are gone.
  const idleMs = 16 * 60_000;
  api.clock.advance(idleMs);
  const dataJar = cookieHeaderFor(browser, sample, idleMs);
  t.notRegex(dataJar, /tagd_session/, 'the browser dropped the session cookie');
  t.is((await api.request(sample, { headers: { Cookie: dataJar } })).status, 401);
  const jar = cookieHeaderFor(browser, signOutPath, idleMs);
  t.regex(jar, /tagd_refresh=/);
  const csrf = /tagd_csrf=([^;]+)/.exec(jar)?.[1] ?? '';
  t.not(csrf, '');

  const forged = await api.request(signOutPath, { method: 'POST', headers: { Cookie: jar } });
  t.is(forged.status, 403, 'the refresh cookie needs the CSRF header like any cookie session');
  t.is(problemCode(forged), 'csrf-failed');
  t.deepEqual(forged.headers.getSetCookie(), [], 'a refused request clears nothing');

  const out = await api.request(signOutPath, {
    method: 'POST',
    headers: { Cookie: jar, 'X-CSRF-Token': csrf },
  });
  t.is(out.status, 204);
  assertClearsAllCookies(t, out);
  const renew = await api.request(refreshPath, {
    headers: { Cookie: cookieHeaderFor(browser, refreshPath, idleMs) },
  });
  t.is(renew.status, 401, 'the sign-in is revoked: its refresh cookie renews nothing');
  t.true(api.logs.lines.some((line) => line.event === 'sign-out' && line.username === 'sven'));

  // A browser that kept its dead cookies (the answer was lost) hears 401, and they are cleared.
  const again = await api.request(signOutPath, {
    method: 'POST',
    headers: { Cookie: jar, 'X-CSRF-Token': csrf },
  });
  t.is(again.status, 401);
  assertClearsAllCookies(t, again);
  // A Bearer caller has no cookies to clear.
  const bearer = await api.request(signOutPath, {
    method: 'POST',
    headers: { Authorization: 'Bearer not-a-token' },
  });
  t.is(bearer.status, 401);
  t.deepEqual(bearer.headers.getSetCookie(), []);
});

test('cookie lifetimes end with the sign-in', async (t) => {
  const api = await startApi(t, { lifetimes: { session: 600 } });
  await api.addUser('quinn', ['Viewers']);
  const response = await signIn(api, 'quinn', testPassword, '?useCookies=true');
  // Browsers (and koa, writing Expires) count on the wall clock, not the harness's clock.
  const answeredAt = Date.now();
  const cookies = response.headers.getSetCookie();
  // The three session cookies, and the deletion of a refresh cookie on its former path.
  t.is(cookies.length, 4);
  for (const cookie of cookies) {
    const expires = Date.parse(/expires=([^;]+)/i.exec(cookie)?.[1] ?? '');
    t.true(expires <= answeredAt + 600_000 + 1000, cookie);
  }
});

test('a password change ends every sign-in and starts a new one at that moment', async (t) => {
  const api = await withTag(t);
  await api.addUser('rita', ['Viewers']);
  const here = (await signIn(api, 'rita')).json;
  const elsewhere = (await signIn(api, 'rita')).json;
  api.clock.advance(100 * hourMs);
  // Renewed through the refresh token, since access tokens live 15 minutes.
  const current = (await renew(api, here.refreshToken)).json;
  const changed = await api.request('/api/v2/Users/Current/ChangePassword', {
    method: 'POST',
    token: current.token as string,
    body: { currentPassword: testPassword, newPassword: 'rotated password 2026' },
  });
  t.is(changed.status, 200);
  t.is(claimsOf(changed.json.token).auth_time, Math.floor(api.clock.now() / 1000));
  t.not(claimsOf(changed.json.token).fam, claimsOf(current.token).fam);
  for (const session of [current, elsewhere]) {
    t.is((await api.request(sample, { token: session.token as string })).status, 401);
    t.is((await renew(api, session.refreshToken)).status, 401);
  }
  // Day 7 of the old sign-in is long gone by hour 200; the new one runs to hour 268.
  api.clock.advance(100 * hourMs);
  const later = await renew(api, changed.json.refreshToken);
  t.is(later.status, 200);
  t.is((await api.request(sample, { token: later.json.token as string })).status, 200);
});

test('two-factor starts the sign-in when the code is checked', async (t) => {
  const api = await withTag(t);
  const secret = newTotpSecret();
  await api.addUser('sara', ['Viewers'], {
    twoFactor: { sealedSecret: api.secretBox.seal(secret) },
  });
  const pending = (await signIn(api, 'sara')).json;
  t.is(claimsOf(pending.preAuthToken).fam, undefined, 'a preauth token is no sign-in yet');
  api.clock.advance(4 * 60_000);
  const done = await api.request('/api/v2/Users/Authenticate/TwoFactor', {
    method: 'POST',
    body: { preAuthToken: pending.preAuthToken, code: totpCode('sara', secret, api.clock.now()) },
  });
  t.is(done.status, 200);
  t.is(claimsOf(done.json.token).auth_time, Math.floor(api.clock.now() / 1000));
  t.is(typeof claimsOf(done.json.token).fam, 'string');
});

test('disabling an account ends its sign-ins; enabling it does not revive them', async (t) => {
  const api = await withTag(t);
  await api.addUser('tina', ['Viewers']);
  const session = (await signIn(api, 'tina')).json;
  const tina = api.users.require('tina');
  await api.users.update(tina, { disabled: true }, true);
  t.is((await api.request(sample, { token: session.token as string })).status, 401);
  t.is((await renew(api, session.refreshToken)).status, 401);
  t.is(api.users.findRefreshFamily(claimsOf(session.token).fam as string), undefined);
  await api.users.update(tina, { disabled: false }, false);
  t.is((await api.request(sample, { token: session.token as string })).status, 401);
  t.is((await renew(api, session.token)).status, 401);
  t.is((await signIn(api, 'tina')).status, 200);
});

test('the daemon takes the session lifetime from security.sessionLifetimeHours', async (t) => {
  const { url, stateDir } = await demoDaemon(t, {
    profile: (demo: Record<string, unknown>) => {
      demo.security = { accessTokenMinutes: 120, sessionLifetimeHours: 1 };
    },
  });
  const token = await adminToken(url, stateDir);
  const claims = claimsOf(token);
  t.is(claims.exp, (claims.auth_time as number) + 3600, 'a 2-hour access token cut to 1 hour');
  // (Moving the daemon's clock an hour would run an hour of simulator ticks; exp says enough.)
  const renewed = await fetch(`${url}${refreshPath}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  t.is(renewed.status, 200);
  const next = claimsOf(((await renewed.json()) as { token: string }).token);
  t.is(next.exp, claims.exp, 'a renewal ends with the sign-in too');
  t.is(next.fam, claims.fam);
});

// Self-service two-factor (POST/DELETE /api/v2/Users/Current/TwoFactor…).
const ownTwoFactor = '/api/v2/Users/Current/TwoFactor';

function secretOf(uri: unknown): string {
  const secret = new URL(String(uri)).searchParams.get('secret');
  if (!secret) throw new Error(`no secret in ${String(uri)}`);
  return secret;
}

test('GET Users/Current names the account, its two-factor, and the gateway version and host', async (t) => {
  const api = await withTag(t);
  await api.addUser('alice', ['Operators'], { theme: 'dark' });
  const token = await api.signIn('alice');
  const current = await api.request('/api/v2/Users/Current', { token });
  t.is(current.status, 200);
  t.like(current.json, {
    username: 'alice',
    kind: 'user',
    roles: ['Operators'],
    twoFactor: false,
    twoFactorPending: false,
    theme: 'dark',
    version: api.deps.version,
    hostName: (await import('node:os')).hostname(),
  });
  t.true((current.json.permissions as string[]).includes('TagWrite'));
  const service = await api.serviceToken('svc', ['Viewers']);
  const asService = await api.request('/api/v2/Users/Current', { token: service });
  t.is(asService.status, 200);
  t.is(asService.json.kind, 'service');
  t.is((await api.request('/api/v2/Users/Current')).status, 401);
});

test('self-service two-factor: password, then a code from the pending secret enrols; other tokens die', async (t) => {
  const api = await withTag(t);
  await api.addUser('erin', ['Viewers']);
  const token = await api.signIn('erin');
  const otherSession = await api.signIn('erin');

  const wrongPassword = await api.request(ownTwoFactor, {
    method: 'POST',
    token,
    body: { password: 'not the password' },
  });
  t.is(wrongPassword.status, 400);
  t.is(problemCode(wrongPassword), 'credentials-refused');
  t.deepEqual(wrongPassword.json.errors, [{ path: 'password', message: 'Wrong password.' }]);
  t.is((await api.request(sample, { token })).status, 200, 'a wrong password ends no session');

  const started = await api.request(ownTwoFactor, {
    method: 'POST',
    token,
    body: { password: testPassword },
  });
  t.is(started.status, 200);
  t.regex(String(started.json.uri), /^otpauth:\/\/totp\/tagd:erin\?/);
  t.regex(String(started.json.qrCodeSvg), /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  t.is(Date.parse(String(started.json.expiresAt)), api.clock.now() + 10 * 60_000);
  const secret = secretOf(started.json.uri);
  const pendingView = await api.request('/api/v2/Users/Current', { token });
  t.like(pendingView.json, { twoFactor: false, twoFactorPending: true });
  // Nothing is enrolled yet: a sign-in still needs no code.
  t.is(typeof (await signIn(api, 'erin')).json.token, 'string');

  const now = api.clock.now();
  const right = totpCode('erin', secret, now);
  const wrong = right === '000000' ? '111111' : '000000';
  const refused = await api.request(`${ownTwoFactor}/Confirm`, {
    method: 'POST',
    token,
    body: { code: wrong },
  });
  t.is(refused.status, 400);
  t.is(problemCode(refused), 'credentials-refused');
  t.is((refused.json.errors as { path: string }[])[0]?.path, 'code');

  const confirmed = await api.request(`${ownTwoFactor}/Confirm`, {
    method: 'POST',
    token,
    body: { code: right },
  });
  t.is(confirmed.status, 200);
  const fresh = confirmed.json.token as string;
  t.is((await api.request(sample, { token: fresh })).status, 200, 'the enrolling client goes on');
  t.is((await api.request(sample, { token })).status, 401, 'its old token is void');
  t.is((await api.request(sample, { token: otherSession })).status, 401, 'other sessions end');
  t.like((await api.request('/api/v2/Users/Current', { token: fresh })).json, {
    twoFactor: true,
    twoFactorPending: false,
  });

  // From now on a sign-in needs a code, and the confirming code's step is spent.
  const pending = (await signIn(api, 'erin')).json;
  t.is(pending.requiresTwoFactor, true);
  const replay = await api.request('/api/v2/Users/Authenticate/TwoFactor', {
    method: 'POST',
    body: { preAuthToken: pending.preAuthToken, code: right },
  });
  t.is(replay.status, 401, 'the confirming code cannot sign in again');
  api.clock.advance(30_000);
  const next = await api.request('/api/v2/Users/Authenticate/TwoFactor', {
    method: 'POST',
    body: { preAuthToken: pending.preAuthToken, code: totpCode('erin', secret, api.clock.now()) },
  });
  t.is(next.status, 200);

  const events = api.logs.lines.filter((line) => line.component === 'audit').map((l) => l.event);
  for (const event of [
    'two-factor-enrolment-refused',
    'two-factor-enrolment-started',
    'two-factor-enrolment-failed',
    'two-factor-enabled',
  ]) {
    t.true(events.includes(event), event);
  }
  t.false(api.logs.text().includes(secret), 'the secret never reaches the log');
});

test('a pending enrolment expires after 10 minutes; five wrong codes void it', async (t) => {
  const api = await withTag(t);
  await api.addUser('erin', ['Viewers']);
  // Signed in afresh after each jump of the clock: access tokens last 15 minutes.
  let token = await api.signIn('erin');
  const start = () =>
    api.request(ownTwoFactor, { method: 'POST', token, body: { password: testPassword } });
  const confirm = (code: string) =>
    api.request(`${ownTwoFactor}/Confirm`, { method: 'POST', token, body: { code } });

  const malformed = await confirm('12ab');
  t.is(malformed.status, 400);
  t.deepEqual(malformed.json.errors, [{ path: 'code', message: 'must be 6 digits' }]);
  const nothing = await confirm('123456');
  t.is(nothing.status, 409);
  t.is(problemCode(nothing), 'two-factor-state');

  const first = secretOf((await start()).json.uri);
  api.clock.advance(10 * 60_000);
  token = await api.signIn('erin');
  const late = await confirm(totpCode('erin', first, api.clock.now()));
  t.is(late.status, 409, 'expired exactly at 10 minutes');
  t.is(problemCode(late), 'two-factor-state');

  const second = secretOf((await start()).json.uri);
  api.clock.advance(10 * 60_000 - 1);
  token = await api.signIn('erin');
  const right = totpCode('erin', second, api.clock.now());
  const wrong = right === '000000' ? '111111' : '000000';
  for (let i = 0; i < 4; i++) t.is((await confirm(wrong)).status, 400);
  const fifth = await confirm(wrong);
  t.is(fifth.status, 400);
  t.regex(String(fifth.json.detail), /enrolment is void/);
  // The limiter's window must pass before the right code can even be tried again.
  api.clock.advance(15 * 60_000 + 1);
  token = await api.signIn('erin');
  const voided = await confirm(totpCode('erin', second, api.clock.now()));
  t.is(voided.status, 409, 'the voided secret enrols nothing');
  t.is(api.users.findByName('erin')?.twoFactor, undefined);
});

test('wrong passwords and codes of self-service two-factor count as failed sign-ins (429)', async (t) => {
  const api = await withTag(t);
  await api.addUser('erin', ['Viewers']);
  const token = await api.signIn('erin');
  for (let i = 0; i < 5; i++) {
    const wrong = await api.request(ownTwoFactor, {
      method: 'POST',
      token,
      body: { password: 'wrong-password' },
    });
    t.is(wrong.status, 400);
  }
  const limited = await api.request(ownTwoFactor, {
    method: 'POST',
    token,
    body: { password: testPassword },
  });
  t.is(limited.status, 429);
  t.is(limited.headers.get('retry-after'), '900');
  t.is((await signIn(api, 'erin')).status, 429, 'the sign-in limit is the same one');
});

test("removing one's own two-factor takes the password and a current code; other tokens die", async (t) => {
  const api = await withTag(t);
  const secret = newTotpSecret();
  await api.addUser('carol', ['Viewers'], {
    twoFactor: { sealedSecret: api.secretBox.seal(secret) },
  });
  const pending = (await signIn(api, 'carol')).json;
  const session = await api.request('/api/v2/Users/Authenticate/TwoFactor', {
    method: 'POST',
    body: { preAuthToken: pending.preAuthToken, code: totpCode('carol', secret, api.clock.now()) },
  });
  const token = session.json.token as string;
  const remove = (body: unknown) =>
    api.request(`${ownTwoFactor}/Remove`, { method: 'POST', token, body });

  api.clock.advance(30_000);
  const code = totpCode('carol', secret, api.clock.now());
  const enrolAgain = await api.request(ownTwoFactor, {
    method: 'POST',
    token,
    body: { password: testPassword },
  });
  t.is(enrolAgain.status, 409, 'an enrolled account removes first');
  t.is(problemCode(enrolAgain), 'two-factor-state');

  const wrongPassword = await remove({ password: 'wrong-password', code });
  t.is(wrongPassword.status, 400);
  t.is((wrongPassword.json.errors as { path: string }[])[0]?.path, 'password');
  const wrongCode = await remove({
    password: testPassword,
    code: code === '000000' ? '111111' : '000000',
  });
  t.is(wrongCode.status, 400);
  t.is((wrongCode.json.errors as { path: string }[])[0]?.path, 'code');
  t.is((await remove({ password: testPassword })).status, 400, 'the code is required');

  const removed = await remove({ password: testPassword, code });
  t.is(removed.status, 200);
  t.is((await api.request(sample, { token })).status, 401, 'the old token is void');
  const fresh = removed.json.token as string;
  t.like((await api.request('/api/v2/Users/Current', { token: fresh })).json, { twoFactor: false });
  t.is(api.users.findByName('carol')?.twoFactor, undefined);
  t.is(typeof (await signIn(api, 'carol')).json.token, 'string', 'no code asked any more');
  const none = await api.request(`${ownTwoFactor}/Remove`, {
    method: 'POST',
    token: fresh,
    body: { password: testPassword, code },
  });
  t.is(none.status, 409);
  t.true(api.logs.lines.some((line) => line.event === 'two-factor-disabled' && line.self === true));
});

test('service accounts have no self-service two-factor (403)', async (t) => {
  const api = await withTag(t);
  const token = await api.serviceToken('svc', ['Administrators']);
  // A service token is no access token: the routes refuse it before anything else.
  const start = await api.request(ownTwoFactor, {
    method: 'POST',
    token,
    body: { password: 'whatever-it-is' },
  });
  t.is(start.status, 401);
  // An access token of a service account cannot exist; the service itself refuses one anyway.
  const service = api.users.findByName('svc');
  if (!service) throw new Error('no svc');
  const principal = {
    user: service,
    claims: { typ: 'access', sub: service.id, ver: service.tokenVersion, jti: 'x' },
    permissions: new Set(),
  } as unknown as Parameters<typeof api.accounts.startTwoFactorEnrolment>[0];
  const error = await t.throwsAsync(
    api.accounts.startTwoFactorEnrolment(principal, 'whatever-it-is', '127.0.0.1'),
  );
  t.is((error as { code?: string }).code, 'forbidden');
});

test('self-service two-factor through browser cookies: Confirm sets new cookies', async (t) => {
  const api = await withTag(t);
  await api.addUser('erin', ['Viewers']);
  const login = await signIn(api, 'erin', testPassword, '?useCookies=true');
  const cookies = login.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .filter((pair): pair is string => pair !== undefined);
  const cookieHeader = cookies.join('; ');
  const csrf = cookies.find((pair) => pair.startsWith('tagd_csrf='))?.split('=')[1] ?? '';
  const headers = { Cookie: cookieHeader, 'X-CSRF-Token': csrf };
  const started = await api.request(ownTwoFactor, {
    method: 'POST',
    headers,
    body: { password: testPassword },
  });
  t.is(started.status, 200);
  const code = totpCode('erin', secretOf(started.json.uri), api.clock.now());
  const confirmed = await api.request(`${ownTwoFactor}/Confirm?useCookies=true`, {
    method: 'POST',
    headers,
    body: { code },
  });
  t.is(confirmed.status, 200);
  t.is(confirmed.json.token, undefined, 'no token in the body of a cookie session');
  t.true(confirmed.headers.getSetCookie().some((cookie) => cookie.startsWith('tagd_session=')));
  t.is((await api.request(sample, { headers: { Cookie: cookieHeader } })).status, 401);
});
