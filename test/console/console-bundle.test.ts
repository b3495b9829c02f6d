import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { loadConsoleBundle } from '../../src/console/console-bundle.js';
import { manifestFileName } from '../../src/console/console-manifest.js';
import { consoleBuild } from '../helpers/console-build.js';
import { startConsoleDaemon } from '../helpers/console-session.js';
import { tempDir } from '../helpers/temp-dir.js';

test('a build loads with media types and smaller gzipped copies', async (t) => {
  const { outDir, manifest } = await consoleBuild();
  const bundle = await loadConsoleBundle(outDir);
  if (!bundle) throw new Error('no bundle');
  t.is(bundle.index.type, 'text/html; charset=utf-8');
  t.deepEqual([...bundle.assets.keys()].sort(), manifest.assets);
  for (const [name, file] of bundle.assets) {
    t.regex(name, /^[a-z]+-[A-Z0-9]{8}\.(js|css)$/);
    t.true(file.gzip !== undefined && file.gzip.length < file.body.length, name);
  }
});

test('a folder without a build is no console; a manifest naming a missing file is an error', async (t) => {
  const folder = await tempDir(t);
  t.is(await loadConsoleBundle(folder), undefined);
  await writeFile(
    join(folder, manifestFileName),
    JSON.stringify({ index: 'index.html', assets: ['main-GONE1234.js'] }),
  );
  await t.throwsAsync(loadConsoleBundle(folder), { code: 'ENOENT' });
});

test('a damaged console build does not stop the daemon: it logs it and / answers 404', async (t) => {
  t.timeout(120_000);
  const folder = await tempDir(t);
  await writeFile(
    join(folder, manifestFileName),
    JSON.stringify({ index: 'index.html', assets: ['main-GONE1234.js'] }),
  );
  const gateway = await startConsoleDaemon(undefined, folder);
  t.teardown(() => gateway.stop());
  const page = await fetch(`${gateway.url}/`);
  t.is(page.status, 404);
  t.is((await fetch(`${gateway.url}/healthz`)).status, 200);
  t.true(
    gateway.logs.lines.some(
      (line) =>
        line.component === 'console' && line.msg === 'console build unreadable: serving no console',
    ),
  );
});
