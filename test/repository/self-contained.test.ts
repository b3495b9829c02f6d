/**
 * The repository passes its tests from a plain clone with nothing beside it: no tracked file may
 * name a path that climbs out of the repository to a sibling folder (CI and developers once had
 * a `shared` folder beside the checkout, a plain clone does not). The comments here spell such
 * paths out in words, since a literal one would be an offender itself.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import test from 'ava';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Tracked and untracked-but-not-ignored files, as a plain clone (plus the change) has them. */
function repositoryFiles(): string[] {
  const output = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  return output.split('\n').filter((name) => name !== '' && !name.endsWith('package-lock.json'));
}

// A relative path that climbs to the folder holding the checkout and into a sibling: the old
// fixture path of the DBC helper (three levels up, then shared/fixtures), or the README's link to
// the design notes (one level up, then shared/DESIGN.md).
const outsideReference = /(?:\.\.\/)+shared\//;

test('no file in the repository names a path in a sibling folder', (t) => {
  const offenders: string[] = [];
  for (const name of repositoryFiles()) {
    let text: string;
    try {
      text = readFileSync(new URL(name, `file://${root}`), 'utf8');
    } catch {
      continue; // deleted in the working tree
    }
    text.split('\n').forEach((line, index) => {
      if (outsideReference.test(line)) offenders.push(`${name}:${index + 1}: ${line.trim()}`);
    });
  }
  t.deepEqual(offenders, []);
});

test('the DBC fixtures the tests read live in the repository, with their license', (t) => {
  const files = repositoryFiles();
  t.true(files.includes('test/fixtures/dbc/LICENSE-cantools'));
  t.true(files.includes('test/fixtures/dbc/README.md'));
  t.true(files.filter((name) => /^test\/fixtures\/dbc\/.+\.dbc$/.test(name)).length >= 20);
});
