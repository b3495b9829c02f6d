/**
 * The expression language end to end (scan, parse, check, compile, evaluate): every operator and
 * function on edge values, each expectation worked out by hand; quality propagation for each
 * input quality; faults that make a result Bad with a message naming the operation.
 */
import test from 'ava';
import type { ExpressionInput } from '../../src/expressions/evaluation-context.js';
import { formatProblem } from '../../src/expressions/expression-problem.js';
import {
  compileExpression,
  type EvaluationResult,
  type ExpressionProgram,
} from '../../src/expressions/program.js';
import type { Quality } from '../../src/tags/sample.js';

const t0 = Date.UTC(2026, 0, 1, 12);

type Inputs = Record<string, ExpressionInput>;

function program(text: string): ExpressionProgram {
  const outcome = compileExpression(text, { component: 'Derived' });
  if (!outcome.ok) throw new Error(`${text}: ${formatProblem(outcome.problem)}`);
  return outcome.program;
}

function run(text: string, inputs: Inputs = {}, now = t0): EvaluationResult {
  const compiled = program(text);
  return compiled.evaluate({ now, read: (index) => inputs[compiled.references[index] as string] });
}

const good = (value: number | boolean | string): ExpressionInput => ({ quality: 'Good', value });

const operators: [string, number | boolean | string][] = [
  ['1 + 2', 3],
  ['"a" + "b"', 'ab'],
  ['7 - 10', -3],
  ['6 * 7', 42],
  ['7 / 2', 3.5],
  ['7 % 3', 1],
  ['-7 % 3', -1],
  ['2 ** 10', 1024],
  ['2 ** -1', 0.5],
  ['2 ** 3 ** 2', 512],
  ['(-2) ** 2', 4],
  ['-(2 ** 2)', -4],
  ['1 + 2 * 3', 7],
  ['1 + 2 + 3 + 4', 10],
  ['"a" + "b" + "c"', 'abc'],
  ['0.1 + 0.2 + 0.3', 0.1 + 0.2 + 0.3],
  ['0.1 + (0.2 + 0.3)', 0.1 + (0.2 + 0.3)],
  ['(1 + 2) * 3', 9],
  ['10 - 4 - 3', 3],
  ['1 < 2', true],
  ['2 <= 2', true],
  ['3 > 4', false],
  ['4 >= 4', true],
  ['"abc" < "abd"', true],
  ['1 == 1', true],
  ['1 != 1', false],
  ['"a" == "a"', true],
  ['true == false', false],
  ['true != false', true],
  ['true && false', false],
  ['true || false', true],
  ['false || false', false],
  ['!true', false],
  ['!!true', true],
  ['-(3)', -3],
  ['+4', 4],
  ['- -4', 4],
  ['1 > 0 ? "yes" : "no"', 'yes'],
  ['1 < 0 ? "yes" : 1 > 0 ? "inner" : "no"', 'inner'],
  ['0x10 + 0b11', 19],
  ['0xff', 255],
  ['.5 + 1.5e1', 15.5],
  ['2E-3 * 1000', 2],
  ['true && 1 > 0 || false', true],
  ['1 +\n  2\t* 3', 7],
  ['\'single\' + "double"', 'singledouble'],
  ['"tab\\there"', 'tab\there'],
  ['"quote \\" and \\\\"', 'quote " and \\'],
];

for (const [text, expected] of operators) {
  test(`operator: ${JSON.stringify(text)} = ${JSON.stringify(expected)}`, (t) => {
    t.deepEqual(run(text), { quality: 'Good', value: expected });
  });
}

const functions: [string, number | boolean | string][] = [
  ['abs(-3)', 3],
  ['abs(0)', 0],
  ['min(3, 1, 2)', 1],
  ['max(3, 1, 2)', 3],
  ['min(-1, -1)', -1],
  ['round(2.5)', 3],
  ['round(-2.5)', -3],
  ['round(2.4)', 2],
  ['round(1.005, 2)', 1.01],
  ['round(1234.5, -2)', 1200],
  ['round(0.000001234, 8)', 0.00000123],
  ['floor(-1.5)', -2],
  ['ceil(-1.5)', -1],
  ['sqrt(16)', 4],
  ['sqrt(0)', 0],
  ['pow(2, 8)', 256],
  ['pow(9, 0.5)', 3],
  ['log(1000)', 3],
  ['ln(1)', 0],
  ['exp(0)', 1],
  ['clamp(150, 0, 100)', 100],
  ['clamp(-5, 0, 100)', 0],
  ['clamp(42, 0, 100)', 42],
  ['scale(13824, 0, 27648, 4, 20)', 12],
  ['scale(0, 0, 27648, 4, 20)', 4],
  ['scale(30000, 0, 27648, 0, 100) > 100', true],
  ['bit(0b1000, 3)', true],
  ['bit(0b1000, 2)', false],
  ['bit(0, 0)', false],
  ['bit(2 ** 52, 52)', true],
  ['bit(-1, 31)', true],
  ['bitAnd(0xF0F0, 0x0FF0)', 0x00f0],
  ['bitOr(0xF000, 0x000F)', 0xf00f],
  ['bitXor(0xFF, 0x0F)', 0xf0],
  ['bitAnd(2 ** 52 + 1, 2 ** 52 + 3)', 2 ** 52 + 1],
  ['bitAnd(-1, 0xFF)', 0xff],
  ['shl(1, 52)', 2 ** 52],
  ['shl(3, 4)', 48],
  ['shr(0x1234, 8)', 0x12],
  ['shr(-8, 1)', -4],
  ['int32(0x0001, 0x0000)', 65536],
  ['int32(0xFFFF, 0xFFFF)', -1],
  ['int32(0x8000, 0)', -2147483648],
  ['int32(0x7FFF, 0xFFFF)', 2147483647],
  ['int32(-1, -1)', -1],
  ['uint32(0xFFFF, 0xFFFF)', 4294967295],
  ['float32(0x3F80, 0)', 1],
  ['float32(0xC020, 0)', -2.5],
  ['float32(0x4048, 0xF5C3)', 3.140000104904175],
  ['if(true, 1, 2)', 1],
  ['if(false, "a", "b")', 'b'],
  ['coalesce(1, 2)', 1],
  ['concat("a", 1.5, false)', 'a1.5false'],
  ['concat("x")', 'x'],
  ['upper("abc")', 'ABC'],
  ['lower("ÄB")', 'äb'],
  ['substring("abcdef", 1, 3)', 'bc'],
  ['substring("abc", 2)', 'c'],
  ['substring("abc", 5)', ''],
  ['substring("äöü", 1, 2)', 'ö'],
  ['len("äöü")', 3],
  ['len("")', 0],
  ['format(3.14159, 2)', '3.14'],
  ['format(2, 0)', '2'],
  ['format(1234.5678, 1)', '1234.6'],
  ['now()', t0],
  ['hour()', new Date(t0).getHours()],
  ['minute(0)', new Date(0).getMinutes()],
  ['weekday()', new Date(t0).getDay()],
  ['hour(now() + 3600000) == (hour() + 1) % 24', true],
  ['quality(1)', 'Good'],
  ['isGood(1)', true],
  ['isBad(1)', false],
  ['isStale(1)', false],
  ['valueOr(1, 2)', 1],
  ['forceQuality(5, "Good")', 5],
];

for (const [text, expected] of functions) {
  test(`function: ${JSON.stringify(text)} = ${JSON.stringify(expected)}`, (t) => {
    t.deepEqual(run(text), { quality: 'Good', value: expected });
  });
}

// Each: the expression, the inputs, and a fragment the message must hold.
const faults: [string, Inputs, string][] = [
  ['1 / 0', {}, 'Division by zero: 1 / 0'],
  ['5 % 0', {}, 'division by zero: 5 % 0'],
  ['1e308 * 10', {}, '1e+308 * 10 gives Infinity'],
  ['1e308 + 1e308', {}, 'gives Infinity'],
  ['-1e308 - 1e308', {}, 'gives -Infinity'],
  ['(-8) ** 0.5', {}, '-8 ** 0.5 gives NaN'],
  ['10 ** 400', {}, '10 ** 400 gives Infinity'],
  ['1e300 / 1e-300', {}, 'gives Infinity'],
  ['sqrt(-1)', {}, 'sqrt(-1) gives NaN'],
  ['ln(0)', {}, 'ln(0) gives -Infinity'],
  ['log(-1)', {}, 'log(-1) gives NaN'],
  ['exp(1000)', {}, 'exp(1000) gives Infinity'],
  ['pow(0, -1)', {}, 'pow(0, -1) gives Infinity'],
  ['scale(5, 1, 1, 0, 10)', {}, 'scale(5, 1, 1, 0, 10) gives'],
  ['clamp(5, 10, 0)', {}, 'clamp(5, 10, 0) gives NaN'],
  ['float32(0x7FC0, 0)', {}, 'float32(32704, 0) gives NaN'],
  ['float32(0x7F80, 0)', {}, 'gives Infinity'],
  ['shl(2 ** 52, 2)', {}, 'beyond 2^53'],
  ['bit(1, 53)', {}, 'bit(): argument 2 (n) must be a whole number from 0 to 52, not 53'],
  ['bit(1.5, 0)', {}, 'bit(): argument 1 (x) must be an integer'],
  ['int32(70000, 0)', {}, 'int32(): argument 1 (hi) must be a 16-bit register value'],
  ['round(1, 16)', {}, 'round(): argument 2 (n)'],
  ['format(1, 21)', {}, 'format(): argument 2 (decimals)'],
  ['substring("abc", -1)', {}, 'substring(): argument 2 (start)'],
  ['{T/s} * 2', { 'T/s': good('x') }, "'*' needs numbers, not string and number"],
  [
    '{T/s} + 1',
    { 'T/s': good('x') },
    "'+' needs two numbers or two strings, not string and number",
  ],
  ['abs({T/s})', { 'T/s': good('x') }, 'abs(): argument 1 (x) must be a number, not a string'],
  [
    'scale({T/b}, 0, 1, 0, 1)',
    { 'T/b': good(true) },
    'scale(): argument 1 (x) must be a number, not a boolean',
  ],
  ['upper({T/n})', { 'T/n': good(3) }, 'upper(): argument 1 (s) must be a string, not 3'],
  ['{T/n} == "1"', { 'T/n': good(1) }, "'==' needs values of one type, not number and string"],
  ['{T/n} < "1"', { 'T/n': good(1) }, "'<' needs two numbers or two strings"],
  ['{T/n} && true', { 'T/n': good(1) }, "'&&' needs booleans, not a number"],
  ['!{T/n}', { 'T/n': good(1) }, "'!' needs a boolean, not a number"],
  ['-{T/s}', { 'T/s': good('x') }, "'-' needs a number, not a string"],
  ['{T/n} ? 1 : 2', { 'T/n': good(1) }, "The condition of '? :' must be true or false"],
  ['if({T/n}, 1, 2)', { 'T/n': good(1) }, 'if(): argument 1 (condition) must be true or false'],
  ['{T/n} + 1', { 'T/n': good(Number.NaN) }, 'Input T/n is Good but has the value NaN'],
  ['{T/n} + 1', { 'T/n': good(Number.POSITIVE_INFINITY) }, 'the value Infinity'],
  ['concat({T/long}, {T/long})', { 'T/long': good('x'.repeat(3000)) }, 'longer than 4096'],
  // A device's huge string is refused before it is copied, and substring() keeps the output bound.
  [
    'len({T/huge})',
    { 'T/huge': good('x'.repeat(70_000)) },
    'len() reads a string longer than 65536',
  ],
  ['upper({T/huge})', { 'T/huge': good('x'.repeat(70_000)) }, 'upper() reads a string longer'],
  ['substring({T/huge}, 0)', { 'T/huge': good('x'.repeat(70_000)) }, 'substring() reads'],
  [
    'substring({T/long}, 0)',
    { 'T/long': good('x'.repeat(5000)) },
    'substring() gives a string longer than 4096',
  ],
  [
    'forceQuality({T/x}, "Good")',
    { 'T/x': { quality: 'Bad', reason: 'Timeout' } },
    'forceQuality() has no value',
  ],
];

for (const [text, inputs, fragment] of faults) {
  test(`fault: ${JSON.stringify(text)} is Bad naming '${fragment}'`, (t) => {
    const result = run(text, inputs);
    t.is(result.quality, 'Bad');
    t.is(result.reason, 'Expression');
    t.false('value' in result);
    t.true(
      result.message?.toLowerCase().includes(fragment.toLowerCase()),
      `message '${result.message}' names '${fragment}'`,
    );
  });
}

const inputOf: Record<Quality | 'missing', ExpressionInput | undefined> = {
  Good: { quality: 'Good', value: 4 },
  Stale: { quality: 'Stale', value: 4, reason: 'NoUpdate', message: 'No update for 3000 ms.' },
  Unavailable: { quality: 'Unavailable', reason: 'Disconnected', message: 'Connection lost.' },
  Bad: { quality: 'Bad', reason: 'DeviceException', message: 'Illegal data address.' },
  missing: undefined,
};

const propagation: [Quality | 'missing', EvaluationResult][] = [
  ['Good', { quality: 'Good', value: 5 }],
  [
    'Stale',
    {
      quality: 'Stale',
      value: 5,
      reason: 'NoUpdate',
      message: 'Input T/a is Stale: No update for 3000 ms.',
    },
  ],
  [
    'Unavailable',
    {
      quality: 'Unavailable',
      reason: 'Disconnected',
      message: 'Input T/a is Unavailable: Connection lost.',
    },
  ],
  [
    'Bad',
    {
      quality: 'Bad',
      reason: 'DeviceException',
      message: 'Input T/a is Bad: Illegal data address.',
    },
  ],
  ['missing', { quality: 'Bad', reason: 'NotFound', message: 'Input T/a does not exist.' }],
];

for (const [quality, expected] of propagation) {
  test(`quality: an input ${quality} makes {T/a} + 1 ${expected.quality}`, (t) => {
    const inputs: Inputs = {};
    const input = inputOf[quality];
    if (input) inputs['T/a'] = input;
    t.deepEqual(run('{T/a} + 1', inputs), expected);
  });
}

const order: (Quality | 'missing')[] = ['Good', 'Stale', 'Unavailable', 'Bad'];
for (const a of order) {
  for (const b of order) {
    test(`quality: {T/a} ${a} and {T/b} ${b} give the worse of the two`, (t) => {
      const inputs: Inputs = {
        'T/a': inputOf[a] as ExpressionInput,
        'T/b': inputOf[b] as ExpressionInput,
      };
      const worst = order[Math.max(order.indexOf(a), order.indexOf(b))];
      const result = run('{T/a} * {T/b}', inputs);
      t.is(result.quality, worst as Quality);
      if (worst === 'Good' || worst === 'Stale') t.is(result.value, 16);
      else t.false('value' in result, 'a result without a usable input carries no value');
      // The first input met that is as bad as the result is named.
      const named = order.indexOf(a) >= order.indexOf(b) ? 'T/a' : 'T/b';
      if (worst !== 'Good') t.true(result.message?.startsWith(`Input ${named} is ${worst}`));
    });
  }
}

// Each quality handler with each input quality: the expression and its result per quality.
const handlers: [string, Record<Quality | 'missing', EvaluationResult>][] = [
  [
    'isGood({T/a})',
    {
      Good: { quality: 'Good', value: true },
      Stale: { quality: 'Good', value: false },
      Unavailable: { quality: 'Good', value: false },
      Bad: { quality: 'Good', value: false },
      missing: { quality: 'Good', value: false },
    },
  ],
  [
    'isStale({T/a})',
    {
      Good: { quality: 'Good', value: false },
      Stale: { quality: 'Good', value: true },
      Unavailable: { quality: 'Good', value: false },
      Bad: { quality: 'Good', value: false },
      missing: { quality: 'Good', value: false },
    },
  ],
  [
    'isBad({T/a})',
    {
      Good: { quality: 'Good', value: false },
      Stale: { quality: 'Good', value: false },
      Unavailable: { quality: 'Good', value: true },
      Bad: { quality: 'Good', value: true },
      missing: { quality: 'Good', value: true },
    },
  ],
  [
    'quality({T/a})',
    {
      Good: { quality: 'Good', value: 'Good' },
      Stale: { quality: 'Good', value: 'Stale' },
      Unavailable: { quality: 'Good', value: 'Unavailable' },
      Bad: { quality: 'Good', value: 'Bad' },
      missing: { quality: 'Good', value: 'Bad' },
    },
  ],
  [
    'valueOr({T/a}, -1)',
    {
      Good: { quality: 'Good', value: 4 },
      Stale: { quality: 'Good', value: -1 },
      Unavailable: { quality: 'Good', value: -1 },
      Bad: { quality: 'Good', value: -1 },
      missing: { quality: 'Good', value: -1 },
    },
  ],
  [
    'coalesce({T/a}, -1)',
    {
      Good: { quality: 'Good', value: 4 },
      Stale: {
        quality: 'Stale',
        value: 4,
        reason: 'NoUpdate',
        message: 'Input T/a is Stale: No update for 3000 ms.',
      },
      Unavailable: { quality: 'Good', value: -1 },
      Bad: { quality: 'Good', value: -1 },
      missing: { quality: 'Good', value: -1 },
    },
  ],
  [
    'forceQuality({T/a}, "Good")',
    {
      Good: { quality: 'Good', value: 4 },
      Stale: { quality: 'Good', value: 4 },
      Unavailable: {
        quality: 'Bad',
        reason: 'Expression',
        message:
          'forceQuality() has no value to mark Good: Input T/a is Unavailable: Connection lost.',
      },
      Bad: {
        quality: 'Bad',
        reason: 'Expression',
        message:
          'forceQuality() has no value to mark Good: Input T/a is Bad: Illegal data address.',
      },
      missing: {
        quality: 'Bad',
        reason: 'Expression',
        message: 'forceQuality() has no value to mark Good: Input T/a does not exist.',
      },
    },
  ],
  [
    'forceQuality({T/a}, "Bad")',
    {
      Good: { quality: 'Bad', reason: 'Expression', message: 'Quality forced to Bad.' },
      Stale: { quality: 'Bad', reason: 'Expression', message: 'Quality forced to Bad.' },
      Unavailable: { quality: 'Bad', reason: 'Expression', message: 'Quality forced to Bad.' },
      Bad: { quality: 'Bad', reason: 'Expression', message: 'Quality forced to Bad.' },
      missing: { quality: 'Bad', reason: 'Expression', message: 'Quality forced to Bad.' },
    },
  ],
];

for (const [text, byQuality] of handlers) {
  for (const quality of [...order, 'missing'] as const) {
    test(`quality: ${text} with an input ${quality}`, (t) => {
      const inputs: Inputs = {};
      const input = inputOf[quality];
      if (input) inputs['T/a'] = input;
      t.deepEqual(run(text, inputs), byQuality[quality]);
    });
  }
}

test('quality: a handled input does not hide the quality of the rest of the expression', (t) => {
  const result = run('valueOr({T/a}, 0) + {T/b}', {
    'T/a': inputOf.Bad as ExpressionInput,
    'T/b': inputOf.Stale as ExpressionInput,
  });
  t.is(result.quality, 'Stale');
  t.is(result.value, 4);
  t.true(result.message?.startsWith('Input T/b is Stale'));
});

test('quality: && || ? : and if() count only the inputs the result depends on', (t) => {
  const bad = inputOf.Bad as ExpressionInput;
  t.deepEqual(run('{T/c} || {T/x}', { 'T/c': good(true), 'T/x': bad }), {
    quality: 'Good',
    value: true,
  });
  t.deepEqual(run('{T/c} && {T/x}', { 'T/c': good(false), 'T/x': bad }), {
    quality: 'Good',
    value: false,
  });
  t.deepEqual(run('{T/c} ? 1 : {T/x}', { 'T/c': good(true), 'T/x': bad }), {
    quality: 'Good',
    value: 1,
  });
  t.deepEqual(run('if(isGood({T/x}), {T/x}, 0)', { 'T/x': bad }), { quality: 'Good', value: 0 });
  // The branch taken counts: the condition picks the Bad input.
  t.is(run('{T/c} ? {T/x} : 1', { 'T/c': good(true), 'T/x': bad }).quality, 'Bad');
  // And the deciding input always counts.
  t.is(
    run('{T/c} || true', { 'T/c': inputOf.Unavailable as ExpressionInput }).quality,
    'Unavailable',
  );
});

test('quality: every strict operator and function counts both operands, even when a fault came first', (t) => {
  const stale = inputOf.Stale as ExpressionInput;
  const result = run('1 / 0 + {T/a}', { 'T/a': stale });
  // Bad (the fault) is worse than Stale; the fault's message is kept.
  t.is(result.quality, 'Bad');
  t.is(result.message, 'Division by zero: 1 / 0.');
  t.is(run('max({T/a}, 1)', { 'T/a': stale }).quality, 'Stale');
});

test('relative references resolve against the component', (t) => {
  const compiled = program('{./Raw} * 2 + {Line1/Offset}');
  t.deepEqual(compiled.references, ['Derived/Raw', 'Line1/Offset']);
  t.is(compiled.type, 'number');
});

test('references are listed once, in order of first appearance', (t) => {
  const compiled = program('{B/y} + {A/x} + {B/y} * { A/x }');
  t.deepEqual(compiled.references, ['B/y', 'A/x']);
  const result = compiled.evaluate({
    now: t0,
    read: (index) => (index === 0 ? good(2) : good(3)),
  });
  t.deepEqual(result, { quality: 'Good', value: 11 });
});

test('the static type of an expression is inferred where it is known', (t) => {
  t.is(program('{T/a} * 2').type, 'number');
  t.is(program('bit({T/w}, 3)').type, 'boolean');
  t.is(program('concat({T/a})').type, 'string');
  t.is(program('{T/a}').type, 'any');
  t.is(program('if({T/c}, 1, 2)').type, 'number');
  t.is(program('if({T/c}, 1, "x")').type, 'any');
  t.is(program('{T/c} ? "a" : "b"').type, 'string');
  t.is(program('valueOr({T/a}, 0)').type, 'any');
  t.is(program('{T/a} + 1').type, 'number');
});

test('time-dependent and stateful expressions say so', (t) => {
  t.false(program('{T/a} + 1').timeDependent);
  t.true(program('now() - {T/a}').timeDependent);
  t.true(program('hour() > 6').timeDependent);
  t.false(program('hour({T/a})').stateful);
  const windowed = program('avg({T/a}, "5m")');
  t.true(windowed.timeDependent);
  t.true(windowed.stateful);
});

test('evaluation never throws and never reads an input it was not told about', (t) => {
  const read: number[] = [];
  const compiled = program('{A/x} + {B/y}');
  compiled.evaluate({
    now: t0,
    read: (index) => {
      read.push(index);
      return good(1);
    },
  });
  t.deepEqual(read, [0, 1]);
});
