/**
 * The stateful functions on an injected time line: window edges, samples versus time-only
 * re-evaluations, counter resets and rollovers, gaps while an input has no value, and a
 * totalizer's total surviving a restart through the state the caller keeps. Every expected
 * figure is worked out by hand in the comment beside it.
 */
import { readFile } from 'node:fs/promises';
import test from 'ava';
import type { ExpressionInput } from '../../src/expressions/evaluation-context.js';
import type { ExpressionState } from '../../src/expressions/expression-state.js';
import { functionSpecs } from '../../src/expressions/functions.js';
import { compileExpression, type EvaluationResult } from '../../src/expressions/program.js';

const t0 = Date.UTC(2026, 0, 1);
const second = 1000;
const minute = 60 * second;

/** One expression evaluated over time, as a derived tag would: its state kept between calls. */
class Timeline {
  now = t0;
  readonly inputs: Record<string, ExpressionInput> = {};
  state: ExpressionState;
  private readonly program;

  constructor(text: string) {
    const outcome = compileExpression(text);
    if (!outcome.ok) throw new Error(outcome.problem.message);
    this.program = outcome.program;
    this.state = this.program.createState();
  }

  /** Sets an input Good (or without a value, for undefined) and evaluates: a sample. */
  set(id: string, value: number | boolean | undefined): EvaluationResult {
    this.inputs[id] =
      value === undefined
        ? { quality: 'Bad', reason: 'Disconnected', message: 'Lost.' }
        : { quality: 'Good', value };
    return this.evaluate(true);
  }

  /** Moves time on by `ms`. */
  advance(ms: number): this {
    this.now += ms;
    return this;
  }

  /** Evaluates now; `sampling` false: a re-evaluation because time moved. */
  evaluate(sampling = true): EvaluationResult {
    const { program } = this;
    return program.evaluate({
      now: this.now,
      read: (index) => this.inputs[program.references[index] as string],
      state: this.state,
      sampling,
    });
  }

  value(sampling = false): number | boolean | string | undefined {
    return this.evaluate(sampling).value;
  }
}

test('avg is time-weighted over the window, and forgets what left it', (t) => {
  const line = new Timeline('avg({P/x}, "2m")');
  t.is(line.set('P/x', 0).value, 0); // one value so far: itself
  line.advance(minute);
  line.set('P/x', 10);
  t.is(line.advance(minute).value(), 5); // 0 for 60 s, 10 for 60 s: (0·60 + 10·60) / 120
  t.is(line.advance(30 * second).value(), 7.5); // window 30 s…150 s: 0 for 30 s, 10 for 90 s
  t.is(line.advance(30 * second).value(), 10); // window starts at 60 s exactly: only 10
  t.is(line.advance(10 * minute).value(), 10);
});

test('avg over less history than the window averages the time covered so far', (t) => {
  const line = new Timeline('avg({P/x}, "1h")');
  line.set('P/x', 4);
  line.advance(10 * second);
  line.set('P/x', 8);
  t.is(line.advance(30 * second).value(), 7); // (4·10 + 8·30) / 40
});

test('min and max keep the extremes in force within the window', (t) => {
  const line = new Timeline('concat(min({P/x}, "1m"), "/", max({P/x}, "1m"))');
  line.set('P/x', 5);
  line.advance(10 * second);
  line.set('P/x', -3);
  line.advance(10 * second);
  t.is(line.set('P/x', 9).value, '-3/9');
  // At 70 s the window is 10 s…70 s: 5 held until 10 s, so it left; -3 (10–20 s) stays.
  t.is(line.advance(50 * second).value(), '-3/9');
  // At 81 s the window starts at 21 s: only 9 (from 20 s) is in force within it.
  t.is(line.advance(11 * second).value(), '9/9');
});

test('sum and count take one sample per input evaluation, none when only time moved', (t) => {
  const line = new Timeline('concat(sum({P/x}, "10s"), "/", count({P/x}, "10s"))');
  line.set('P/x', 2);
  line.advance(second);
  line.set('P/x', 3);
  line.advance(second);
  t.is(line.set('P/x', 3).value, '8/3'); // three samples, even with an unchanged value
  t.is(line.advance(second).value(false), '8/3'); // a time-only re-evaluation is no sample
  // At 11 s the window is (1 s, 11 s]: the samples at 0 s and 1 s left it.
  t.is(line.advance(8 * second).value(false), '3/1');
  // At 12 s the sample at 2 s is at the window's (open) start: gone too.
  t.is(line.advance(second).value(false), '0/0');
});

test('stddev is the time-weighted population standard deviation', (t) => {
  const line = new Timeline('stddev({P/x}, "2m")');
  t.is(line.set('P/x', 0).value, 0);
  line.advance(minute);
  line.set('P/x', 10);
  // 0 and 10 for a minute each: mean 5, variance (25 + 25) / 2 = 25.
  t.is(line.advance(minute).value(), 5);
});

test('rate and delta of a counter: increases per second, resets counted from zero', (t) => {
  const line = new Timeline('concat(rate({C/n}, "1m"), " ", delta({C/n}, "1m"))');
  line.set('C/n', 100);
  line.advance(10 * second);
  line.set('C/n', 150); // +50
  line.advance(10 * second);
  line.set('C/n', 20); // a reset: +20 (counted from 0)
  // 70 over the 20 s covered so far.
  t.is(line.advance(0).value(), '3.5 70');
  // At 60 s the window covers 0…60 s: still 70 over 60 s.
  t.is(line.advance(40 * second).value(), `${70 / 60} 70`);
  // At 75 s the window starts at 15 s: the +50 (at 10 s) left it; +20 (at 20 s) over 60 s.
  t.is(line.advance(15 * second).value(), `${20 / 60} 20`);
  // A stopped counter: its rate falls to 0 once its last increase left the window.
  t.is(line.advance(minute).value(), '0 0');
});

test('rate and delta with a modulus treat a lower value as a rollover', (t) => {
  const line = new Timeline('delta({C/n}, "1h", 65536)');
  line.set('C/n', 65530);
  line.advance(second);
  t.is(line.set('C/n', 4).value, 10); // 65530 → 65535 → 0 → 4: 6 + 4
  line.advance(second);
  t.is(line.set('C/n', 14).value, 20);
  const rate = new Timeline('rate({C/n}, "1m", 65536)');
  rate.set('C/n', 65530);
  rate.advance(10 * second);
  t.is(rate.set('C/n', 4).value, 1); // 10 counts in 10 s
});

test('onTime counts the seconds a condition was true within the window', (t) => {
  const line = new Timeline('onTime({M/run}, "1m")');
  line.set('M/run', true);
  line.advance(30 * second);
  line.set('M/run', false);
  t.is(line.advance(30 * second).value(), 30);
  line.set('M/run', true);
  // At 80 s the window is 20 s…80 s: true 20–30 s and 60–80 s.
  t.is(line.advance(20 * second).value(), 30);
  t.is(line.advance(minute).value(), 60);
});

test('changes counts value changes, not samples', (t) => {
  const line = new Timeline('changes({M/state}, "1m")');
  line.set('M/state', 1);
  line.advance(second);
  line.set('M/state', 1);
  line.advance(second);
  line.set('M/state', 2);
  line.advance(second);
  t.is(line.set('M/state', 1).value, 2);
  // At 62 s the window is (2 s, 62 s]: the change at 2 s left it, the one at 3 s is in.
  t.is(line.advance(59 * second).value(), 1);
});

test('integrate totals over time, grows while the value holds, and continues after a restart', (t) => {
  const line = new Timeline('integrate({F/flow}, "h")');
  t.is(line.set('F/flow', 3600).value, 0); // m³/h
  t.is(line.advance(10 * second).value(), 10); // 3600 m³/h for 10 s: 10 m³
  line.set('F/flow', 7200);
  t.is(line.advance(5 * second).value(), 20); // + 7200 m³/h for 5 s
  const saved = line.state.totals();
  t.deepEqual(saved, { 'integrate#0': 20 });

  // A restart: a new state restored from the saved totals. The time the daemon was stopped is
  // not integrated (nothing is known of it).
  const restarted = new Timeline('integrate({F/flow}, "h")');
  restarted.now = line.now + 10 * minute;
  restarted.state.restoreTotals(saved);
  t.is(restarted.set('F/flow', 3600).value, 20);
  t.is(restarted.advance(second).value(), 21);
});

test('integrate adds nothing while its input has no value, and is Bad meanwhile', (t) => {
  const line = new Timeline('integrate({F/flow}, "s")');
  line.set('F/flow', 2);
  line.advance(10 * second);
  const lost = line.set('F/flow', undefined);
  t.is(lost.quality, 'Bad');
  t.is(lost.reason, 'Disconnected');
  t.false('value' in lost);
  line.advance(100 * second);
  line.set('F/flow', 1);
  t.is(line.advance(5 * second).value(), 25); // 2·10 + nothing for 100 s + 1·5
});

test('a window average is over the time its input had a value; the result follows its quality', (t) => {
  const line = new Timeline('avg({P/x}, "1h")');
  line.set('P/x', 10);
  line.advance(10 * minute);
  t.is(line.set('P/x', undefined).quality, 'Bad');
  line.advance(30 * minute);
  line.set('P/x', 20);
  // 10 for 10 min, no value for 30 min, 20 for 10 min: (100 + 200) / 20.
  t.is(line.advance(10 * minute).value(), 15);
});

test('window functions sample their input whatever branch the expression takes', (t) => {
  const line = new Timeline('if({M/show}, avg({P/x}, "1m"), -1)');
  line.inputs['M/show'] = { quality: 'Good', value: false };
  line.set('P/x', 0);
  line.advance(30 * second);
  t.is(line.set('P/x', 10).value, -1);
  line.inputs['M/show'] = { quality: 'Good', value: true };
  t.is(line.advance(30 * second).value(), 5); // 0 for 30 s, 10 for 30 s
});

test('window functions nest: an average of a rate', (t) => {
  const line = new Timeline('avg(rate({C/n}, "10s"), "1m")');
  line.set('C/n', 0);
  for (let i = 1; i <= 6; i++) {
    line.advance(10 * second);
    line.set('C/n', i * 50); // 5 per second
  }
  t.is(line.value(), 5 * (50 / 60) + 0 * (10 / 60));
});

test('two calls of one function keep two states; totals are keyed by their order', (t) => {
  const outcome = compileExpression('integrate({A/x}, "s") + integrate({A/x}, "m")');
  t.true(outcome.ok);
  if (!outcome.ok) return;
  const state = outcome.program.createState();
  state.restoreTotals({ 'integrate#0': 1, 'integrate#1': 2, other: 5, 'integrate#2': 'x' });
  t.deepEqual(state.totals(), { 'integrate#0': 1, 'integrate#1': 2 });
});

test('a stateful function evaluated without a state sees a window of one evaluation', (t) => {
  const outcome = compileExpression('avg({P/x}, "5m")');
  t.true(outcome.ok);
  if (!outcome.ok) return;
  const read = () => ({ quality: 'Good' as const, value: 42 });
  t.deepEqual(outcome.program.evaluate({ now: t0, read }), { quality: 'Good', value: 42 });
});

test('a window function over a value of the wrong type is Bad naming it', (t) => {
  const line = new Timeline('avg({P/x}, "1m")');
  const result = line.set('P/x', true);
  t.is(result.quality, 'Bad');
  t.is(result.message, 'avg(): argument 1 (x) must be a number, not a boolean.');
  const onTime = new Timeline('onTime({P/x}, "1m")');
  t.is(onTime.set('P/x', 1).message, 'onTime(): argument 1 (x) must be a boolean, not 1.');
});

// Each: the text and a fragment of the refusal.
const refusedArguments: [string, string][] = [
  ['avg({P/x}, "5 minutes")', 'avg(): argument 2 (window) must be a window such as "30s"'],
  ['avg({P/x}, {P/w})', 'avg(): argument 2 (window) must be a window'],
  ['avg({P/x}, "500ms")', 'must be from 1s to 31d'],
  ['avg({P/x}, "32d")', 'must be from 1s to 31d'],
  ['avg({P/x})', 'avg() takes 2 arguments, not 1: avg(x, window)'],
  ['integrate({P/x}, "ms")', 'integrate(): argument 2 (unit) must be "s", "m", "h" or "d"'],
  ['integrate({P/x}, "week")', 'must be "s", "m", "h" or "d"'],
  ['rate({C/n}, "1m", {C/max})', 'argument 3 (modulus) must be a whole number ≥ 2'],
  ['rate({C/n}, "1m", 1.5)', 'argument 3 (modulus) must be a whole number ≥ 2'],
  ['forceQuality({P/x}, "Great")', 'must be "Good", "Stale", "Unavailable" or "Bad"'],
  ['onTime(1, "1h")', 'onTime(): argument 1 (x) must be a boolean, not a number'],
  ['abs()', 'abs() takes 1 argument, not 0: abs(x)'],
  ['round(1, 2, 3)', 'round() takes 1 to 2 arguments, not 3: round(x, [n])'],
  ['min(1)', 'min() takes at least 2 arguments, not 1'],
  ['concat()', 'concat() takes at least 1 argument, not 0'],
  ['now(1)', 'now() takes 0 arguments, not 1'],
  ['abs("x")', 'abs(): argument 1 (x) must be a number, not a string'],
  ['upper(1)', 'upper(): argument 1 (s) must be a string, not a number'],
  ['bit(true, 1)', 'bit(): argument 1 (x) must be a number, not a boolean'],
  ['if(1, 2, 3)', 'if(): argument 1 (condition) must be a boolean, not a number'],
  ['"a" - 1', "'-' needs a number, not a string"],
  ['true + 1', "'+' adds numbers or joins strings, not booleans"],
  ['"a" + 1', "'+' needs two numbers or two strings, not string and number"],
  ['1 < "a"', "'<' compares two numbers or two strings, not number and string"],
  ['true < false', "'<' compares numbers or strings, not booleans"],
  ['1 == "1"', "'==' compares values of one type, not number and string"],
  ['1 && true', "'&&' needs a boolean, not a number"],
  ['!1', "'!' needs a boolean, not a number"],
  ['-"a"', "'-' needs a number, not a string"],
  ['1 ? 2 : 3', "The condition of '? :' needs a boolean, not a number"],
  ['abs', "'abs' is a function: call it with its arguments in parentheses"],
  ['Line1', "Unknown name 'Line1': tags are read as {Line1/Pump/Speed}"],
];

for (const [text, fragment] of refusedArguments) {
  test(`refused when compiled: ${text}`, (t) => {
    const outcome = compileExpression(text);
    t.false(outcome.ok);
    if (!outcome.ok) t.true(outcome.problem.message.includes(fragment), outcome.problem.message);
  });
}

test('docs/derived-tags.md documents every function with an example, and no function that does not exist', async (t) => {
  const page = await readFile(new URL('../../docs/derived-tags.md', import.meta.url), 'utf8');
  const start = page.indexOf('# Derived tags');
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end === -1 ? undefined : end);
  const rows = [...section.matchAll(/^\| `(\w+)\(([^`]*)\)` \| .+ \| `(.+)` \|$/gm)];
  const documented = rows.map((row) => `${row[1]}(${row[2]})`);
  const expected = [...functionSpecs.values()].map((spec) => {
    const names = spec.params.map((p) => (p.optional ? `[${p.name}]` : p.name));
    if (spec.rest) names.push('…');
    return `${spec.name}(${names.join(', ')})`;
  });
  t.deepEqual(documented.sort(), expected.sort());
  for (const row of rows) {
    const example = row[3] as string;
    const outcome = compileExpression(example);
    t.true(outcome.ok, `the example ${example} compiles`);
  }
});
