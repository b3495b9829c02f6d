import test from 'ava';
import { hashPassword, verifyPassword } from '../../src/auth/password.js';

test('hashes are scrypt with N = 2^15, salted, and verify only the right password', async (t) => {
  const first = await hashPassword('correct horse battery');
  const second = await hashPassword('correct horse battery');
  t.regex(first, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  t.not(first, second, 'a fresh salt each time');
  t.true(await verifyPassword('correct horse battery', first));
  t.true(await verifyPassword('correct horse battery', second));
  t.false(await verifyPassword('correct horse batterY', first));
  t.false(await verifyPassword('', first));
});

test('malformed stored hashes never verify', async (t) => {
  for (const stored of [
    '',
    'plain',
    'bcrypt$x$y',
    'scrypt$32768$8$1$$',
    'scrypt$32768$8$1$c2FsdA$',
  ]) {
    t.false(await verifyPassword('anything', stored), stored);
  }
});
