/**
 * `npm run build` (which `npm start` runs first) is incremental: a second build with nothing
 * changed emits nothing, yet a changed source is always rebuilt, and a source with a type error
 * fails every build until it is fixed, so `npm start` never runs a dist/ that is behind the
 * sources. Runs the package's own script in a throwaway copy of the repository.
 */
import { execFile } from 'node:child_process';
import { appendFile, cp, readFile, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { tempDir } from '../helpers/temp-dir.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

interface BuildResult {
  ok: boolean;
  output: string;
}

async function build(folder: string): Promise<BuildResult> {
  try {
    const { stdout, stderr } = await promisify(execFile)('npm', ['run', 'build'], {
      cwd: folder,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: stdout + stderr };
  }
}

test('npm run build is incremental and never leaves dist/ behind a changed source', async (t) => {
  // Four builds of a big program on a machine that may be busy: room, not a speed requirement.
  t.timeout(600_000);
  const folder = await tempDir(t);
  for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'drivers']) {
    await cp(join(repoRoot, entry), join(folder, entry), { recursive: true });
  }
  await symlink(join(repoRoot, 'node_modules'), join(folder, 'node_modules'));
  const cli = join(folder, 'dist/src/cli.js');
  const versionJs = join(folder, 'dist/src/version.js');
  const versionTs = join(folder, 'src/version.ts');

  const first = await build(folder);
  t.true(first.ok, first.output);
  const built = (await stat(cli)).mtimeMs;

  // Nothing changed: nothing is emitted again.
  const second = await build(folder);
  t.true(second.ok, second.output);
  t.is((await stat(cli)).mtimeMs, built, 'dist/src/cli.js was not written again');

  // A changed source is rebuilt.
  await appendFile(versionTs, '\nexport const buildProbe = 1;\n');
  const third = await build(folder);
  t.true(third.ok, third.output);
  t.regex(await readFile(versionJs, 'utf8'), /export const buildProbe = 1;/);

  // A type error fails the build, and keeps failing it until fixed: a build that merely found
  // dist/ newer than the sources would let `npm start` run the broken output.
  await appendFile(versionTs, 'export const broken: number = "not a number";\n');
  const fourth = await build(folder);
  t.false(fourth.ok, 'the type error fails the build');
  t.regex(fourth.output, /src\/version\.ts.*TS2322/);
  const fifth = await build(folder);
  t.false(fifth.ok, 'still failing with nothing changed since');
  t.regex(fifth.output, /TS2322/);
});
