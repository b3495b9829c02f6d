/**
 * docs/installing.md's `--allow-scripts` advice for `npm install -g` (Installing, 2b) against what npm
 * asks about: the packages of package-lock.json with install scripts (`hasInstallScript`) that
 * a production install gets, and package.json `allowScripts`, which decides each of them.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { repoRoot } from '../helpers/tagd-process.js';

interface LockEntry {
  hasInstallScript?: boolean;
  dev?: boolean;
  link?: boolean;
}

/** The packages with install scripts, by name, and whether only a dev install gets them. */
async function withInstallScripts(): Promise<Map<string, { dev: boolean }>> {
  const lock = JSON.parse(await readFile(join(repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const found = new Map<string, { dev: boolean }>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || !entry.hasInstallScript || entry.link) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const dev = found.get(name)?.dev ?? true;
    found.set(name, { dev: dev && entry.dev === true });
  }
  return found;
}

/** docs/installing.md's paragraph on npm's allowScripts notice in "2b. From the npm tarball". */
async function installingParagraph(): Promise<string> {
  const page = await readFile(join(repoRoot, 'docs/installing.md'), 'utf8');
  const section = page.slice(
    page.indexOf('## 2b. From the npm tarball'),
    page.indexOf('## 3. Profile, start, reload, status'),
  );
  const paragraph = section.split('\n\n').find((part) => part.includes('--allow-scripts='));
  if (!paragraph) throw new Error('no --allow-scripts paragraph in Installing, 2b');
  return paragraph;
}

test('package.json allowScripts decides every package of the lockfile with install scripts', async (t) => {
  const manifest = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
    allowScripts: Record<string, boolean>;
  };
  t.deepEqual(
    Object.keys(manifest.allowScripts).sort(),
    [...(await withInstallScripts()).keys()].sort(),
  );
});

test("docs/installing.md's --allow-scripts list allows what allowScripts allows and names every package npm asks about", async (t) => {
  const manifest = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
    allowScripts: Record<string, boolean>;
  };
  const scripts = await withInstallScripts();
  // What a global install of the tarball gets: the production and optional dependencies.
  const asked = [...scripts].filter(([, { dev }]) => !dev).map(([name]) => name);
  t.true(asked.includes('better-sqlite3'));
  const paragraph = await installingParagraph();
  const list = /--allow-scripts=([^`\s]+)/.exec(paragraph)?.[1]?.split(',') ?? [];
  t.deepEqual(
    [...list].sort(),
    asked.filter((name) => manifest.allowScripts[name] === true).sort(),
    'the list allows exactly the allowed ones a global install gets',
  );
  const named = new Set([...paragraph.matchAll(/`([^`\s]+)`/g)].map((match) => match[1]));
  for (const name of asked) t.true(named.has(name), `${name} is named in the paragraph`);
  for (const [name, { dev }] of scripts) {
    if (dev) t.true(named.has(name), `${name} (dev only) is named as not installed`);
  }
});
