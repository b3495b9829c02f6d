import { readFileSync } from 'node:fs';
import test from 'ava';
import { findJsonError } from '../../src/profile/json-error-position.js';

const demo = readFileSync(new URL('../../config/demo.json', import.meta.url), 'utf8');

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

test('agrees with JSON.parse on every truncation of a real profile', (t) => {
  for (let end = 0; end <= demo.length; end++) {
    const text = demo.slice(0, end);
    t.is(findJsonError(text) === undefined, parses(text), `truncated at ${end}`);
  }
});

test('agrees with JSON.parse when any one character is replaced', (t) => {
  // Deterministic mutations: every 7th position, a handful of characters that matter to JSON.
  for (let at = 0; at < demo.length; at += 7) {
    for (const char of ['"', '}', ']', ',', ':', '\\', 'x', '0', '\u0001']) {
      const text = demo.slice(0, at) + char + demo.slice(at + 1);
      t.is(findJsonError(text) === undefined, parses(text), `${JSON.stringify(char)} at ${at}`);
    }
  }
});

test('valid documents of every kind pass', (t) => {
  for (const text of [
    '{}',
    '[]',
    '0',
    '-1.5e+3',
    '"\\u00e9\\n"',
    'true',
    ' null ',
    '[1,[2,[3]]]',
    '{"a":{"b":[]}}',
  ]) {
    t.is(findJsonError(text), undefined, text);
  }
});

test('names line, column and what was expected', (t) => {
  t.deepEqual(findJsonError('{\n  "a": }'), { line: 2, column: 8, expected: 'a value' });
  t.deepEqual(findJsonError('{\n  "a": 1,\n}'), {
    line: 3,
    column: 1,
    expected: 'a quoted property name',
  });
  t.deepEqual(findJsonError('[1 2]'), {
    line: 1,
    column: 4,
    expected: "',' or ']' after the array element",
  });
  t.deepEqual(findJsonError('{} x'), {
    line: 1,
    column: 4,
    expected: 'end of file after the document',
  });
});

test('hostile nesting is reported, not a stack overflow', (t) => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  t.deepEqual(findJsonError(deep), {
    line: 1,
    column: 513,
    expected: 'less nesting (at most 512 levels)',
  });
});
