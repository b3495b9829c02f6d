/**
 * Hostile expressions: prototype and constructor paths, code-execution idioms of JavaScript,
 * huge literals, deep nesting, 100,000 characters, unicode look-alikes and invisible characters.
 * Each is refused by compileExpression with a clear message and position, and nothing of it is
 * ever evaluated (no program is built; the global object is untouched).
 */
import test from 'ava';
import { expressionLimits } from '../../src/expressions/limits.js';
import { compileExpression } from '../../src/expressions/program.js';

function refused(text: string): { message: string; line: number; column: number } {
  const outcome = compileExpression(text, { component: 'Derived' });
  if (outcome.ok) throw new Error(`${JSON.stringify(text.slice(0, 80))} was accepted`);
  return outcome.problem;
}

// Each: the text, a fragment of the message, the column of the problem (line 1).
const hostile: [string, string, number][] = [
  ['constructor', "Unknown name 'constructor'", 1],
  ['__proto__', "Unknown name '__proto__'", 1],
  ['prototype', "Unknown name 'prototype'", 1],
  ['constructor(1)', "Unknown function 'constructor'", 1],
  ['__proto__(1)', "Unknown function '__proto__'", 1],
  ['toString()', "Unknown function 'toString'", 1],
  ['hasOwnProperty("x")', "Unknown function 'hasOwnProperty'", 1],
  ['{A/x}.constructor', 'Property access', 6],
  ['{A/x}["constructor"]', 'Arrays and indexing', 6],
  ['"".constructor.constructor("return process")()', 'Property access', 3],
  ['abs.constructor', 'Property access', 4],
  ['abs["call"](1)', 'Arrays and indexing', 4],
  ['this', "'this' is not part of the expression language", 1],
  ['this.process', 'Property access', 5],
  ['globalThis', "Unknown name 'globalThis'", 1],
  ['process.exit(1)', 'Property access', 8],
  ['require("fs")', "Unknown function 'require'", 1],
  ['eval("1")', "Unknown function 'eval'", 1],
  ['Function("return 1")()', 'Only the listed functions can be called', 1],
  ['Function("return 1")', "Unknown function 'Function'", 1],
  ['Math.max(1, 2)', 'Property access', 5],
  ['(abs)(1)', 'Only the listed functions can be called', 1],
  ['abs(1)(2)', 'Only the listed functions can be called', 1],
  ['[1, 2, 3]', 'Arrays and indexing', 1],
  ['x = 1', 'Assignment', 3],
  ['{A/x} = 1', 'Assignment', 7],
  ['a => a', 'Assignment', 3],
  ['`$' + '{1}`', "Character '`'", 1],
  ['new Date()', 'Two expressions stand side by side', 5],
  ['1; 2', 'no statements or semicolons', 2],
  ['(1, 2)', 'A comma separates function arguments only', 1],
  ['null', "'null' is not a value here", 1],
  ['undefined', "Unknown name 'undefined'", 1],
  ['NaN', "Unknown name 'NaN'", 1],
  ['Infinity', "Unknown name 'Infinity'", 1],
  ['$', "Character '$'", 1],
  ['_$x', "Character '$'", 2],
  ['a ?? 1', "'??' is not an operator here", 3],
  ['a?.b', 'Property access', 2],
  ['1 === 1', "'===' is not an operator here", 3],
  ['1 & 1', "Bitwise '&' is a function here", 3],
  ['~1', "'~' is not an operator here", 1],
  ['1 << 2', 'Bit shifts are functions here', 3],
  ['"\\x41"', "Unknown escape '\\x'", 2],
  ['"\\u0041"', "Unknown escape '\\u'", 2],
  ['1e400', 'too large', 1],
  ['-1e400', 'too large', 2],
  [`0x${'F'.repeat(20)}`, 'larger than 2^53', 1],
  ['9'.repeat(100), 'longer than 64 characters', 1],
  ['0x', "'0x' needs digits", 3],
  ['12abc', "A number cannot be followed by 'a'", 3],
  ['1.2.3', "A number cannot be followed by '.'", 4],
  [`"${'a'.repeat(2000)}"`, 'The string is longer than 1024 characters', 1],
  ['"unclosed', 'The string is not closed', 1],
  ['{Line1/Flow', 'The tag reference is not closed', 1],
  ['{}', 'The tag reference is empty', 1],
  ['{Line1//Flow}', 'Invalid tag reference', 1],
  ['{Line1/Flow rate}', 'Invalid tag reference', 1],
  ['}', "A '}' closes a tag reference that was not opened", 1],
  ['', 'The expression is empty', 1],
  ['   \n  ', 'The expression is empty', 1],
  // Unicode: look-alikes, invisible and bidirectional characters, full-width forms.
  ['\u0430bs(1)', 'Character U+0430 is not allowed outside a string literal', 1],
  ['ab\u200bs(1)', 'Character U+200B', 3],
  ['\u202e1', 'Character U+202E', 1],
  ['1\u00a0+ 1', 'Character U+00A0', 2],
  ['\uff11 + 1', 'Character U+FF11', 1],
  ['{Line1/\uff26low}', 'Invalid tag reference', 1],
  ['"abc\u202edef"', 'Invisible or control character U+202E', 5],
  ['"a\u200db"', 'Invisible or control character U+200D', 3],
  ['"\ud800"', 'Invisible or control character U+D800', 2],
  ['"a\u0000b"', 'Invisible or control character U+0000', 3],
  ['1 +\u0000 1', 'Control character U+0000', 4],
  ['"line\nbreak"', 'A string cannot span lines', 6],
  ['\ufeff1', 'Character U+FEFF', 1],
];

for (const [text, fragment, column] of hostile) {
  test(`refused: ${JSON.stringify(text.slice(0, 50))}`, (t) => {
    const problem = refused(text);
    t.true(problem.message.includes(fragment), `'${problem.message}' says '${fragment}'`);
    t.is(problem.column, column, problem.message);
  });
}

test('refused: deep nesting of parentheses, prefix operators, conditionals and operators', (t) => {
  const depth = expressionLimits.maxParentheses + 1;
  t.regex(refused(`${'('.repeat(depth)}1${')'.repeat(depth)}`).message, /nest deeper than 32/);
  t.regex(refused(`${'!'.repeat(9)}true`).message, /More than 8 prefix operators/);
  t.regex(refused(`${'-'.repeat(4000)}1`).message, /More than 8 prefix operators/);
  t.regex(refused('true ? '.repeat(40) + '1 : 2'.repeat(40)).message, /More than 32/);
  // 1+1+…: parses flat, nests one level per operator in the tree.
  t.regex(refused(Array(100).fill('1').join('+')).message, /nests deeper than 64 levels/);
  t.regex(refused(`abs(${'abs('.repeat(32)}1${')'.repeat(33)}`).message, /nest/);
  t.regex(refused(Array(300).fill('max(1, 2)').join(' + ')).message, /nests deeper|more than 500/);
});

test('refused: more nodes than the limit, even when shallow', (t) => {
  const wide = `max(${Array(600).fill('1').join(', ')})`;
  t.regex(refused(wide).message, /more than 500 operands and operators/);
});

test('refused: 100,000 characters, before any parsing, pointing at the limit', (t) => {
  const huge = '1+'.repeat(50_000);
  const started = process.hrtime.bigint();
  const problem = refused(huge);
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  t.is(problem.message, 'The expression is longer than 4096 characters (100000).');
  t.is(problem.column, 4097);
  // Refused by its length: no scanning of what follows (generous bound for a busy machine).
  t.true(elapsedMs < 1000, `${elapsedMs} ms`);
  t.regex(refused(`"${'x'.repeat(100_000)}"`).message, /longer than 4096/);
});

test('refused: more distinct tags than the limit', (t) => {
  const text = Array.from({ length: 257 }, (_, i) => `{A/t${i}}`).join(' + ');
  t.true(text.length < 4096);
  const outcome = compileExpression(text);
  t.false(outcome.ok);
  if (!outcome.ok) t.regex(outcome.problem.message, /nests deeper|more than 256 tags/);
});

test('a refused expression runs nothing: the global object stays untouched', (t) => {
  const attempts = [
    'globalThis.hacked = 1',
    '"".constructor.constructor("globalThis.hacked = 1")()',
    'constructor.constructor("globalThis.hacked = 1")()',
    'eval("globalThis.hacked = 1")',
  ];
  for (const attempt of attempts) t.false(compileExpression(attempt).ok, attempt);
  t.is((globalThis as Record<string, unknown>).hacked, undefined);
  t.is(Object.hasOwn(Object.prototype, 'hacked'), false);
});

test('positions count lines and characters of the user’s text', (t) => {
  const problem = refused('1 +\n  foo(2)');
  t.deepEqual(
    { line: problem.line, column: problem.column, message: problem.message },
    { line: 2, column: 3, message: "Unknown function 'foo'." },
  );
  // A string with an emoji before the fault counts the emoji as one character.
  const after = refused('"🙂" + bar(1)');
  t.is(after.column, 7);
  const unclosed = compileExpression('max(1,\n 2');
  t.false(unclosed.ok);
  if (!unclosed.ok) {
    t.is(unclosed.problem.line, 2);
    t.is(unclosed.problem.expected, "')'");
  }
});

test('text that only looks hostile inside a string literal is just text', (t) => {
  const outcome = compileExpression('concat("constructor", "__proto__", "{A/x}", "a.b[0]")');
  t.true(outcome.ok);
  if (outcome.ok) {
    t.deepEqual(outcome.program.references, []);
    t.deepEqual(outcome.program.evaluate({ now: 0, read: () => undefined }), {
      quality: 'Good',
      value: 'constructor__proto__{A/x}a.b[0]',
    });
  }
});

test('tag paths with the characters segments may hold are read as paths', (t) => {
  const outcome = compileExpression('{Line-1/Pump_2/Speed.rpm:raw}');
  t.true(outcome.ok);
  if (outcome.ok) t.deepEqual(outcome.program.references, ['Line-1/Pump_2/Speed.rpm:raw']);
});
