import test from 'ava';
import { InvalidTagPathError } from '../../src/errors.js';
import {
  assertTagPath,
  maxPathLength,
  maxSegments,
  segmentPattern,
  tagPathProblem,
} from '../../src/tags/tag-path.js';

/** A path of `count` one-letter segments: `s0/s1/…`. */
function segments(count: number): string {
  return Array.from({ length: count }, (_, i) => `s${i}`).join('/');
}

test('the limits are the documented ones (docs/profile.md, tag paths)', (t) => {
  t.is(maxSegments, 16);
  t.is(maxPathLength, 256);
  t.true(segmentPattern.test('Az09_.:-'));
  t.false(segmentPattern.test('a b'));
});

test('accepts a single segment', (t) => {
  t.is(tagPathProblem('Line1'), undefined);
  t.notThrows(() => assertTagPath('Line1'));
});

test('accepts every allowed character in a segment', (t) => {
  t.is(tagPathProblem('sim/Line_1.Motor-2:Speed/HR40001'), undefined);
});

test('accepts exactly 16 segments', (t) => {
  const path = segments(16);
  t.is(path.split('/').length, 16);
  t.is(tagPathProblem(path), undefined);
});

test('accepts exactly 256 characters', (t) => {
  const single = 'a'.repeat(256);
  t.is(tagPathProblem(single), undefined);
  // Several segments adding up to 256: 8 segments of 31 chars, 7 slashes and one extra char.
  const multi = `x${Array.from({ length: 8 }, (_, i) => String(i).repeat(31)).join('/')}`;
  t.is(multi.length, 256);
  t.is(tagPathProblem(multi), undefined);
  // The same path one character longer is refused.
  t.is(tagPathProblem(`x${multi}`), 'it is longer than 256 characters');
});

test('rejects an empty path', (t) => {
  t.is(tagPathProblem(''), 'the path is empty');
});

for (const [label, path] of [
  ['leading slash', '/A/B'],
  ['trailing slash', 'A/B/'],
  ['double slash', 'A//B'],
  ['a lone slash', '/'],
] as const) {
  test(`rejects a ${label}`, (t) => {
    t.is(tagPathProblem(path), 'it has an empty segment (leading, trailing or double slash)');
  });
}

test('rejects 17 segments', (t) => {
  t.is(tagPathProblem(segments(17)), 'it has more than 16 segments');
});

test('rejects 257 characters', (t) => {
  t.is(tagPathProblem('a'.repeat(257)), 'it is longer than 256 characters');
});

for (const [label, path, segment] of [
  ['a space', 'A/Motor Speed', 'Motor Speed'],
  ['a #', 'A/B#1', 'B#1'],
  ['a unicode symbol', 'Kessel/Temperatur°', 'Temperatur°'],
  ['a unicode letter', 'Kessel/Größe', 'Größe'],
  ['a backslash', 'A\\B', 'A\\B'],
] as const) {
  test(`rejects ${label}`, (t) => {
    t.is(tagPathProblem(path), `segment '${segment}' may only hold letters, digits and _ . : -`);
  });
}

test('rejects wildcards unless allowWildcards is set', (t) => {
  for (const pattern of ['A/*', 'A/**', '*', '**', 'A/*/C', '**/Temp']) {
    const wildcard = pattern.split('/').find((s) => s.startsWith('*'));
    const expected = `segment '${wildcard}' may only hold letters, digits and _ . : -`;
    t.is(tagPathProblem(pattern), expected, pattern);
    t.is(tagPathProblem(pattern, true), undefined, pattern);
  }
});

test('allowWildcards accepts only whole-segment * and **', (t) => {
  t.is(tagPathProblem('A/B*', true), "segment 'B*' may only hold letters, digits and _ . : -");
  t.is(tagPathProblem('A/***', true), "segment '***' may only hold letters, digits and _ . : -");
  t.is(tagPathProblem('A/*.x', true), "segment '*.x' may only hold letters, digits and _ . : -");
  t.is(tagPathProblem('A//*', true), 'it has an empty segment (leading, trailing or double slash)');
});

test('assertTagPath does not accept wildcards', (t) => {
  const error = t.throws(() => assertTagPath('A/*'), { instanceOf: InvalidTagPathError });
  t.is(error?.path, 'A/*');
});

test('assertTagPath throws InvalidTagPathError with code and status', (t) => {
  const error = t.throws(() => assertTagPath('A//B'), { instanceOf: InvalidTagPathError });
  t.is(error?.code, 'invalid-tag-path');
  t.is(error?.status, 400);
  t.is(error?.name, 'InvalidTagPathError');
  t.is(error?.path, 'A//B');
  t.is(
    error?.message,
    "Invalid tag path 'A//B': it has an empty segment (leading, trailing or double slash)",
  );
});

test('assertTagPath throws for each kind of invalid path', (t) => {
  for (const path of ['', '/A', 'A/', segments(17), 'a'.repeat(257), 'A B', 'A#', 'Temperatur°']) {
    const error = t.throws(() => assertTagPath(path), { instanceOf: InvalidTagPathError }, path);
    t.is(error?.code, 'invalid-tag-path');
    t.is(error?.status, 400);
  }
});

test('the error message truncates a very long path', (t) => {
  const error = t.throws(() => assertTagPath('a'.repeat(400)), { instanceOf: InvalidTagPathError });
  const shown = `${'a'.repeat(300)}…`;
  t.is(error?.message, `Invalid tag path '${shown}': it is longer than 256 characters`);
  t.is(error?.path.length, 400);
});
