/**
 * The two install paths of docs/installing.md, end to end: `npm pack` makes a
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
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import test from 'ava';
import { version } from '../../src/version.js';
import { fakeNotifySocket } from '../helpers/fake-notify-socket.js';
import { brokenLinks } from '../helpers/markdown-links.js';
import { repoRoot, startTagd } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const run = promisify(execFile);
// A full build and an install on a busy 2-core machine: room, not a speed requirement.
const packagingTestMs = 1_200_000;

let workRoot: string | undefined;
let packing: Promise<Packed> | undefined;
let building: Promise<Built> | undefined;

/** The packed tarball, the copy of the repository it was packed from, and npm's install env. */
interface Packed {
  tarball: string;
  source: string;
  env: NodeJS.ProcessEnv;
}

/** A .deb built by packaging/build-deb.sh, and the time window of its build (ms since 1970). */
interface Built {
  deb: string;
  stdout: string;
  startedMs: number;
  endedMs: number;
}

test.after.always(async () => {
  if (workRoot) await rm(workRoot, { recursive: true, force: true });
});

/** Packs the repository's tracked files (as they are in the work tree) once per run. */
function packOnce(): Promise<Packed> {
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
    return {
      tarball: join(packed, `tagd-${version}.tgz`),
      source,
      env: await installEnv(workRoot),
    };
  })();
  return packing;
}

/** Runs packaging/build-deb.sh on the packed tarball into a new folder of the work root. */
async function buildDeb(extraEnv: NodeJS.ProcessEnv = {}): Promise<Built> {
  const { tarball, env } = await packOnce();
  const out = await mkdtemp(join(workRoot as string, 'deb-'));
  // Whole seconds: the package's dates have no finer grain.
  const startedMs = Math.floor(Date.now() / 1000) * 1000;
  const { stdout } = await run(
    join(repoRoot, 'packaging/build-deb.sh'),
    ['--tarball', tarball, '--out', out],
    { env: { ...env, SOURCE_DATE_EPOCH: undefined, ...extraEnv }, maxBuffer: 64 * 1024 * 1024 },
  );
  const endedMs = Math.ceil(Date.now() / 1000) * 1000;
  return { deb: stdout.trim().split('\n').at(-1) as string, stdout, startedMs, endedMs };
}

/** The .deb of the default build (no SOURCE_DATE_EPOCH), built once for the tests that read it. */
function debOnce(): Promise<Built> {
  building ??= buildDeb();
  return building;
}

/** The archive's entries as `tar -tv --full-time` lists them: type, path and date (ms). */
async function tarEntries(
  deb: string,
  part: '--fsys-tarfile' | '--ctrl-tarfile',
): Promise<{ type: string; path: string; mtimeMs: number }[]> {
  const { stdout } = await run(
    'sh',
    ['-c', `dpkg-deb ${part} "$1" | tar -tv --full-time`, 'sh', deb],
    { env: { ...process.env, TZ: 'UTC' }, maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [mode, , , day, time, ...rest] = line.split(/\s+/);
      return {
        type: (mode as string)[0] as string,
        path: (rest.join(' ').split(/ -> | link to /)[0] as string).replace(/^\.\//, ''),
        mtimeMs: Date.parse(`${day}T${time}Z`),
      };
    });
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
      'package/README.md',
      'package/docs/api.md',
      'package/docs/errors.md',
      'package/docs/installing.md',
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
    const { deb } = await debOnce();
    const arch = (await run('dpkg', ['--print-architecture'])).stdout.trim();
    t.is(basename(deb), `tagd_${version}_${arch}.deb`);

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

    // The documentation, where Debian keeps it, whole: the README and every docs page, with
    // their links resolving there; none of it left in the app's folder.
    const doc = join(root, 'usr/share/doc/tagd');
    const pages = readdirSync(join(repoRoot, 'docs')).filter((name) => name.endsWith('.md'));
    t.true(pages.includes('installing.md'));
    for (const name of ['README.md', ...pages.map((page) => `docs/${page}`)]) {
      t.is(
        await readFile(join(doc, name), 'utf8'),
        await readFile(join(repoRoot, name), 'utf8'),
        name,
      );
      t.regex(entry(`./usr/share/doc/tagd/${name}`) ?? '', /^-rw-r--r-- root\/root /, name);
    }
    t.deepEqual(brokenLinks(doc, ['README.md', ...pages.map((page) => `docs/${page}`)]), []);
    t.false(existsSync(join(root, 'usr/lib/tagd/README.md')));
    t.false(existsSync(join(root, 'usr/lib/tagd/docs')));

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

test.serial('npm pack ships no source maps and no TypeScript build state', async (t) => {
  t.timeout(packagingTestMs);
  const { tarball, source } = await packOnce();
  // The copy's dist/ is the pack's full build: maps and the .tsbuildinfo are there to leave out.
  const built = (
    await run('find', [join(source, 'dist'), '-type', 'f'], {
      maxBuffer: 16 * 1024 * 1024,
    })
  ).stdout.split('\n');
  t.true(
    built.some((file) => file.endsWith('.js.map')),
    'the build writes source maps',
  );
  t.true(
    built.some((file) => file.endsWith('.tsbuildinfo')),
    'and its incremental state',
  );

  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: source,
    maxBuffer: 64 * 1024 * 1024,
  });
  const listed = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]?.files.map(
    (file) => file.path,
  ) as string[];
  t.true(listed.includes('dist/src/bin.js'));
  t.deepEqual(
    listed.filter((path) => path.endsWith('.map') || path.endsWith('.tsbuildinfo')),
    [],
  );
  const { stdout: packed } = await run('tar', ['-tzf', tarball], { maxBuffer: 16 * 1024 * 1024 });
  t.deepEqual(
    packed.split('\n').filter((path) => path.endsWith('.map') || path.endsWith('.tsbuildinfo')),
    [],
  );
});

test.serial(
  "the .deb's copyright names tagd's licence and each bundled node module's, in DEP-5 form",
  async (t) => {
    t.timeout(packagingTestMs);
    const { deb } = await debOnce();
    const root = await tempDir(t);
    await run('dpkg-deb', ['-x', deb, root]);
    const doc = join(root, 'usr/share/doc/tagd');
    t.is((await stat(doc)).mode & 0o777, 0o755);
    t.is((await stat(join(doc, 'copyright'))).mode & 0o777, 0o644);
    const copyright = await readFile(join(doc, 'copyright'), 'utf8');
    const paragraphs = copyright.trimEnd().split('\n\n');
    t.is(
      paragraphs[0]?.split('\n')[0],
      'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/',
    );
    t.regex(paragraphs[0] ?? '', /^Upstream-Name: tagd$/m);
    const manifest = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      license: string;
    };
    t.is(manifest.license, 'UNLICENSED');
    t.regex(
      paragraphs[1] ?? '',
      /^Files: \*\nCopyright: .+\nLicense: UNLICENSED\n .*[Pp]roprietary/,
    );

    // Every installed module, from the hidden lockfile npm ci wrote (an independent record of
    // the tree and of each module's declared licence), has its paragraph with that licence.
    const app = join(root, 'usr/lib/tagd');
    const hidden = JSON.parse(
      await readFile(join(app, 'node_modules/.package-lock.json'), 'utf8'),
    ) as { packages: Record<string, { license?: string; link?: boolean }> };
    const byFiles = new Map<string, string>();
    for (const paragraph of paragraphs.slice(2)) {
      const files = /^Files: (.+)$/m.exec(paragraph)?.[1];
      const license = /^License: (.+)$/m.exec(paragraph)?.[1];
      t.truthy(files && license, paragraph.slice(0, 200));
      t.regex(paragraph, /^Copyright: \S/m);
      byFiles.set(files as string, license as string);
    }
    const installed = Object.entries(hidden.packages).filter(([, entry]) => !entry.link);
    t.true(installed.length > 50, `${installed.length} modules`);
    t.true(installed.some(([path]) => path === 'node_modules/koa'));
    const normal = (license: string) =>
      license.replaceAll(/[()]/g, '').replaceAll(/\s+/g, ' ').trim().toLowerCase();
    for (const [path, entry] of installed) {
      const license = byFiles.get(`usr/lib/tagd/${path}/*`);
      t.truthy(license, `${path} has a Files paragraph`);
      if (entry.license) t.is(normal(license ?? ''), normal(entry.license), path);
    }
    t.is(byFiles.size, installed.length, 'one paragraph per installed module, no more');
    // The licence text travels with it: koa's MIT grant, from its LICENSE file.
    const koa = paragraphs.find((paragraph) =>
      paragraph.startsWith('Files: usr/lib/tagd/node_modules/koa/*\n'),
    );
    t.regex(koa ?? '', /^ Permission is hereby granted, free of charge/m);
  },
);

test.serial(
  "the .deb's changelog.Debian.gz is a Debian changelog of its version, gzip -9n",
  async (t) => {
    t.timeout(packagingTestMs);
    const { deb, startedMs, endedMs } = await debOnce();
    const root = await tempDir(t);
    await run('dpkg-deb', ['-x', deb, root]);
    const path = join(root, 'usr/share/doc/tagd/changelog.Debian.gz');
    t.is((await stat(path)).mode & 0o777, 0o644);
    const gz = await readFile(path);
    // RFC 1952 header: no file name (FLG bit 3), no date (MTIME 0), maximum compression (XFL 2).
    t.is((gz[3] as number) & 0x08, 0, 'no file name in the header');
    t.is(gz.readUInt32LE(4), 0, 'no date in the header');
    t.is(gz[8], 2, 'compressed with -9');
    const text = gunzipSync(gz).toString('utf8');
    const lines = text.split('\n');
    t.is(lines[0], `tagd (${version}) unstable; urgency=medium`);
    t.regex(lines[2] ?? '', /^ {2}\* \S/);
    const trailer =
      /^ -- (.+ <[^>]+>) {2}(\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000)$/m.exec(text);
    t.truthy(trailer, text);
    t.is(trailer?.[1], 'tagd maintainers <tagd@localhost>');
    const date = Date.parse(trailer?.[2] ?? '');
    t.true(date >= startedMs && date <= endedMs, `${trailer?.[2]} is the build's date`);
    // dpkg reads it: the version it parses is the package's.
    const plain = join(root, 'changelog');
    await writeFile(plain, text);
    t.is((await run('dpkg-parsechangelog', ['-l', plain, '-S', 'Version'])).stdout.trim(), version);
  },
);

test.serial("the .deb's md5sums list every shipped file and match their contents", async (t) => {
  t.timeout(packagingTestMs);
  const { deb } = await debOnce();
  const md5sums = (await run('dpkg-deb', ['-I', deb, 'md5sums'], { maxBuffer: 64 * 1024 * 1024 }))
    .stdout;
  const listed = md5sums
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      t.regex(line, /^[0-9a-f]{32} {2}[^/]/, line);
      return line.slice(34);
    });
  const files = (await tarEntries(deb, '--fsys-tarfile'))
    // A hard link (socketcan's build links its addon into two folders) is a regular file too.
    .filter((entry) => entry.type === '-' || entry.type === 'h')
    .map((entry) => entry.path);
  t.deepEqual([...listed].sort(), [...files].sort(), 'every regular file, nothing else');
  t.true(listed.includes('usr/lib/tagd/dist/src/bin.js'));
  t.true(listed.includes('usr/share/doc/tagd/copyright'));

  // What dpkg --verify does: the unpacked files against the list.
  const root = await tempDir(t);
  await run('dpkg-deb', ['-x', deb, root]);
  const list = join(await tempDir(t), 'md5sums');
  await writeFile(list, md5sums);
  const check = await run('md5sum', ['--check', '--quiet', '--strict', list], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stdout?: string; stderr?: string }) => error);
  t.is(String(check.stdout) + String(check.stderr), '');
});

test.serial("the .deb's files are dated to its build, not npm's fixed 1985 date", async (t) => {
  t.timeout(packagingTestMs);
  const { deb, startedMs, endedMs } = await debOnce();
  for (const part of ['--fsys-tarfile', '--ctrl-tarfile'] as const) {
    const entries = await tarEntries(deb, part);
    t.true(entries.length > 0);
    const outside = entries.filter(
      (entry) => !(entry.mtimeMs >= startedMs && entry.mtimeMs <= endedMs),
    );
    t.deepEqual(outside.slice(0, 5), [], `${part}: every entry dated within the build`);
  }
});

test.serial('with SOURCE_DATE_EPOCH set, the .deb and its changelog are dated to it', async (t) => {
  t.timeout(packagingTestMs);
  await debOnce(); // one build at a time on a busy machine
  const epoch = 1_700_000_000; // 2023-11-14T22:13:20Z
  const { deb } = await buildDeb({ SOURCE_DATE_EPOCH: String(epoch) });
  for (const part of ['--fsys-tarfile', '--ctrl-tarfile'] as const) {
    const entries = await tarEntries(deb, part);
    t.deepEqual(entries.filter((entry) => entry.mtimeMs !== epoch * 1000).slice(0, 5), [], part);
  }
  const root = await tempDir(t);
  await run('dpkg-deb', ['-x', deb, root]);
  const text = gunzipSync(
    await readFile(join(root, 'usr/share/doc/tagd/changelog.Debian.gz')),
  ).toString('utf8');
  t.regex(text, /^ -- .+ {2}Tue, 14 Nov 2023 22:13:20 \+0000$/m);
});
