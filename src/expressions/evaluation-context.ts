/**
 * What one evaluation carries while the compiled closures run: the inputs, the time, the state
 * of the stateful functions, and the worst quality met so far. Quality is not carried on each
 * value: a closure that reads an input or fails lowers the context's quality (Bad >
 * Unavailable > Stale > Good), and the functions that handle quality themselves (`isGood`,
 * `valueOr`, `forceQuality`, …) evaluate their argument with the quality saved and restored.
 */
import type { Quality, TagValue } from '../tags/sample.js';
import type { ExpressionState } from './expression-state.js';
import type { Value } from './value.js';

export type { Value } from './value.js';

/** What an expression reads of a tag: a Sample has this shape. */
export interface ExpressionInput {
  quality: Quality;
  /** Absent for Unavailable and Bad. */
  value?: TagValue;
  reason?: string;
  message?: string;
}

/** A compiled sub-expression. */
export type Evaluator = (context: EvalContext) => Value;

/** Quality by rank: 0 Good, 1 Stale, 2 Unavailable, 3 Bad. */
export const qualityByRank: readonly Quality[] = ['Good', 'Stale', 'Unavailable', 'Bad'];

/** The rank of a quality (worse is higher). */
export function rankOf(quality: Quality): number {
  switch (quality) {
    case 'Good':
      return 0;
    case 'Stale':
      return 1;
    case 'Unavailable':
      return 2;
    default:
      return 3;
  }
}

/** Rank of Bad. */
export const badRank = 3;

/** The state of one evaluation; see the module comment. */
export class EvalContext {
  /** Worst quality rank met so far. */
  rank = 0;
  /** Reason of {@link rank}: the input's (`Disconnected`, `NoUpdate`), `NotFound`, `Expression`. */
  reason: string | undefined = undefined;
  /** Human text of {@link rank}. */
  message: string | undefined = undefined;

  constructor(
    /** Evaluation time, epoch ms. */
    readonly now: number,
    /** The input of a tag reference, by its index in the program's `references`. */
    readonly read: (reference: number) => ExpressionInput | undefined,
    /** The program's tag references, fullTagIds. */
    readonly references: readonly string[],
    /** State of the stateful functions. */
    readonly state: ExpressionState,
    /** Whether stateful functions take a sample (false: only time moved). */
    readonly sampling: boolean,
  ) {}

  /** Lowers the quality to `rank` when it is worse than the current one (the first cause stays). */
  degrade(rank: number, reason: string | undefined, message: string | undefined): void {
    if (rank > this.rank) {
      this.rank = rank;
      this.reason = reason;
      this.message = message;
    }
  }

  /** Marks the evaluation Bad (reason `Expression`) with a message naming the operation. */
  fail(message: string): undefined {
    this.degrade(badRank, 'Expression', message);
    return undefined;
  }
}

/** The type of a value as messages name it. */
export function typeName(value: Value): string {
  return value === undefined ? 'nothing' : typeof value;
}

/** Adds `a` or `an`. */
export function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** The input a tag value may be, as a finite check: NaN and infinities are no value. */
export function isUsableValue(value: TagValue | undefined): value is TagValue {
  return typeof value === 'number' ? Number.isFinite(value) : value !== undefined;
}
