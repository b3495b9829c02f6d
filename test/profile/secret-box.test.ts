import { randomBytes } from 'node:crypto';
import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { SecretKeyError, SecretUnsealError } from '../../src/errors.js';
import {
  isSealed,
  SecretBox,
  sealedPrefix,
  secretKeyCredentialName,
  secretKeyFileName,
} from '../../src/profile/secret-box.js';
import { tempDir } from '../helpers/temp-dir.js';

test('the key names are the documented ones', (t) => {
  t.is(sealedPrefix, 'enc:v1:');
  t.is(secretKeyFileName, 'secret.key');
  t.is(secretKeyCredentialName, 'tagd-secret-key');
});

test('open creates a private state dir and a 32-byte key file with mode 0600', async (t) => {
  const root = await tempDir(t);
  const stateDir = join(root, 'state', 'tagd');
  await SecretBox.open(stateDir);
  const dirStats = await stat(stateDir);
  t.true(dirStats.isDirectory());
  t.is(dirStats.mode & 0o777, 0o700);
  const keyStats = await stat(join(stateDir, 'secret.key'));
  t.true(keyStats.isFile());
  t.is(keyStats.mode & 0o777, 0o600);
  t.is(keyStats.size, 32);
  t.deepEqual(await readdir(stateDir), ['secret.key']);
});

test('reopening reuses the key', async (t) => {
  const stateDir = await tempDir(t);
  const first = await SecretBox.open(stateDir);
  const key = await readFile(join(stateDir, 'secret.key'));
  const second = await SecretBox.open(stateDir);
  t.deepEqual(await readFile(join(stateDir, 'secret.key')), key);
  t.is(second.unseal(first.seal('hunter2'), 'a'), 'hunter2');
  t.is(first.unseal(second.seal('swordfish'), 'b'), 'swordfish');
});

test('two boxes opened at once share one key', async (t) => {
  const stateDir = await tempDir(t);
  const [a, b] = await Promise.all([SecretBox.open(stateDir), SecretBox.open(stateDir)]);
  t.is(b.unseal(a.seal('same key'), 'x'), 'same key');
});

test('seal output is enc:v1: base64url and differs on every call', async (t) => {
  const box = await SecretBox.open(await tempDir(t));
  const first = box.seal('hunter2');
  const second = box.seal('hunter2');
  t.true(first.startsWith('enc:v1:'));
  t.regex(first, /^enc:v1:[A-Za-z0-9_-]+$/);
  t.not(first, second);
  t.false(first.includes('hunter2'));
  // 12-byte IV + 16-byte tag + 7 bytes of ciphertext = 35 bytes = 47 base64url characters.
  t.is(first.length, 'enc:v1:'.length + 47);
  t.is(box.unseal(first, 'x'), 'hunter2');
  t.is(box.unseal(second, 'x'), 'hunter2');
});

test('seal and unseal round-trip unicode and the empty string', async (t) => {
  const box = await SecretBox.open(await tempDir(t));
  for (const plaintext of ['Grüße, 東京 🔑 ñ', '', 'a'.repeat(10_000), 'enc:v1:looks-sealed']) {
    t.is(box.unseal(box.seal(plaintext), 'p'), plaintext);
  }
});

test('unsealing with another key throws SecretUnsealError naming the path', async (t) => {
  const mine = await SecretBox.open(await tempDir(t));
  const theirs = await SecretBox.open(await tempDir(t));
  const error = t.throws(() => theirs.unseal(mine.seal('hunter2'), 'webhooks[0].token'), {
    instanceOf: SecretUnsealError,
  });
  t.is(error?.code, 'secret-unseal-failed');
  t.is(error?.status, 500);
  t.is(error?.path, 'webhooks[0].token');
  t.is(
    error?.message,
    'The sealed value at webhooks[0].token cannot be opened with this key (wrong key or altered value).',
  );
});

test('a tampered ciphertext throws SecretUnsealError', async (t) => {
  const box = await SecretBox.open(await tempDir(t));
  const sealed = box.seal('a secret long enough to have a middle');
  const middle = sealedPrefix.length + Math.floor((sealed.length - sealedPrefix.length) / 2);
  const flipped = sealed[middle] === 'A' ? 'B' : 'A';
  const tampered = sealed.slice(0, middle) + flipped + sealed.slice(middle + 1);
  t.not(tampered, sealed);
  const error = t.throws(() => box.unseal(tampered, 'x.y'), { instanceOf: SecretUnsealError });
  t.is(error?.path, 'x.y');
});

test('malformed sealed values throw SecretUnsealError', async (t) => {
  const box = await SecretBox.open(await tempDir(t));
  for (const value of [
    'plain',
    'enc:v1:',
    'enc:v1:AAAA',
    'enc:v2:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  ]) {
    const error = t.throws(() => box.unseal(value, 'k'), { instanceOf: SecretUnsealError });
    t.is(error?.code, 'secret-unseal-failed', value);
  }
});

test('a key file readable by others is refused with a chmod hint', async (t) => {
  const stateDir = await tempDir(t);
  const file = join(stateDir, 'secret.key');
  await writeFile(file, randomBytes(32));
  await chmod(file, 0o644);
  const error = await t.throwsAsync(SecretBox.open(stateDir), { instanceOf: SecretKeyError });
  t.is(error?.code, 'secret-key-unusable');
  t.is(error?.status, 500);
  t.true(error?.message.includes(`chmod 600 ${file}`), error?.message);
  t.true(error?.message.includes('mode 644'), error?.message);
});

test('a group-readable key file is refused too', async (t) => {
  const stateDir = await tempDir(t);
  const file = join(stateDir, 'secret.key');
  await writeFile(file, randomBytes(32));
  await chmod(file, 0o640);
  await t.throwsAsync(SecretBox.open(stateDir), { instanceOf: SecretKeyError });
});

test('a key file of the wrong size is refused and left alone', async (t) => {
  const stateDir = await tempDir(t);
  const file = join(stateDir, 'secret.key');
  const short = randomBytes(31);
  await writeFile(file, short, { mode: 0o600 });
  await chmod(file, 0o600);
  const error = await t.throwsAsync(SecretBox.open(stateDir), { instanceOf: SecretKeyError });
  t.is(error?.code, 'secret-key-unusable');
  t.is(error?.message, `Key ${file} holds 31 bytes; it must hold 32.`);
  t.deepEqual(await readFile(file), short);
});

test('the systemd credential is used instead of the state-dir key file', async (t) => {
  const stateDir = await tempDir(t);
  const credentials = await tempDir(t);
  const key = randomBytes(32);
  await writeFile(join(credentials, 'tagd-secret-key'), key);
  // systemd credentials are read-only but need not be 0600; the mode is not checked.
  await chmod(join(credentials, 'tagd-secret-key'), 0o444);
  const box = await SecretBox.open(stateDir, credentials);
  t.deepEqual(await readdir(stateDir), []);
  const again = await SecretBox.open(join(stateDir, 'never-made'), credentials);
  t.is(again.unseal(box.seal('from credential'), 'c'), 'from credential');
  // A box on the state dir alone has a different, new key.
  const other = await SecretBox.open(stateDir);
  t.throws(() => other.unseal(box.seal('x'), 'c'), { instanceOf: SecretUnsealError });
});

test('a credentials dir without the credential falls back to the key file', async (t) => {
  const stateDir = await tempDir(t);
  const credentials = await tempDir(t);
  const box = await SecretBox.open(stateDir, credentials);
  t.deepEqual(await readdir(stateDir), ['secret.key']);
  t.deepEqual(await readdir(credentials), []);
  const plain = await SecretBox.open(stateDir);
  t.is(plain.unseal(box.seal('fallback'), 'f'), 'fallback');
});

test('a credential of the wrong size is refused', async (t) => {
  const credentials = await tempDir(t);
  await writeFile(join(credentials, 'tagd-secret-key'), randomBytes(33));
  await t.throwsAsync(SecretBox.open(await tempDir(t), credentials), {
    instanceOf: SecretKeyError,
  });
});

test('isSealed tells sealed strings from anything else', async (t) => {
  const box = await SecretBox.open(await tempDir(t));
  t.true(isSealed(box.seal('x')));
  t.true(isSealed('enc:v1:'));
  t.false(isSealed('enc:v2:abc'));
  t.false(isSealed('ENC:V1:abc'));
  t.false(isSealed(' enc:v1:abc'));
  t.false(isSealed('hunter2'));
  t.false(isSealed(''));
  t.false(isSealed(undefined));
  t.false(isSealed(null));
  t.false(isSealed(42));
  t.false(isSealed({ value: 'enc:v1:abc' }));
});
