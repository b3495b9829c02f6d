/**
 * The two install paths of the README's "Installing" section, end to end: `npm pack` makes a
 * tarball, `npm install -g` of it gives a working `tagd` command, and packaging/build-deb.sh
 * turns the same tarball into a .deb with the unit, sysusers and tmpfiles entries.
 *
 * Costly (a full build, two installs of the production dependencies from the registry or npm's
 * cache), so the tarball is packed once for both tests. better-sqlite3 would be compiled from
 * source by each install (no prebuilt binary can be downloaded here; minutes of CPU): its
 * install script is handed the binary `npm ci` already built for this repository, as a local
 * prebuild of the same version for the same Node ABI, so only that compile is skipped; its
 * install script and everything else run as they do for a plant.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { version } from '../../src/version.js';
import { fakeNotifySocket } from '../helpers/fake-notify-socket.js';
import { repoRoot, startTagd } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const run = promisify(execFile);
// A full build and an install on a busy 2-core machine: room, not a speed requirement.
const packagingTestMs = 1_200_000;

let workRoot: string | undefined;
let packing: Promise<{ tarball: string; env: NodeJS.ProcessEnv }> | undefined;

test.after.always(async () => {
  if (workRoot) await rm(workRoot, { recursive: true, force: true });
});

/** Packs the repository's tracked files (as they are in the work tree) once per run. */
function packOnce(): Promise<{ tarball: string; env: NodeJS.ProcessEnv }> {
  packing ??= (async () => {
    workRoot = await mkdtemp(join(tmpdir(), 'tagd-packaging-'));
    // A copy: the pack builds dist/ in full, which must neither race edits in the repository
    // nor pick up files a developer's dist/ holds from older sources.
    const source = join(workRoot, 'source');
    const { stdout } = await run('git', ['ls-files', '-z'], {
      cwd: repoRoot,
      maxBuffer: 64 * 1024 * 1024,
    });
    for (const file of stdout.split('\0')) {
      if (file === '' || !existsSync(join(repoRoot, file))) continue;
      await mkdir(dirname(join(source, file)), { recursive: true });
      await cp(join(repoRoot, file), join(source, file));
    }
    await symlink(join(repoRoot, 'node_modules'), join(source, 'node_modules'));
    const packed = join(workRoot, 'packed');
    await mkdir(packed);
    await run('npm', ['pack', '--pack-destination', packed], {
      cwd: source,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { tarball: join(packed, `tagd-${version}.tgz`), env: await installEnv(workRoot) };
  })();
  return packing;
}

/** npm's environment for the installs: the registry through npm's cache, and the local prebuild. */
async function installEnv(folder: string): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_prefer_offline: 'true' };
  const addon = join(repoRoot, 'node_modules/better-sqlite3');
  const binary = join(addon, 'build/Release/better_sqlite3.node');
  if (!existsSync(binary)) return env;
  const addonVersion = (
    JSON.parse(await readFile(join(addon, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  const prebuilds = join(folder, 'prebuilds');
  const stage = join(folder, 'prebuild-stage');
  await mkdir(join(stage, 'build/Release'), { recursive: true });
  await cp(binary, join(stage, 'build/Release/better_sqlite3.node'));
  await mkdir(prebuilds);
  // The name prebuild-install looks for: <name>-v<version>-node-v<ABI>-<platform>-<arch>.tar.gz.
  const name = `better-sqlite3-v${addonVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run('tar', ['-czf', join(prebuilds, name), '-C', stage, 'build']);
  return { ...env, npm_config_better_sqlite3_local_prebuilds: prebuilds };
}

test.serial(
  'npm pack makes a tarball whose npm install -g gives a working tagd command',
  async (t) => {
    t.timeout(packagingTestMs);
    const { tarball, env } = await packOnce();
    const { stdout: listing } = await run('tar', ['-tzf', tarball], {
      maxBuffer: 16 * 1024 * 1024,
    });
    const files = listing.split('\n');
    for (const file of [
      'package/package.json',
      'package/dist/src/bin.js',
      'package/dist/src/cli.js',
      'package/systemd/tagd.service',
      'package/systemd/tagd.sysusers',
      'package/systemd/tagd.tmpfiles',
      'package/config/demo.json',
      'package/config/examples/modbus.json',
    ]) {
      t.true(files.includes(file), `${file} is packed`);
    }
    t.false(
      files.some((file) => file.startsWith('package/test/') || file.startsWith('package/src/')),
      'neither the tests nor the TypeScript sources are packed',
    );

    const prefix = await tempDir(t);
    await run(
      'npm',
      ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', tarball],
      { env, maxBuffer: 64 * 1024 * 1024 },
    );
    const tagd = join(prefix, 'bin/tagd');
    t.is((await run(tagd, ['--version'])).stdout, `${version}\n`);
    const installed = join(prefix, 'lib/node_modules/tagd');
    const examples = readdirSync(join(installed, 'config/examples')).filter((name) =>
      name.endsWith('.json'),
    );
    t.true(examples.length > 0);
    for (const example of examples) {
      const check = await run(tagd, [
        'profile',
        'check',
        join(installed, 'config/examples', example),
      ]);
      t.regex(check.stdout, /: valid \(/, example);
    }

    // The installed daemon runs: the demo (SQLite history, so the native addon loads), READY=1
    // to a notify socket, tagd status against it, a clean stop.
    const folder = await tempDir(t);
    const socket = await fakeNotifySocket(t, folder);
    const stateDir = join(folder, 'state');
    const daemon = startTagd(
      ['start', '--demo', '--listen', '127.0.0.1:0', '--extensions-listen', '127.0.0.1:0'],
      {
        entry: join(installed, 'dist/src/bin.js'),
        cwd: folder,
        env: { TAGD_STATE_DIR: stateDir, NOTIFY_SOCKET: socket.path },
      },
    );
    t.teardown(() => daemon.child.kill('SIGKILL'));
    await socket.waitFor('READY=1', 0, daemon);
    const status = await run(tagd, ['status', '--json'], {
      env: { ...process.env, TAGD_STATE_DIR: stateDir },
    }).catch((error: { code?: number; stdout?: string }) => error);
    const answer = JSON.parse(String(status.stdout)) as {
      pid: number;
      history: { backend: string };
    };
    t.is(answer.pid, daemon.child.pid as number);
    t.is(answer.history.backend, 'sqlite');
    daemon.child.kill('SIGTERM');
    t.is(await daemon.exited, 0, daemon.stdout());
  },
);

test.serial(
  'packaging/build-deb.sh makes a .deb with the app, the command, the unit, sysusers and tmpfiles',
  async (t) => {
    t.timeout(packagingTestMs);
    const { tarball, env } = await packOnce();
    const out = await tempDir(t);
    const { stdout } = await run(
      join(repoRoot, 'packaging/build-deb.sh'),
      ['--tarball', tarball, '--out', out],
      { env, maxBuffer: 64 * 1024 * 1024 },
    );
    const arch = (await run('dpkg', ['--print-architecture'])).stdout.trim();
    const deb = stdout.trim().split('\n').at(-1) as string;
    t.is(deb, join(out, `tagd_${version}_${arch}.deb`));

    const info = (await run('dpkg-deb', ['-I', deb])).stdout;
    t.regex(info, /^ Package: tagd$/m);
    t.regex(info, new RegExp(`^ Version: ${version.replaceAll('.', '\\.')}$`, 'm'));
    t.regex(info, new RegExp(`^ Architecture: ${arch}$`, 'm'));
    t.regex(info, /^ Depends: nodejs \(>= 20\.19\), systemd$/m);
    for (const script of ['postinst', 'prerm', 'postrm']) {
      t.regex(info, new RegExp(`^ +\\d+ bytes, +\\d+ lines +\\* +${script} +#!/bin/sh$`, 'm'));
    }

    const contents = (await run('dpkg-deb', ['-c', deb], { maxBuffer: 64 * 1024 * 1024 })).stdout;
    const entries = contents.split('\n').filter(Boolean);
    const entry = (path: string) => entries.find((line) => line.split(/\s+/)[5] === path);
    t.regex(
      entry('./usr/bin/tagd') ?? '',
      /^lrwxrwxrwx root\/root .* -> \.\.\/lib\/tagd\/dist\/src\/bin\.js$/,
    );
    t.regex(entry('./usr/lib/tagd/dist/src/bin.js') ?? '', /^-rwxr-xr-x root\/root /);
    for (const path of [
      './lib/systemd/system/tagd.service',
      './usr/lib/sysusers.d/tagd.conf',
      './usr/lib/tmpfiles.d/tagd.conf',
      './usr/lib/tagd/package.json',
      './usr/lib/tagd/config/examples/modbus.json',
      './usr/lib/tagd/node_modules/better-sqlite3/package.json',
      './usr/lib/tagd/node_modules/koa/package.json',
    ]) {
      t.regex(entry(path) ?? '', /^-rw-r--r-- root\/root /, path);
    }
    t.true(
      entries.every((line) => line.includes(' root/root ')),
      'every file is root-owned',
    );
    for (const devOnly of ['typescript', 'ava', '@biomejs']) {
      t.false(
        entries.some((line) => line.includes(`./usr/lib/tagd/node_modules/${devOnly}/`)),
        `${devOnly} (a devDependency) is not shipped`,
      );
    }

    // The shipped files, as installed: the unit is the repository's, and the command runs.
    const root = await tempDir(t);
    await run('dpkg-deb', ['-x', deb, root]);
    t.is(
      await readFile(join(root, 'lib/systemd/system/tagd.service'), 'utf8'),
      await readFile(join(repoRoot, 'systemd/tagd.service'), 'utf8'),
    );
    t.is((await run(join(root, 'usr/bin/tagd'), ['--version'])).stdout, `${version}\n`);

    // What postinst applies, applied to the unpacked tree: the tagd user in dialout, /etc/tagd.
    await mkdir(join(root, 'etc'), { recursive: true });
    await run('systemd-sysusers', [`--root=${root}`, 'tagd.conf']);
    await run('systemd-tmpfiles', [`--root=${root}`, '--create', 'tagd.conf']);
    t.regex(
      await readFile(join(root, 'etc/passwd'), 'utf8'),
      /^tagd:x:\d+:\d+:[^:]*:\/var\/lib\/tagd:\/usr\/sbin\/nologin$/m,
    );
    t.regex(await readFile(join(root, 'etc/group'), 'utf8'), /^dialout:x:\d+:tagd$/m);
    t.is((await stat(join(root, 'etc/tagd'))).mode & 0o777, 0o750);
  },
);
