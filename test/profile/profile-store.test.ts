import { copyFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { Logger } from 'pino';
import { z } from 'zod';
import {
  ProfileCorruptError,
  ProfileInvalidError,
  ProfileNotFoundError,
  SecretUnsealError,
} from '../../src/errors.js';
import { ProfileStore } from '../../src/profile/profile-store.js';
import { SecretBox } from '../../src/profile/secret-box.js';
import { secret } from '../../src/profile/secret-fields.js';
import { validateProfile } from '../../src/profile/validate-profile.js';
import { tempDir } from '../helpers/temp-dir.js';

const schema = z.strictObject({
  name: z.string(),
  webhook: z.strictObject({
    url: secret(z.string().url()),
    token: secret(z.string()).optional(),
  }),
});

const plainUrl = 'https://hooks.example.com/T0KEN-in-the-url';
const plainToken = 'tok_live_5f3a9c';
const plainProfile = { name: 'gateway', webhook: { url: plainUrl, token: plainToken } };

interface Fixture {
  folder: string;
  file: string;
  box: SecretBox;
  store: ProfileStore;
  logged: { fields: unknown; message: string }[];
}

async function fixture(t: ExecutionContext, document?: unknown): Promise<Fixture> {
  const folder = await tempDir(t);
  const file = join(folder, 'profile.json');
  if (document !== undefined) await writeFile(file, `${JSON.stringify(document, null, 2)}\n`);
  const box = await SecretBox.open(join(folder, 'state'));
  const logged: Fixture['logged'] = [];
  const logger = {
    info: (fields: unknown, message: string) => logged.push({ fields, message }),
  } as unknown as Logger;
  const store = new ProfileStore({ file, secretBox: box, schema, logger });
  return { folder, file, box, store, logged };
}

/** Bytes, mtime and inode: a rewrite (temp file + rename) changes at least the inode. */
async function snapshot(file: string) {
  const stats = await stat(file);
  return { text: await readFile(file, 'utf8'), mtimeMs: stats.mtimeMs, ino: stats.ino };
}

async function readRaw(file: string) {
  const text = await readFile(file, 'utf8');
  return { text, document: JSON.parse(text) as typeof plainProfile };
}

test('load returns plaintext secrets and seals them in the file', async (t) => {
  const { file, box, store, logged } = await fixture(t, plainProfile);
  const modeBefore = (await stat(file)).mode & 0o777;
  t.deepEqual(await store.load(), plainProfile);

  const { text, document } = await readRaw(file);
  t.false(text.includes(plainUrl));
  t.false(text.includes(plainToken));
  t.false(text.includes('T0KEN'));
  t.is(document.name, 'gateway');
  t.deepEqual(Object.keys(document.webhook), ['url', 'token']);
  t.true(document.webhook.url.startsWith('enc:v1:'));
  t.true(document.webhook.token.startsWith('enc:v1:'));
  t.is(box.unseal(document.webhook.url, 'u'), plainUrl);
  t.is(box.unseal(document.webhook.token, 't'), plainToken);
  t.is((await stat(file)).mode & 0o777, modeBefore);

  t.deepEqual(logged, [
    {
      fields: { paths: ['webhook.url', 'webhook.token'] },
      message: 'sealed plaintext secrets in the profile',
    },
  ]);
});

test('a second load opens the sealed file without rewriting it', async (t) => {
  const { file, store, logged } = await fixture(t, plainProfile);
  await store.load();
  const before = await snapshot(file);
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.deepEqual(await store.load(), plainProfile);
  t.deepEqual(await snapshot(file), before);
  t.is(logged.length, 1);
});

test('a fresh store on the same key opens the sealed file', async (t) => {
  const { file, box, store } = await fixture(t, plainProfile);
  await store.load();
  const before = await snapshot(file);
  const other = new ProfileStore({ file, secretBox: box, schema });
  t.deepEqual(await other.load(), plainProfile);
  t.deepEqual(await snapshot(file), before);
});

test('only the plaintext secrets are sealed; sealed ones stay byte for byte', async (t) => {
  const { file, box, store } = await fixture(t);
  const sealedToken = box.seal(plainToken);
  await writeFile(
    file,
    JSON.stringify({ name: 'n', webhook: { url: plainUrl, token: sealedToken } }),
  );
  t.deepEqual(await store.load(), { name: 'n', webhook: { url: plainUrl, token: plainToken } });
  const { text, document } = await readRaw(file);
  t.false(text.includes(plainUrl));
  t.is(document.webhook.token, sealedToken);
  t.true(document.webhook.url.startsWith('enc:v1:'));
});

test('a profile without the optional secret loads and seals the other', async (t) => {
  const { file, store } = await fixture(t, { name: 'n', webhook: { url: plainUrl } });
  t.deepEqual(await store.load(), { name: 'n', webhook: { url: plainUrl } });
  const { text, document } = await readRaw(file);
  t.false(text.includes(plainUrl));
  t.deepEqual(Object.keys(document.webhook), ['url']);
  t.true(document.webhook.url.startsWith('enc:v1:'));
});

test('save writes a changed profile with every secret sealed', async (t) => {
  const { file, box, store } = await fixture(t, plainProfile);
  await store.load();
  const changed = {
    name: 'renamed',
    webhook: { url: 'https://other.example.com/NEW-SECRET', token: 'tok_new_77' },
  };
  t.deepEqual(await store.save(changed), changed);
  const { text, document } = await readRaw(file);
  for (const plaintext of [changed.webhook.url, changed.webhook.token, plainUrl, plainToken]) {
    t.false(text.includes(plaintext), plaintext);
  }
  t.is(document.name, 'renamed');
  t.is(box.unseal(document.webhook.url, 'u'), changed.webhook.url);
  t.is(box.unseal(document.webhook.token, 't'), changed.webhook.token);
  t.deepEqual(await store.load(), changed);
  // The caller's object is not modified.
  t.is(changed.webhook.url, 'https://other.example.com/NEW-SECRET');
});

test('save keeps already-sealed values as they are', async (t) => {
  const { file, store } = await fixture(t, plainProfile);
  await store.load();
  const onDisk = (await readRaw(file)).document;
  await store.save({ ...onDisk, name: 'renamed' });
  const after = (await readRaw(file)).document;
  t.deepEqual(after, { ...onDisk, name: 'renamed' });
  t.deepEqual(await store.load(), { ...plainProfile, name: 'renamed' });
});

test('save of an invalid profile throws with every error and writes nothing', async (t) => {
  const { file, store } = await fixture(t, plainProfile);
  await store.load();
  const before = await snapshot(file);
  const error = await t.throwsAsync(
    store.save({ name: 7, webhook: { url: 'not a url', token: 'x', extra: true } }),
    { instanceOf: ProfileInvalidError },
  );
  t.is(error?.code, 'profile-invalid');
  t.deepEqual(error?.errors.map((fieldError) => fieldError.path).sort(), [
    'name',
    'webhook.extra',
    'webhook.url',
  ]);
  t.deepEqual(await snapshot(file), before);
});

test('save creates a missing profile file with mode 0600', async (t) => {
  const { file, store } = await fixture(t);
  await store.save(plainProfile);
  t.is((await stat(file)).mode & 0o777, 0o600);
  const { text } = await readRaw(file);
  t.false(text.includes(plainUrl));
  t.deepEqual(await store.load(), plainProfile);
});

test('save refuses a sealed value this key cannot open and writes nothing', async (t) => {
  const { file, store } = await fixture(t, plainProfile);
  await store.load();
  const before = await snapshot(file);
  const foreign = (await SecretBox.open(join(await tempDir(t), 'other'))).seal(plainToken);
  await t.throwsAsync(store.save({ name: 'n', webhook: { url: plainUrl, token: foreign } }));
  t.deepEqual(await snapshot(file), before);
});

test('load of a corrupt file throws ProfileCorruptError and leaves the bytes', async (t) => {
  const { file, store } = await fixture(t);
  const text = `{ "name": "n", "webhook": { "url": "${plainUrl}", `;
  await writeFile(file, text);
  const error = await t.throwsAsync(store.load(), { instanceOf: ProfileCorruptError });
  t.is(error?.code, 'profile-corrupt');
  t.is(error?.file, file);
  t.is(await readFile(file, 'utf8'), text);
});

test('load of an invalid profile lists every error and never writes the file', async (t) => {
  const document = {
    name: 42,
    webhook: { url: plainUrl, token: plainToken, secretz: 'x' },
    extra: true,
  };
  const { file, store, logged } = await fixture(t, document);
  const before = await snapshot(file);
  const error = await t.throwsAsync(store.load(), { instanceOf: ProfileInvalidError });
  t.is(error?.code, 'profile-invalid');
  t.is(error?.status, 400);
  t.is(error?.file, file);
  t.is(error?.message, `Profile ${file} is invalid (3 errors).`);
  t.deepEqual(
    [...(error?.errors ?? [])].sort((a, b) => a.path.localeCompare(b.path)),
    [
      { path: 'extra', message: "Unknown key 'extra'." },
      { path: 'name', message: 'Invalid input: expected string, received number' },
      { path: 'webhook.secretz', message: "Unknown key 'secretz'." },
    ],
  );
  const after = await snapshot(file);
  t.deepEqual(after, before);
  t.true(after.text.includes(plainUrl));
  t.true(after.text.includes(plainToken));
  t.deepEqual(logged, []);
});

test('load of a missing file throws ProfileNotFoundError', async (t) => {
  const { file, store } = await fixture(t);
  const error = await t.throwsAsync(store.load(), { instanceOf: ProfileNotFoundError });
  t.is(error?.code, 'profile-not-found');
  t.is(error?.file, file);
  t.true(error?.message.includes(file));
});

test('a profile sealed with another key throws SecretUnsealError naming the field', async (t) => {
  const { file, store } = await fixture(t);
  const foreign = await SecretBox.open(join(await tempDir(t), 'other'));
  await writeFile(
    file,
    JSON.stringify({ name: 'n', webhook: { url: foreign.seal(plainUrl), token: plainToken } }),
  );
  const before = await snapshot(file);
  const error = await t.throwsAsync(store.load(), { instanceOf: SecretUnsealError });
  t.is(error?.code, 'secret-unseal-failed');
  t.is(error?.path, 'webhook.url');
  t.true(error?.message.includes('webhook.url'), error?.message);
  t.deepEqual(await snapshot(file), before);
});

test('config/demo.json loads with the default schema; its one secret is sealed in the copy', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'demo.json');
  await copyFile(new URL('../../config/demo.json', import.meta.url), file);
  const before = await snapshot(file);
  const box = await SecretBox.open(join(folder, 'state'));
  const profile = await new ProfileStore({ file, secretBox: box }).load();
  const demo: unknown = JSON.parse(before.text);
  t.deepEqual(profile, validateProfile(demo).profile);
  t.is(profile.drivers.length, 3);
  t.is(profile.server.http.port, 8080);
  const saved = JSON.parse((await snapshot(file)).text);
  const url = (demo as { publishers: { webhooks: { destinationUrl: string }[] } }).publishers
    .webhooks[0]?.destinationUrl;
  t.regex(saved.publishers.webhooks[0].destinationUrl, /^enc:v1:/, 'the receiver URL is sealed');
  t.is(profile.publishers.webhooks[0]?.destinationUrl, url, 'and open in memory');
  saved.publishers.webhooks[0].destinationUrl = url;
  t.deepEqual(saved, demo, 'nothing else changed');
});
