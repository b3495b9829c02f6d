/**
 * The port through which alarms use boolean expressions (`Expression` conditions and
 * `suppressWhen`): the derived-tags engine implements it; alarms depend only on this.
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
  /** Evaluates it on the store's current samples. */
  evaluate(read: SampleReader): ExpressionOutcome;
}

/** Compiles expression texts. */
export interface AlarmExpressionCompiler {
  /** @throws an Error whose message says what is wrong with the text. */
  compile(text: string): AlarmExpression;
}
