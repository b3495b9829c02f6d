#!/usr/bin/env node
// Writes the .deb's /usr/share/doc/tagd/copyright (machine-readable, DEP-5:
// https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/) to stdout, from the staged
// app folder: tagd's own licence as its package.json declares it, then one Files paragraph per
// node module the package bundles, with the licence its package.json names and the text of its
// licence file. Run by packaging/build-deb.sh after `npm ci`, so it lists exactly what ships.
//   node packaging/deb-copyright.mjs <staged /usr/lib/tagd> <its path in the package, usr/lib/tagd>
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const [app, installedAt] = process.argv.slice(2);
if (!app || !installedAt) {
  process.stderr.write('usage: deb-copyright.mjs APP_DIR INSTALLED_PATH\n');
  process.exit(2);
}

/** The package.json of a folder, or undefined when it has none (or an unreadable one). */
function manifest(folder) {
  try {
    return JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

/** Every package under a node_modules folder, nested ones included, as [folder, relative path]. */
function* packages(nodeModules, relative) {
  let names;
  try {
    names = readdirSync(nodeModules).sort();
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith('.')) continue; // .bin, .package-lock.json
    const folder = join(nodeModules, name);
    if (!statSync(folder).isDirectory()) continue;
    if (name.startsWith('@')) {
      for (const scoped of readdirSync(folder).sort()) {
        const inner = join(folder, scoped);
        if (!statSync(inner).isDirectory()) continue;
        yield* one(inner, `${relative}/${name}/${scoped}`);
      }
    } else {
      yield* one(folder, `${relative}/${name}`);
    }
  }
}

function* one(folder, relative) {
  yield [folder, relative];
  yield* packages(join(folder, 'node_modules'), `${relative}/node_modules`);
}

/**
 * The licence a package.json names, in the copyright format's syntax: an SPDX expression keeps
 * its identifiers, with `or`/`and` in lower case and no parentheses (the format has none); the
 * old `license: {type}` and `licenses: [{type}]` forms are read too.
 */
function licenseOf(pkg) {
  let license = pkg.license;
  if (license && typeof license === 'object') license = license.type;
  if (!license && Array.isArray(pkg.licenses)) {
    license = pkg.licenses
      .map((entry) => (typeof entry === 'string' ? entry : entry?.type))
      .filter(Boolean)
      .join(' or ');
  }
  if (typeof license !== 'string' || license.trim() === '') return 'unknown';
  return license
    .replaceAll(/[()]/g, '')
    .replaceAll(/\s+OR\s+/g, ' or ')
    .replaceAll(/\s+AND\s+/g, ' and ')
    .trim();
}

const licenseFile = /^(licen[cs]e|copying)(\.(md|txt|markdown))?$|^licen[cs]e[-_.]/i;

/** The package's licence files (LICENSE, LICENCE.md, COPYING, LICENSE-MIT…), sorted. */
function licenseFiles(folder) {
  return readdirSync(folder)
    .filter((name) => licenseFile.test(name) && statSync(join(folder, name)).isFile())
    .sort();
}

/** The copyright lines of the licence texts, else the package.json author, else a pointer. */
function copyrightOf(pkg, texts) {
  const lines = new Set();
  for (const text of texts) {
    for (const line of text.split('\n')) {
      const trimmed = line.trim();
      if (/^(copyright\b|\(c\)|©)/i.test(trimmed) && /\d{4}|\w+\s+\w+/.test(trimmed)) {
        lines.add(trimmed);
      }
    }
  }
  if (lines.size > 0) return [...lines];
  const author = typeof pkg.author === 'string' ? pkg.author : pkg.author?.name;
  if (author) return [author];
  return [`the authors of ${pkg.name}`];
}

/** A field's continuation lines: each indented by one space, an empty line written " .". */
function body(text) {
  return text
    .replaceAll('\r\n', '\n')
    .replaceAll('\t', '    ')
    .trimEnd()
    .split('\n')
    .map((line) => (line.trim() === '' ? ' .' : ` ${line.trimEnd()}`))
    .join('\n');
}

/** A multi-line field: the first value on the field's line, the rest as continuation lines. */
function field(name, values) {
  const [first, ...rest] = values;
  return [`${name}: ${first}`, ...rest.map((value) => ` ${value}`)].join('\n');
}

const root = manifest(app);
const out = [];
out.push(
  [
    'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/',
    `Upstream-Name: ${root.name}`,
    'Comment: tagd itself is proprietary: its package.json declares the licence "UNLICENSED".',
    ' The node modules it bundles in /usr/lib/tagd/node_modules (its production dependencies,',
    ' installed by `npm ci` from its package-lock.json when the package was built) keep their',
    " own licences, listed below from each module's package.json, with the text of its licence",
    ' file where it ships one.',
  ].join('\n'),
);
out.push(
  [
    'Files: *',
    'Copyright: tagd maintainers',
    `License: ${licenseOf(root)}`,
    ' Proprietary software, not free and not open source. Its package.json declares',
    ' "UNLICENSED": no licence to use, copy, modify or distribute it is granted by this package;',
    ' any such right comes only from a separate agreement with its owner.',
  ].join('\n'),
);
for (const [folder, relative] of packages(join(app, 'node_modules'), 'node_modules')) {
  const pkg = manifest(folder);
  if (!pkg?.name) continue; // not a package (a leftover folder)
  const files = licenseFiles(folder);
  const texts = files.map((name) => readFileSync(join(folder, name), 'utf8'));
  const license = licenseOf(pkg);
  const paragraph = [
    `Files: ${installedAt}/${relative}/*`,
    field('Copyright', copyrightOf(pkg, texts)),
    `License: ${license}`,
  ];
  if (texts.length > 0) {
    paragraph.push(body(texts.join('\n\n')));
  } else {
    paragraph.push(
      body(
        `${pkg.name} ${pkg.version} ships no licence file; its package.json names the licence "${license}".`,
      ),
    );
  }
  paragraph.push(`Comment: ${pkg.name} ${pkg.version}`);
  out.push(paragraph.join('\n'));
}
process.stdout.write(`${out.join('\n\n')}\n`);
