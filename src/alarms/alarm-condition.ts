/**
 * The conditions of alarms, before delays: whether the condition holds for a sample, with the
 * deadband's hysteresis, or why it cannot be told. A condition never guesses: a source that is
 * not Good (for every condition but BadQuality), a missing tag or a value of the wrong type give
 * no answer, and the alarm keeps what it last decided.
 *
 * Evaluation runs for every update of a source, so it allocates nothing on the way through:
 * each condition keeps its last value and problem in fields the alarm reads.
 */
import type { QualityReason, Sample, TagValue } from '../tags/sample.js';
import type { AlarmExpression, AlarmExpressionCompiler, SampleReader } from './alarm-expression.js';
import type { AlarmDefinition } from './alarm-schema.js';

/** Why a condition gave no answer. */
export interface ConditionProblem {
  /** Human-readable, naming the tag. */
  message: string;
  /** The source's quality reason, when a source's quality is the cause. */
  reason?: QualityReason;
}

/** A compiled condition. */
export interface Condition {
  /** Tags besides the source whose change calls for a new evaluation (setpoint, expression). */
  readonly inputs: readonly string[];
  /** It changes with time alone: evaluate it every second (Expression conditions only). */
  readonly timeDependent: boolean;
  /** What `value` is compared with, for the journal and messages. */
  readonly limit: TagValue | undefined;
  /** The value of the last evaluation that gave an answer (see {@link AlarmTransition.value}). */
  value: TagValue | undefined;
  /** Why the last evaluation gave no answer; undefined after an answer. */
  problem: ConditionProblem | undefined;
  /**
   * Whether the condition holds.
   * @param source the source's latest sample; undefined when the tag does not exist.
   * @param holding whether it held at the previous answer: the deadband's hysteresis.
   * @param sampling false when only time moved (a tick of a time-dependent expression).
   * @returns undefined when it cannot be told (then {@link problem} says why).
   */
  evaluate(
    source: Sample | undefined,
    holding: boolean,
    read: SampleReader,
    sampling: boolean,
  ): boolean | undefined;
}

/**
 * Compiles a definition's condition.
 * @param expressions compiles Expression conditions; without it they are refused.
 * @throws an Error for an Expression condition without a compiler or with an invalid text.
 */
export function compileCondition(
  definition: AlarmDefinition,
  expressions?: AlarmExpressionCompiler,
): Condition {
  const source = definition.source ?? '';
  const limit = definition.limit ?? 0;
  const deadband = definition.deadband ?? 0;
  switch (definition.condition) {
    case 'High':
    case 'HighHigh':
      return new LimitCondition(source, limit, deadband, true);
    case 'Low':
    case 'LowLow':
      return new LimitCondition(source, limit, deadband, false);
    case 'Deviation':
      return new DeviationCondition(source, limit, deadband, definition.setpoint ?? 0);
    case 'RateOfChange':
      return new RateCondition(source, limit, deadband);
    case 'Digital':
      return new DigitalCondition(source, definition.value ?? true);
    case 'BadQuality':
      return new BadQualityCondition(source);
    case 'Expression': {
      if (expressions === undefined || definition.expression === undefined) {
        throw new Error('Expression conditions are not available in this build.');
      }
      return new ExpressionCondition(expressions.compile(definition.expression));
    }
  }
}

/** Base of the conditions on one source tag. */
abstract class SourceCondition implements Condition {
  readonly inputs: readonly string[] = [];
  readonly timeDependent = false;
  value: TagValue | undefined = undefined;
  problem: ConditionProblem | undefined = undefined;
  abstract readonly limit: TagValue | undefined;

  constructor(protected readonly source: string) {}

  abstract evaluate(
    source: Sample | undefined,
    holding: boolean,
    read: SampleReader,
  ): boolean | undefined;

  /** The source's number, or undefined with {@link problem} set. */
  protected numberOf(sample: Sample | undefined, what = 'Source'): number | undefined {
    const value = this.goodValueOf(sample, this.source, what);
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || Number.isNaN(value)) {
      this.problem = {
        message: `${what} ${sample?.fullTagId} holds ${typeof value === 'number' ? 'NaN' : `a ${typeof value}`}, not a number: the condition is not evaluated.`,
      };
      return undefined;
    }
    return value;
  }

  /** A Good sample's value, or undefined with {@link problem} set. */
  protected goodValueOf(
    sample: Sample | undefined,
    path: string,
    what: string,
  ): TagValue | undefined {
    if (sample === undefined) {
      this.problem = { message: `${what} ${path} does not exist: the condition is not evaluated.` };
      return undefined;
    }
    if (sample.quality !== 'Good' || sample.value === undefined) {
      this.problem = {
        message: `${what} ${path} is ${sample.quality}${sample.reason ? ` (${sample.reason})` : ''}: the condition is not evaluated.`,
        ...(sample.reason ? { reason: sample.reason } : {}),
      };
      return undefined;
    }
    return sample.value;
  }
}

/** High and HighHigh (`above`), Low and LowLow. */
class LimitCondition extends SourceCondition {
  constructor(
    source: string,
    readonly limit: number,
    private readonly deadband: number,
    private readonly above: boolean,
  ) {
    super(source);
  }

  evaluate(sample: Sample | undefined, holding: boolean): boolean | undefined {
    const value = this.numberOf(sample);
    if (value === undefined) return undefined;
    this.value = value;
    this.problem = undefined;
    if (this.above) return holding ? value > this.limit - this.deadband : value > this.limit;
    return holding ? value < this.limit + this.deadband : value < this.limit;
  }
}

/** |value − setpoint| above the limit; the setpoint a constant or a tag. */
class DeviationCondition extends SourceCondition {
  override readonly inputs: readonly string[];

  constructor(
    source: string,
    readonly limit: number,
    private readonly deadband: number,
    private readonly setpoint: number | string,
  ) {
    super(source);
    this.inputs = typeof setpoint === 'string' ? [setpoint] : [];
  }

  evaluate(sample: Sample | undefined, holding: boolean, read: SampleReader): boolean | undefined {
    const value = this.numberOf(sample);
    if (value === undefined) return undefined;
    let setpoint: number;
    if (typeof this.setpoint === 'number') setpoint = this.setpoint;
    else {
      const path = this.setpoint;
      const reading = this.goodValueOf(read(path), path, 'Setpoint');
      if (reading === undefined) return undefined;
      if (typeof reading !== 'number' || Number.isNaN(reading)) {
        this.problem = {
          message: `Setpoint ${path} holds ${typeof reading === 'number' ? 'NaN' : `a ${typeof reading}`}, not a number: the condition is not evaluated.`,
        };
        return undefined;
      }
      setpoint = reading;
    }
    this.value = value;
    this.problem = undefined;
    const distance = Math.abs(value - setpoint);
    return holding ? distance > this.limit - this.deadband : distance > this.limit;
  }
}

/**
 * |change per second| between two consecutive Good samples (by their timestamps) above the
 * limit. The first sample after a start or an outage gives no answer: a rate needs two.
 */
class RateCondition extends SourceCondition {
  private last: Sample | undefined;
  private lastValue = 0;
  private lastTime = 0;
  private lastAnswer: boolean | undefined;

  constructor(
    source: string,
    readonly limit: number,
    private readonly deadband: number,
  ) {
    super(source);
  }

  evaluate(sample: Sample | undefined, holding: boolean): boolean | undefined {
    // The same sample again (a re-evaluation without a new reading): the same answer.
    if (sample !== undefined && sample === this.last) return this.lastAnswer;
    const value = this.numberOf(sample);
    if (value === undefined) {
      this.last = undefined;
      this.lastAnswer = undefined;
      return undefined;
    }
    const time = Date.parse((sample as Sample).utcTimestamp);
    const previous = this.last;
    const elapsedMs = time - this.lastTime;
    if (previous === undefined || !(elapsedMs > 0)) {
      // The first reading, or one not later than the last: no rate to tell yet.
      this.last = sample;
      this.lastValue = value;
      this.lastTime = time;
      if (previous === undefined) {
        this.lastAnswer = undefined;
        this.problem = {
          message: `Waiting for a second reading of ${this.source} to tell its rate of change.`,
        };
      }
      return this.lastAnswer;
    }
    const rate = Math.abs(value - this.lastValue) / (elapsedMs / 1000);
    this.last = sample;
    this.lastValue = value;
    this.lastTime = time;
    this.value = rate;
    this.problem = undefined;
    this.lastAnswer = holding ? rate > this.limit - this.deadband : rate > this.limit;
    return this.lastAnswer;
  }
}

/** The source equals the alarm value (same type and value). */
class DigitalCondition extends SourceCondition {
  constructor(
    source: string,
    readonly limit: TagValue,
  ) {
    super(source);
  }

  evaluate(sample: Sample | undefined): boolean | undefined {
    const value = this.goodValueOf(sample, this.source, 'Source');
    if (value === undefined) return undefined;
    this.value = value;
    this.problem = undefined;
    return value === this.limit;
  }
}

/**
 * The source is not Good, or missing: the one condition a source's quality answers. A tag not
 * read yet since its driver started (NeverRead) gives no answer: it has not left Good, and
 * counting it would raise every BadQuality alarm at each start; the driver's first failed
 * attempt (Disconnected, Timeout…) counts.
 */
class BadQualityCondition implements Condition {
  readonly inputs: readonly string[] = [];
  readonly timeDependent = false;
  readonly limit = undefined;
  value: TagValue | undefined = undefined;
  problem: ConditionProblem | undefined = undefined;

  constructor(private readonly source: string) {}

  evaluate(sample: Sample | undefined): boolean | undefined {
    if (sample?.reason === 'NeverRead') {
      this.problem = {
        message: `Source ${this.source} has not been read yet: the condition is not evaluated.`,
        reason: 'NeverRead',
      };
      return undefined;
    }
    this.value = sample === undefined ? 'Missing' : sample.quality;
    this.problem = undefined;
    return sample === undefined || sample.quality !== 'Good';
  }
}

/** A boolean expression of the derived-tags engine. */
class ExpressionCondition implements Condition {
  readonly limit = undefined;
  value: TagValue | undefined = undefined;
  problem: ConditionProblem | undefined = undefined;

  constructor(private readonly expression: AlarmExpression) {}

  get inputs(): readonly string[] {
    return this.expression.inputs;
  }

  get timeDependent(): boolean {
    return this.expression.timeDependent;
  }

  evaluate(
    _source: Sample | undefined,
    _holding: boolean,
    read: SampleReader,
    sampling: boolean,
  ): boolean | undefined {
    const outcome = this.expression.evaluate(read, sampling);
    if (outcome.problem !== undefined) {
      this.problem = { message: outcome.problem };
      return undefined;
    }
    this.value = outcome.value;
    this.problem = undefined;
    return outcome.value;
  }
}
