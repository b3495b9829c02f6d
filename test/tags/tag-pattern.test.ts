import test, { type ExecutionContext } from 'ava';
import { InvalidTagPathError } from '../../src/errors.js';
import { compileTagPattern, isPattern } from '../../src/tags/tag-pattern.js';

/** Asserts which of `paths` the pattern matches, listing both sides in the failure. */
function assertMatches(
  t: ExecutionContext,
  pattern: string,
  matching: readonly string[],
  notMatching: readonly string[],
): void {
  const matches = compileTagPattern(pattern);
  const all = [...matching, ...notMatching];
  t.deepEqual(
    all.filter((path) => matches(path)),
    [...matching],
    `pattern ${pattern}`,
  );
}

test('isPattern is true only for whole * or ** segments', (t) => {
  t.true(isPattern('*'));
  t.true(isPattern('**'));
  t.true(isPattern('A/*/C'));
  t.true(isPattern('A/**'));
  t.true(isPattern('**/Temp'));
  t.false(isPattern('A/B/C'));
  t.false(isPattern('A'));
  t.false(isPattern('A*'));
  t.false(isPattern('A/B*C'));
  t.false(isPattern('A/***'));
  t.false(isPattern(''));
});

test('an exact path matches only itself', (t) => {
  assertMatches(t, 'A/B/C', ['A/B/C'], ['A/B', 'A/B/C/D', 'X/A/B/C', 'a/b/c', 'A/B/C ', 'A/B/CC']);
});

test('* matches exactly one segment', (t) => {
  assertMatches(t, 'A/*/C', ['A/B/C', 'A/X/C', 'A/B.1/C'], ['A/C', 'A/B/X/C', 'A/B/D', 'B/B/C']);
});

test('a trailing * matches one segment, not zero nor two', (t) => {
  assertMatches(t, 'A/*', ['A/B', 'A/C'], ['A', 'A/B/C', 'B/A']);
});

test('* alone matches every one-segment path', (t) => {
  assertMatches(t, '*', ['A', 'Temp'], ['A/B', 'A/B/C']);
});

test('A/** matches A itself (zero segments) and everything below it', (t) => {
  assertMatches(t, 'A/**', ['A', 'A/B', 'A/B/C/D'], ['B', 'AB', 'AB/C', 'B/A/C']);
});

test('**/Temp matches Temp at any depth, zero included', (t) => {
  assertMatches(t, '**/Temp', ['Temp', 'X/Temp', 'X/Y/Temp'], ['X/Temp2', 'Temp/X', 'XTemp']);
});

test('A/**/C matches any number of segments between A and C', (t) => {
  assertMatches(
    t,
    'A/**/C',
    ['A/C', 'A/B/C', 'A/B/B/C', 'A/C/C', 'A/C/X/C'],
    ['A', 'A/B', 'A/C/D', 'X/A/C', 'A/CC'],
  );
});

test('** alone matches everything', (t) => {
  const sixteen = Array.from({ length: 16 }, (_, i) => `s${i}`).join('/');
  assertMatches(t, '**', ['A', 'A/B', 'A/B/C/D', sixteen], []);
});

test('* and ** combine', (t) => {
  assertMatches(t, '*/**/Temp', ['X/Temp', 'X/Y/Temp', 'X/Y/Z/Temp'], ['Temp', 'X/Temp/Y']);
  assertMatches(t, '**/*', ['A', 'A/B', 'A/B/C'], []);
  assertMatches(t, '**/**', ['A', 'A/B/C'], []);
});

test('a dot in a pattern is literal', (t) => {
  assertMatches(t, 'A.B', ['A.B'], ['AxB', 'A/B', 'AB']);
  assertMatches(t, 'X/*/A.B', ['X/Y/A.B'], ['X/Y/AxB']);
  assertMatches(t, '**/A.B', ['A.B', 'X/A.B'], ['AxB', 'X/AxB']);
});

test('other regular-expression characters are literal too', (t) => {
  assertMatches(t, 'A:1/B-2_c', ['A:1/B-2_c'], ['A:1/B-2_d']);
  assertMatches(t, '*/B-2_c', ['A:1/B-2_c'], ['A:1/B22_c']);
});

test('matching is case-sensitive', (t) => {
  assertMatches(t, 'A/*/temp', ['A/B/temp'], ['A/B/Temp', 'a/B/temp']);
});

for (const pattern of ['', '/A', 'A/', 'A//*', 'A/B*', 'A/***', 'A/b c', 'Temperatur°/**']) {
  test(`invalid pattern '${pattern}' throws InvalidTagPathError`, (t) => {
    const error = t.throws(() => compileTagPattern(pattern), { instanceOf: InvalidTagPathError });
    t.is(error?.code, 'invalid-tag-path');
    t.is(error?.status, 400);
    t.is(error?.path, pattern);
  });
}

test('a pattern with more than 16 segments throws', (t) => {
  const pattern = Array.from({ length: 17 }, () => '*').join('/');
  t.throws(() => compileTagPattern(pattern), { instanceOf: InvalidTagPathError });
});

test('many ** segments match in linear-ish time, never by exponential backtracking', (t) => {
  const pattern = `${Array.from({ length: 15 }, () => '**').join('/')}/x`;
  const matches = compileTagPattern(pattern);
  const deep = Array.from({ length: 16 }, (_, i) => `s${i}`).join('/');
  const started = performance.now();
  for (let i = 0; i < 1_000; i++) matches(deep);
  t.false(matches(deep));
  t.true(matches('a/b/x'));
  const elapsed = performance.now() - started;
  // Unmemoised, one call took ~566 million steps; memoised, a thousand take milliseconds.
  t.true(elapsed < 2_000, `${elapsed} ms`);
  const mixed = compileTagPattern('**/a/**/b/**/c');
  t.true(mixed('a/b/c'));
  t.true(mixed('x/a/y/b/z/c'));
  t.false(mixed('x/a/y/b/z/d'));
});
