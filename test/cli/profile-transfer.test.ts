import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { exportProfile, importProfile } from '../../src/cli/profile-transfer.js';
import { CommandFailure } from '../../src/cli/state-dir.js';
import { demoProfileDocument } from '../../src/demo-profile.js';
import { ProfileStore } from '../../src/profile/profile-store.js';
import { isSealed, SecretBox } from '../../src/profile/secret-box.js';
import { tempDir } from '../helpers/temp-dir.js';

type Webhook = { destinationUrl: string; authentication: Record<string, string> };
const webhookOf = (document: unknown) =>
  (document as { publishers: { webhooks: Webhook[] } }).publishers.webhooks[0] as Webhook;

/** A gateway: a state directory with its key, and the demo profile with a bearer token, sealed. */
async function gateway(folder: string, name: string) {
  const stateDir = join(folder, name, 'state');
  const secretBox = await SecretBox.open(stateDir);
  const file = join(folder, name, 'profile.json');
  const demo = await demoProfileDocument();
  webhookOf(demo).authentication = { mode: 'Bearer token', bearerToken: `token-of-${name}` };
  await writeFile(file, JSON.stringify(demo));
  await new ProfileStore({ file, secretBox }).load();
  return { stateDir, secretBox, file };
}

test('an export masks every secret, and imported again on the same gateway keeps them', async (t) => {
  const folder = await tempDir(t);
  const { stateDir, secretBox, file } = await gateway(folder, 'a');
  const sealedBefore = webhookOf(JSON.parse(await readFile(file, 'utf8')));
  t.true(isSealed(sealedBefore.destinationUrl));

  const exported = await exportProfile(file);
  const text = JSON.stringify(exported);
  t.is(webhookOf(exported).destinationUrl, '********');
  t.is(webhookOf(exported).authentication.bearerToken, '********');
  t.false(text.includes('enc:v1:'));
  t.false(text.includes('token-of-a'));

  // The round trip, with one change made in the exported copy.
  (exported as { collections: { name: string; members: string[] }[] }).collections.push({
    name: 'All',
    members: ['**'],
  });
  const outcome = await importProfile(exported, file, { stateDir, secretBox, reload: false });
  t.deepEqual(outcome.kept.sort(), [
    'publishers.webhooks[0].authentication.bearerToken',
    'publishers.webhooks[0].destinationUrl',
  ]);
  const saved = JSON.parse(await readFile(file, 'utf8'));
  t.is(webhookOf(saved).destinationUrl, sealedBefore.destinationUrl);
  const loaded = await new ProfileStore({ file, secretBox }).load();
  t.is(loaded.publishers.webhooks[0]?.destinationUrl, 'http://127.0.0.1:9000/tags');
  t.is(loaded.collections.at(-1)?.name, 'All');
});

test('on another gateway masked secrets cannot be restored: refused, listing each', async (t) => {
  const folder = await tempDir(t);
  const a = await gateway(folder, 'a');
  const b = await gateway(folder, 'b');
  const exported = await exportProfile(a.file);
  // Gateway b has no publisher at that path: nothing to keep.
  const bare = JSON.parse(await readFile(b.file, 'utf8'));
  bare.publishers.webhooks = [];
  await writeFile(b.file, JSON.stringify(bare));
  const before = await readFile(b.file, 'utf8');
  const error = await t.throwsAsync(
    importProfile(exported, b.file, { stateDir: b.stateDir, secretBox: b.secretBox }),
    { instanceOf: CommandFailure },
  );
  t.deepEqual([...(error?.details ?? [])].sort(), [
    'publishers.webhooks[0].authentication.bearerToken',
    'publishers.webhooks[0].destinationUrl',
  ]);
  t.is(await readFile(b.file, 'utf8'), before);

  // Supplied in plaintext, they are sealed with b's key.
  webhookOf(exported).destinationUrl = 'https://b.example/tags';
  webhookOf(exported).authentication.bearerToken = 'token-for-b';
  const outcome = await importProfile(exported, b.file, {
    stateDir: b.stateDir,
    secretBox: b.secretBox,
    reload: false,
  });
  t.is(outcome.sealed.length, 2);
  t.is(outcome.reloadedPid, undefined);
  const saved = await readFile(b.file, 'utf8');
  t.false(saved.includes('token-for-b'));
  t.true(isSealed(webhookOf(JSON.parse(saved)).authentication.bearerToken));
});

test('an invalid import is refused with every error, and nothing is written', async (t) => {
  const folder = await tempDir(t);
  const { stateDir, secretBox, file } = await gateway(folder, 'a');
  const before = await readFile(file, 'utf8');
  const exported = (await exportProfile(file)) as { drivers: Record<string, unknown>[] };
  (exported.drivers[0] as Record<string, unknown>).scanIntervalMs = 'fast';
  (exported.drivers[1] as Record<string, unknown>).colour = 'red';
  const error = await t.throwsAsync(importProfile(exported, file, { stateDir, secretBox }), {
    instanceOf: CommandFailure,
  });
  t.is(error?.details.length, 2);
  t.regex(
    error?.details.join('\n') ?? '',
    /drivers\[0\]\.scanIntervalMs.*\n.*drivers\[1\]\.colour/,
  );
  t.is(await readFile(file, 'utf8'), before);
});

test('an import that tagd start would refuse (plain HTTP on the network) is refused', async (t) => {
  const folder = await tempDir(t);
  const { stateDir, secretBox, file } = await gateway(folder, 'a');
  const exported = (await exportProfile(file)) as { server: unknown };
  exported.server = { http: { host: '0.0.0.0', port: 8080 } };
  const error = await t.throwsAsync(importProfile(exported, file, { stateDir, secretBox }), {
    instanceOf: CommandFailure,
  });
  t.regex(error?.details.join('\n') ?? '', /^server\.http\.host: Plain HTTP/);
});
