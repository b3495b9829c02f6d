import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import jwt from 'jsonwebtoken';
import { jwtKeyFileName, TokenService } from '../../src/auth/token-service.js';
import { tempDir } from '../helpers/temp-dir.js';

const account = { id: 'u-1', tokenVersion: 3 };
const signedInAt = Date.UTC(2026, 0, 1) / 1000;
const signIn = { fam: 'f1', authTime: signedInAt };

async function service(t: import('ava').ExecutionContext, start = Date.UTC(2026, 0, 1)) {
  let now = start;
  const dir = await tempDir(t);
  const tokens = await TokenService.open(
    dir,
    { access: 900, refresh: 86_400, preauth: 300, session: 7200 },
    () => now,
  );
  return { tokens, dir, advance: (ms: number) => (now += ms) };
}

test('the signing key is 32 bytes, mode 0600, and kept across restarts', async (t) => {
  const { tokens, dir } = await service(t);
  const file = join(dir, jwtKeyFileName);
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.is((await stat(file)).size, 32);
  const { token } = tokens.issue('access', account, { signIn });
  const reopened = await TokenService.open(dir, undefined, () => Date.UTC(2026, 0, 1));
  t.is(reopened.verify(token, ['access']).sub, 'u-1');
});

test('claims carry sub, typ, ver, jti, exp and the sign-in by type; service tokens have no exp', async (t) => {
  const { tokens } = await service(t);
  const access = tokens.issue('access', account, { signIn });
  t.deepEqual(
    { ...access.claims, jti: 'x' },
    {
      sub: 'u-1',
      typ: 'access',
      ver: 3,
      jti: 'x',
      fam: 'f1',
      auth_time: signedInAt,
      exp: signedInAt + 900,
    },
  );
  const decoded = jwt.decode(access.token, { complete: true });
  t.deepEqual(decoded?.header, { alg: 'HS256', typ: 'JWT' });
  const serviceClaims = tokens.issue('service', account).claims;
  t.is(serviceClaims.exp, undefined);
  t.is(serviceClaims.fam, undefined);
  t.is(tokens.issue('refresh', account, { signIn }).claims.fam, 'f1');
  const preauth = tokens.issue('preauth', account, { stage: 'twoFactor', signIn }).claims;
  t.is(preauth.stage, 'twoFactor');
  t.is(preauth.fam, undefined, 'a preauth token is no sign-in yet');
  t.throws(() => tokens.issue('access', account), {
    message: 'access tokens need their sign-in family',
  });
});

test('no access or refresh token outlives its sign-in', async (t) => {
  const { tokens, advance } = await service(t);
  const refresh = tokens.issue('refresh', account, { signIn });
  t.is(refresh.claims.exp, signedInAt + 7200, 'a day-long refresh token is cut to the session');
  advance(7000_000);
  const late = tokens.issue('access', account, { signIn });
  t.is(late.claims.exp, signedInAt + 7200, 'a renewal near the end ends with the session');
  t.is(tokens.verify(late.token, ['access']).fam, 'f1');
  advance(200_000);
  t.throws(() => tokens.verify(late.token, ['access']), { message: 'The token has expired.' });
});

test('a shorter session lifetime also ends tokens issued under a longer one', async (t) => {
  const { tokens, dir, advance } = await service(t);
  const { token } = tokens.issue('refresh', account, { signIn });
  const shorter = await TokenService.open(
    dir,
    { access: 900, refresh: 86_400, preauth: 300, session: 3600 },
    () => Date.UTC(2026, 0, 1) + 3600_000,
  );
  t.throws(() => shorter.verify(token, ['refresh']), {
    message: 'The sign-in has expired; sign in again.',
  });
  advance(3600_000);
  t.is(tokens.verify(token, ['refresh']).fam, 'f1', 'the longer lifetime still holds there');
});

test('access and refresh tokens without their sign-in (older tokens, forgeries) are refused', async (t) => {
  const { tokens, dir } = await service(t);
  const key = await readFile(join(dir, jwtKeyFileName));
  const base = { sub: 'u-1', ver: 3, jti: 'j', iss: 'tagd', exp: signedInAt + 600 };
  const cases: [string, Record<string, unknown>][] = [
    ['access without fam', { ...base, typ: 'access', auth_time: signedInAt }],
    ['access without auth_time', { ...base, typ: 'access', fam: 'f1' }],
    ['refresh without auth_time', { ...base, typ: 'refresh', fam: 'f1' }],
    ['access with an empty fam', { ...base, typ: 'access', fam: '', auth_time: signedInAt }],
    ['service with a fam', { sub: 'u-1', ver: 3, jti: 'j', iss: 'tagd', typ: 'service', fam: 'f' }],
  ];
  for (const [name, claims] of cases) {
    const token = jwt.sign(claims, key, { algorithm: 'HS256', noTimestamp: true });
    t.throws(
      () => tokens.verify(token, ['access', 'refresh', 'service']),
      {
        message: 'The token is invalid.',
      },
      name,
    );
  }
});

test('verification checks type and expiry, also for cached tokens', async (t) => {
  const { tokens, advance } = await service(t);
  const { token } = tokens.issue('access', account, { signIn });
  t.is(tokens.verify(token, ['access']).ver, 3);
  t.throws(() => tokens.verify(token, ['refresh']), {
    message: 'A access token cannot be used here.',
  });
  advance(899_000);
  t.is(tokens.verify(token, ['access']).sub, 'u-1', 'served from the cache while valid');
  advance(1_000);
  t.throws(() => tokens.verify(token, ['access']), { message: 'The token has expired.' });
});

test('an HS256 token with the right claims but foreign key, another algorithm or issuer fails', async (t) => {
  const { tokens } = await service(t);
  const claims = {
    sub: 'u-1',
    typ: 'access',
    ver: 3,
    jti: 'j',
    exp: Date.UTC(2026, 0, 2) / 1000,
    iss: 'tagd',
  };
  const foreign = jwt.sign(claims, Buffer.alloc(32, 7), { algorithm: 'HS256' });
  t.throws(() => tokens.verify(foreign, ['access']), { message: 'The token is invalid.' });
  const hs512 = jwt.sign(claims, Buffer.alloc(32, 7), { algorithm: 'HS512' });
  t.throws(() => tokens.verify(hs512, ['access']), { message: 'The token is invalid.' });
  t.throws(() => tokens.verify('a.b.c', ['access']), { code: 'unauthorized' } as never);
});

test('a verified token cached by its signature never vouches for another token with that signature', async (t) => {
  const { tokens } = await service(t);
  const { token } = tokens.issue('access', account, { signIn });
  t.is(tokens.verify(token, ['access']).sub, 'u-1');
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  const forgedPayload = Buffer.from(JSON.stringify({ ...claims, sub: 'admin' })).toString(
    'base64url',
  );
  // The cached token's signature, under a payload it was not computed for.
  t.throws(() => tokens.verify(`${header}.${forgedPayload}.${signature}`, ['access']), {
    message: 'The token is invalid.',
  });
  // The genuine token is still served (from the cache) afterwards.
  t.is(tokens.verify(token, ['access']).sub, 'u-1');
});
