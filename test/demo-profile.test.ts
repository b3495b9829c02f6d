import { access, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import {
  demoProfileDocument,
  demoProfileFileName,
  demoSectionsAddedLater,
  prepareDemoProfile,
} from '../src/demo-profile.js';
import { packageRoot } from '../src/package-root.js';
import { tempDir } from './helpers/temp-dir.js';

test('the demo document names the andon app by an absolute folder that exists', async (t) => {
  const demo = (await demoProfileDocument()) as {
    extensions: { apps: { name: string; folder: string }[] };
  };
  const folder = demo.extensions.apps[0]?.folder ?? '';
  t.is(folder, join(packageRoot, 'config/apps/andon'));
  for (const file of ['index.html', 'app.js', 'style.css']) {
    await t.notThrowsAsync(access(join(folder, file)), file);
  }
});

test('the first start copies the demo; a later one keeps the copy as it is', async (t) => {
  const stateDir = join(await tempDir(t), 'state');
  const first = await prepareDemoProfile(stateDir);
  t.deepEqual(first, { file: join(stateDir, demoProfileFileName), added: [] });
  t.is((await stat(first.file)).mode & 0o777, 0o600);
  const edited = JSON.parse(await readFile(first.file, 'utf8'));
  edited.collections.push({ name: 'Mine', members: ['Demo/**'] });
  edited.extensions.enableDocs = true;
  await writeFile(first.file, JSON.stringify(edited));
  const second = await prepareDemoProfile(stateDir);
  t.deepEqual(second.added, []);
  t.deepEqual(JSON.parse(await readFile(second.file, 'utf8')), edited, 'untouched');
});

test('a copy made before the extensions server gets its section added, and nothing else changes', async (t) => {
  t.deepEqual(demoSectionsAddedLater, ['extensions']);
  const stateDir = await tempDir(t);
  const file = join(stateDir, demoProfileFileName);
  const old = await demoProfileDocument();
  delete old.extensions;
  (old.publishers as { webhooks: { destinationUrl: string }[] }).webhooks[0] = {
    ...(old.publishers as { webhooks: { destinationUrl: string }[] }).webhooks[0],
    destinationUrl: 'enc:v1:sealed-by-this-installation',
  } as { destinationUrl: string };
  await writeFile(file, JSON.stringify(old), { mode: 0o600 });

  const prepared = await prepareDemoProfile(stateDir);
  t.deepEqual(prepared.added, ['extensions']);
  const copy = JSON.parse(await readFile(file, 'utf8'));
  const { extensions, ...rest } = copy;
  t.deepEqual(rest, old, 'every other section as it was, sealed secrets included');
  t.deepEqual(extensions, (await demoProfileDocument()).extensions);
  t.is((await stat(file)).mode & 0o777, 0o600, 'still private');
  t.deepEqual((await prepareDemoProfile(stateDir)).added, [], 'added once');
});

test('a copy that does not parse is left alone for the daemon to report', async (t) => {
  const stateDir = await tempDir(t);
  const file = join(stateDir, demoProfileFileName);
  await writeFile(file, '{ "server": ');
  t.deepEqual((await prepareDemoProfile(stateDir)).added, []);
  t.is(await readFile(file, 'utf8'), '{ "server": ');
});
