import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import jwt from 'jsonwebtoken';
import { jwtKeyFileName, TokenService } from '../../src/auth/token-service.js';
import { tempDir } from '../helpers/temp-dir.js';

const account = { id: 'u-1', tokenVersion: 3 };

async function service(t: import('ava').ExecutionContext, start = Date.UTC(2026, 0, 1)) {
  let now = start;
  const dir = await tempDir(t);
  const tokens = await TokenService.open(
    dir,
    { access: 900, refresh: 86_400, preauth: 300 },
    () => now,
  );
  return { tokens, dir, advance: (ms: number) => (now += ms) };
}

test('the signing key is 32 bytes, mode 0600, and kept across restarts', async (t) => {
  const { tokens, dir } = await service(t);
  const file = join(dir, jwtKeyFileName);
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.is((await stat(file)).size, 32);
  const { token } = tokens.issue('access', account);
  const reopened = await TokenService.open(dir, undefined, () => Date.UTC(2026, 0, 1));
  t.is(reopened.verify(token, ['access']).sub, 'u-1');
});

test('claims carry sub, typ, ver, jti and exp by type; service tokens have no exp', async (t) => {
  const { tokens } = await service(t);
  const access = tokens.issue('access', account);
  t.deepEqual(
    { ...access.claims, jti: 'x' },
    { sub: 'u-1', typ: 'access', ver: 3, jti: 'x', exp: Date.UTC(2026, 0, 1) / 1000 + 900 },
  );
  const decoded = jwt.decode(access.token, { complete: true });
  t.deepEqual(decoded?.header, { alg: 'HS256', typ: 'JWT' });
  t.is(tokens.issue('service', account).claims.exp, undefined);
  t.is(tokens.issue('refresh', account, { fam: 'f1' }).claims.fam, 'f1');
  t.is(tokens.issue('preauth', account, { stage: 'twoFactor' }).claims.stage, 'twoFactor');
});

test('verification checks type and expiry, also for cached tokens', async (t) => {
  const { tokens, advance } = await service(t);
  const { token } = tokens.issue('access', account);
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
