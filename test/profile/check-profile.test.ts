import test from 'ava';
import { checkProfile } from '../../src/profile/check-profile.js';
import { SecretBox } from '../../src/profile/secret-box.js';
import { tempDir } from '../helpers/temp-dir.js';

function profileWith(destinationUrl: string, extra: Record<string, unknown> = {}) {
  return {
    collections: [{ name: 'Line1', members: ['Demo/**'] }],
    publishers: { webhooks: [{ name: 'cloud', destinationUrl, collections: ['Line1'], ...extra }] },
  };
}

const urlPath = 'publishers.webhooks[0].destinationUrl';

test('without a key, sealed secrets are listed as unchecked and not reported as malformed', async (t) => {
  const box = await SecretBox.open(await tempDir(t));
  const check = checkProfile(profileWith(box.seal('https://receiver.example/hook')), undefined);
  t.deepEqual(check, { errors: [], uncheckedSecrets: [urlPath] });
});

test('without a key, other errors are still reported', async (t) => {
  const box = await SecretBox.open(await tempDir(t));
  const check = checkProfile(
    profileWith(box.seal('https://x.example/'), { updateIntervalSeconds: 0 }),
    undefined,
  );
  t.deepEqual(
    check.errors.map((error) => error.path),
    ['publishers.webhooks[0].updateIntervalSeconds'],
  );
});

test('with the key, sealed secrets are opened and checked like plaintext', async (t) => {
  const box = await SecretBox.open(await tempDir(t));
  const good = checkProfile(profileWith(box.seal('https://ok.example/')), box);
  t.deepEqual(good.errors, []);
  t.deepEqual(good.uncheckedSecrets, []);
  t.is(
    good.profile?.publishers.webhooks[0]?.destinationUrl,
    'https://ok.example/',
    'the checked profile, secrets opened, for the start-up checks',
  );
  const bad = checkProfile(profileWith(box.seal('ftp://not.http/')), box);
  t.deepEqual(bad.errors, [
    { path: urlPath, message: 'The destination URL must be an http:// or https:// address.' },
  ]);
});

test('a value sealed with another key is an error naming its path', async (t) => {
  const mine = await SecretBox.open(await tempDir(t));
  const theirs = await SecretBox.open(await tempDir(t));
  const check = checkProfile(profileWith(theirs.seal('https://x.example/')), mine);
  t.is(check.errors[0]?.path, urlPath);
  t.regex(check.errors[0]?.message ?? '', /cannot be opened with this key/);
});

test('plaintext secrets are checked with or without a key', (t) => {
  const check = checkProfile(profileWith(''), undefined);
  t.deepEqual(check.errors, [
    { path: urlPath, message: 'You must provide a webhook destination URL.' },
  ]);
  t.deepEqual(check.uncheckedSecrets, []);
});

test('openExisting finds no key in an empty state directory and creates none', async (t) => {
  const dir = await tempDir(t);
  t.is(await SecretBox.openExisting(dir), undefined);
  t.is(await SecretBox.openExisting(dir), undefined);
  const created = await SecretBox.open(dir);
  const found = await SecretBox.openExisting(dir);
  t.is(found?.unseal(created.seal('x'), 'p'), 'x');
});
