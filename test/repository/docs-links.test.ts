/**
 * The documentation holds together: README.md is the quick start (under 200 lines, the two
 * commands of a fresh machine first), and every relative link and anchor of README.md and
 * docs/*.md leads somewhere, by GitHub's anchor rules.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { anchorsOf, brokenLinks, githubSlug, linksOf } from '../helpers/markdown-links.js';
import { tempDir } from '../helpers/temp-dir.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** README.md and every page of docs/, relative to the repository. */
function documentation(): string[] {
  const pages = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages.sort()];
}

test('headings get the anchors GitHub gives them', (t) => {
  t.is(githubSlug('Writing tags'), 'writing-tags');
  t.is(githubSlug('3. Profile, start, reload, status'), '3-profile-start-reload-status');
  t.is(githubSlug('PostgreSQL (`"backend": "postgres"`)'), 'postgresql-backend-postgres');
  t.is(githubSlug('Browse, stream and drivers'), 'browse-stream-and-drivers');
  t.is(githubSlug('Flow in m³/h – über_alles'), 'flow-in-m³h--über_alles');
  t.deepEqual(
    [...anchorsOf('# Page\n\n## Cost\n\n```sh\n# not a heading\n```\n\n## Cost\n### Cost\n')],
    ['page', 'cost', 'cost-1', 'cost-2'],
  );
});

test('links are read outside code only', (t) => {
  t.deepEqual(
    linksOf(
      'See [a](a.md#x) and [b\nc](../b.md).\n\n```md\n[not](c.md)\n```\n\n`[nor](d.md)` <https://e>',
    ),
    ['a.md#x', '../b.md'],
  );
});

test('a link to a missing page or heading is reported', async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, 'docs'));
  await writeFile(
    join(dir, 'README.md'),
    '# R\n\n[ok](docs/a.md#two) [page](docs/none.md) [head](docs/a.md#three) [self](#r) [bad](#s)\n',
  );
  await writeFile(
    join(dir, 'docs/a.md'),
    '# One\n\n## Two\n\n[back](../README.md#r) [web](https://x.y/#z)\n',
  );
  t.deepEqual(brokenLinks(dir, ['README.md', 'docs/a.md']), [
    'README.md: docs/none.md (no such file)',
    'README.md: docs/a.md#three (no such heading)',
    'README.md: #s (no such heading)',
  ]);
});

test('every relative link and anchor of README.md and docs/ resolves', (t) => {
  const files = documentation();
  t.true(files.includes('docs/api.md') && files.includes('docs/errors.md'));
  t.deepEqual(brokenLinks(root, files), []);
});

test('README.md is the quick start: under 200 lines, the two first commands first, every page linked', (t) => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const lines = readme.split('\n');
  t.true(lines.length < 200, `README.md has ${lines.length} lines`);
  t.is(lines[0], '# tagd');
  t.is(lines[2], '```sh');
  t.true(lines[3]?.startsWith('npm ci && npm start '), lines[3]);
  t.true(lines[5]?.startsWith('npm ci && npm test '), lines[5]);
  // .ci/run runs exactly the README's test command.
  t.regex(readFileSync(join(root, '.ci/run'), 'utf8'), /^npm test$/m);
  const linked = new Set(linksOf(readme).map((target) => target.replace(/#.*$/, '')));
  const unlinked = documentation().filter((file) => file !== 'README.md' && !linked.has(file));
  t.deepEqual(unlinked, [], 'every docs page is reachable from the README');
});
