/**
 * The expression language's entry point: {@link compileExpression} checks a text (scan.ts, then
 * jsep through jsep-grammar.ts, then check.ts) and compiles it (compile.ts) into an
 * {@link ExpressionProgram}, or answers the first problem with its line and column. A program
 * is pure: it reads inputs only through the function it is given, keeps stateful functions'
 * history only in the {@link ExpressionState} it is given, and does no I/O.
 */
import type { Quality, TagValue } from '../tags/sample.js';
import { type CheckedExpression, checkTree } from './check.js';
import { type CompiledExpression, compileTree } from './compile.js';
import { EvalContext, type ExpressionInput, qualityByRank } from './evaluation-context.js';
import { ExpressionFault, type ExpressionProblem, problemAt } from './expression-problem.js';
import { ExpressionState } from './expression-state.js';
import type { StaticType } from './functions.js';
import { parseWithJsep } from './jsep-grammar.js';
import { scanExpression } from './scan.js';

/** Options of {@link compileExpression}. */
export interface CompileOptions {
  /**
   * The component `{./Name}` references resolve against: a derived tag's driver name. Default:
   * none (relative references are refused).
   */
  component?: string;
}

/** A compiled expression, or the problem that refused it. */
export type CompileOutcome =
  | { ok: true; program: ExpressionProgram }
  | { ok: false; problem: ExpressionProblem };

/** What one evaluation reads and when. */
export interface EvaluationEnvironment {
  /** Evaluation time, epoch ms. */
  now: number;
  /** The input of the program's reference `index` (see {@link ExpressionProgram.references}). */
  read(index: number): ExpressionInput | undefined;
  /**
   * State of the stateful functions, from {@link ExpressionProgram.createState}; kept by the
   * caller between evaluations. Default: a fresh state (a window of this one evaluation).
   */
  state?: ExpressionState;
  /**
   * Whether stateful functions take a sample now (an input changed, an interval elapsed); false
   * when only time moved (they advance in time, sums and counts do not grow). Default true.
   */
  sampling?: boolean;
}

/** The outcome of one evaluation. */
export interface EvaluationResult {
  quality: Quality;
  /** Absent for Unavailable and Bad. */
  value?: TagValue;
  /** Why the quality is not Good: an input's reason, `NotFound`, or `Expression`. */
  reason?: string;
  /** Human text of the reason. */
  message?: string;
}

/** A checked, compiled expression; see the module comment. */
export class ExpressionProgram {
  /** Tags the expression reads, fullTagIds, in order of first appearance. */
  readonly references: readonly string[];
  /** What it gives as far as known without the inputs (`any`: depends on a tag's type). */
  readonly type: StaticType;
  /** Whether it changes with time alone (`now`, window functions): evaluate it every second. */
  readonly timeDependent: boolean;
  /** Whether it has window functions or totalizers, whose state the caller keeps. */
  readonly stateful: boolean;
  /** Nodes of its syntax tree. */
  readonly nodeCount: number;
  private readonly compiled: CompiledExpression;

  /** @internal use {@link compileExpression}. */
  constructor(
    readonly text: string,
    checked: CheckedExpression,
    compiled: CompiledExpression,
  ) {
    this.references = checked.references;
    this.type = checked.root.type;
    this.nodeCount = checked.nodeCount;
    this.compiled = compiled;
    this.timeDependent = compiled.timeDependent;
    this.stateful = compiled.slots.length > 0;
  }

  /** A fresh state for the stateful functions (empty windows, totals at 0). */
  createState(): ExpressionState {
    return new ExpressionState(this.compiled.slots);
  }

  /** Evaluates the expression once. Never throws for anything the inputs hold. */
  evaluate(environment: EvaluationEnvironment): EvaluationResult {
    const state = environment.state ?? this.createState();
    const context = new EvalContext(
      environment.now,
      environment.read,
      this.references,
      state,
      environment.sampling ?? true,
    );
    const samplers = this.compiled.samplers;
    for (let i = 0; i < samplers.length; i++) samplers[i]?.(context);
    const value = this.compiled.root(context);
    const rank = context.rank;
    if (value !== undefined && rank < 2) {
      if (rank === 0) return { quality: 'Good', value };
      return {
        quality: qualityByRank[rank] as Quality,
        value,
        ...(context.reason !== undefined ? { reason: context.reason } : {}),
        ...(context.message !== undefined ? { message: context.message } : {}),
      };
    }
    if (rank < 2) {
      return { quality: 'Bad', reason: 'Expression', message: 'The expression gave no value.' };
    }
    return {
      quality: qualityByRank[rank] as Quality,
      ...(context.reason !== undefined ? { reason: context.reason } : {}),
      ...(context.message !== undefined ? { message: context.message } : {}),
    };
  }
}

/**
 * Checks and compiles an expression. Nothing of the text is evaluated before it passed every
 * check (see limits.ts for the bounds).
 */
export function compileExpression(text: string, options: CompileOptions = {}): CompileOutcome {
  if (typeof text !== 'string') {
    return { ok: false, problem: problemAt('', 0, 'The expression must be a string.') };
  }
  try {
    scanExpression(text);
    const checked = checkTree(parseWithJsep(text, options.component), text);
    const compiled = compileTree(checked.root, checked.references);
    return { ok: true, program: new ExpressionProgram(text, checked, compiled) };
  } catch (error) {
    if (error instanceof ExpressionFault) {
      return { ok: false, problem: problemAt(text, error.index, error.reason, error.expected) };
    }
    throw error;
  }
}
