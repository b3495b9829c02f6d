/**
 * The port through which alarms use boolean expressions (`Expression` conditions and
 * `suppressWhen`): the derived-tags engine implements it (expression-compiler.ts); the alarm
 * model depends only on this.
 */
import type { Sample } from '../tags/sample.js';

/** Reads the latest sample of a tag from the store; undefined for an unknown tag. */
export type SampleReader = (fullTagId: string) => Sample | undefined;

/** The outcome of one evaluation: a boolean, or why there is none. */
export type ExpressionOutcome =
  | { value: boolean; problem?: undefined }
  /** An input is not Good, missing, or of the wrong type: the result is unknown, not false. */
  | { value?: undefined; problem: string };

/** A compiled boolean expression. */
export interface AlarmExpression {
  /** The tag paths it reads: the alarm evaluates it again when one of them changes. */
  readonly inputs: readonly string[];
  /** It changes with time alone (`now()`, `hour()`, window functions): evaluate it every second. */
  readonly timeDependent: boolean;
  /**
   * Evaluates it on the store's current samples.
   * @param sampling false when only time moved (window functions advance, take no sample).
   *   Default true.
   */
  evaluate(read: SampleReader, sampling?: boolean): ExpressionOutcome;
}

/** Compiles expression texts. */
export interface AlarmExpressionCompiler {
  /** @throws an Error whose message says what is wrong with the text. */
  compile(text: string): AlarmExpression;
}
