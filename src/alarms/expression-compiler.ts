/**
 * The expression engine of the derived tags (src/expressions) behind the alarms' expression
 * port: `Expression` conditions and `suppressWhen`. An expression must give a boolean; one whose
 * inputs are not all Good, or that fails (a wrong type, a division by zero), gives no answer, so
 * the alarm keeps what it decided (an Expression condition) or its suppression stays as it is.
 * Each compiled expression keeps the state of its window functions and totalizers itself, one
 * per alarm.
 */
import type { Clock } from '../clock.js';
import { formatProblem } from '../expressions/expression-problem.js';
import { compileExpression, type ExpressionProgram } from '../expressions/program.js';
import type { TagValue } from '../tags/sample.js';
import type {
  AlarmExpression,
  AlarmExpressionCompiler,
  ExpressionOutcome,
  SampleReader,
} from './alarm-expression.js';

/**
 * Checks an alarm's expression text as the profile does: it parses and gives a boolean (or a
 * type known only when its tags are read).
 * @returns the problem, `line L, column C: …`, or undefined when it is fine.
 */
export function alarmExpressionProblem(text: string): string | undefined {
  const outcome = compileExpression(text);
  if (!outcome.ok) return formatProblem(outcome.problem);
  const type = outcome.program.type;
  if (type !== 'boolean' && type !== 'any') return `The expression gives a ${type}, not a boolean.`;
  return undefined;
}

/** The compiler of alarm expressions; `clock` gives `now()` and the windows their time. */
export function engineExpressionCompiler(clock: Pick<Clock, 'now'>): AlarmExpressionCompiler {
  return {
    compile(text) {
      const outcome = compileExpression(text);
      if (!outcome.ok) throw new Error(formatProblem(outcome.problem));
      const problem = alarmExpressionProblem(text);
      if (problem !== undefined) throw new Error(problem);
      return new EngineExpression(outcome.program, clock);
    },
  };
}

class EngineExpression implements AlarmExpression {
  readonly inputs: readonly string[];
  readonly timeDependent: boolean;
  private readonly state;

  constructor(
    private readonly program: ExpressionProgram,
    private readonly clock: Pick<Clock, 'now'>,
  ) {
    this.inputs = program.references;
    this.timeDependent = program.timeDependent;
    this.state = program.createState();
  }

  evaluate(read: SampleReader, sampling = true): ExpressionOutcome {
    const references = this.inputs;
    const result = this.program.evaluate({
      now: this.clock.now(),
      read: (index) => read(references[index] as string),
      state: this.state,
      sampling,
    });
    if (result.quality !== 'Good') {
      return {
        problem: `The expression is ${result.quality}${result.message ? `: ${result.message}` : '.'}`,
      };
    }
    if (typeof result.value !== 'boolean') {
      return { problem: `The expression gave ${describe(result.value)}, not a boolean.` };
    }
    return { value: result.value };
  }
}

function describe(value: TagValue | undefined): string {
  if (value === undefined) return 'no value';
  return typeof value === 'string'
    ? `the string "${value.slice(0, 40)}"`
    : `the ${typeof value} ${value}`;
}
