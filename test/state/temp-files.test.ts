import { spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { removeLeftoverTempFiles } from '../../src/state/temp-files.js';
import { tempDir } from '../helpers/temp-dir.js';

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid as number;
}

test('temporary files of dead writers go; those of a live writer in another process stay', async (t) => {
  const folder = await tempDir(t);
  const dead = await deadPid();
  const names = {
    deadWriter: `.users.json.${dead}.0123456789ab.tmp`,
    oldFormat: '.users.json.0123456789ab.tmp',
    keyOfDead: `secret.key.${dead}.89abcdef.tmp`,
    ours: `.users.json.${process.pid}.0123456789ab.tmp`,
    // The parent of this test process runs: a `tagd users …` saving right now.
    liveWriter: `.users.json.${process.ppid}.0123456789ab.tmp`,
    notTemporary: 'users.json',
  };
  for (const name of Object.values(names)) await writeFile(join(folder, name), '{}');
  await mkdir(join(folder, 'folder.tmp'));
  const removed = await removeLeftoverTempFiles(folder);
  t.deepEqual(
    removed.sort(),
    [names.deadWriter, names.oldFormat, names.keyOfDead, names.ours].sort(),
  );
  t.deepEqual(
    (await readdir(folder)).sort(),
    ['folder.tmp', names.liveWriter, names.notTemporary].sort(),
  );
});

test('only names the filter accepts are touched', async (t) => {
  const folder = await tempDir(t);
  await writeFile(join(folder, '.profile.json.0123456789ab.tmp'), '{}');
  await writeFile(join(folder, 'operator-notes.tmp'), 'mine');
  const removed = await removeLeftoverTempFiles(folder, (name) =>
    name.startsWith('.profile.json.'),
  );
  t.deepEqual(removed, ['.profile.json.0123456789ab.tmp']);
  t.deepEqual(await readdir(folder), ['operator-notes.tmp']);
});
