/**
 * One alarm's life cycle (ISA-18.2, OPC UA Part 9; the diagram is in alarm-state.ts): its
 * condition with on/off delays, latching and re-alarm, the operator's acknowledgement, shelving
 * (timed, or one-shot until the alarm clears, never longer than maxShelveMinutes), suppression by
 * design and out of service. Time and timers come from the injected clock; every transition is
 * handed to the sink, which journals it before anything shows it.
 *
 * A source that is not Good is not guessed about: the alarm keeps what it last decided, pending
 * delays are dropped (the condition must hold anew on Good data), and {@link Alarm.problem} says
 * why; the state tags show it (see alarm-service.ts).
 */
import type { Clock, TimerHandle } from '../clock.js';
import { ConflictError, ValidationError } from '../errors.js';
import type { Sample } from '../tags/sample.js';
import { type Condition, type ConditionProblem, compileCondition } from './alarm-condition.js';
import type { AlarmExpression, AlarmExpressionCompiler, SampleReader } from './alarm-expression.js';
import { messageTemplate, renderMessage } from './alarm-message.js';
import { type AlarmDefinition, defaultSeverity } from './alarm-schema.js';
import {
  type AlarmEvent,
  type AlarmSnapshot,
  type AlarmState,
  type AlarmTransition,
  initialSnapshot,
  type Shelve,
  stateOf,
} from './alarm-state.js';

/** Where an alarm reports. */
export interface AlarmSink {
  /** A transition happened (the alarm's snapshot already shows its outcome). */
  transition(alarm: Alarm, transition: AlarmTransition): void;
  /**
   * What the alarm shows changed without a transition: its condition became evaluable or stopped
   * being so, or it was first evaluated.
   */
  changed(alarm: Alarm): void;
}

/** What an {@link Alarm} works with. */
export interface AlarmDeps {
  clock: Clock;
  sink: AlarmSink;
  /** Reads tags besides the source: a Deviation's setpoint, an expression's inputs. */
  read: SampleReader;
  /** Compiles Expression conditions and suppressWhen; without it they are refused. */
  expressions?: AlarmExpressionCompiler;
}

/** An operator action's who and why. */
export interface ActionBy {
  account?: string;
  comment?: string;
}

/** How to shelve. */
export interface ShelveRequest extends ActionBy {
  kind: 'Timed' | 'OneShot';
  /**
   * Timed: how long, ms (1 ms to maxShelveMinutes). OneShot: ignored; it ends when the alarm
   * clears, at most after maxShelveMinutes.
   */
  durationMs?: number;
}

/** An alarm's state machine. Construct, {@link start}, feed it samples, {@link stop}. */
export class Alarm {
  readonly definition: AlarmDefinition;
  private readonly condition: Condition;
  private readonly suppression: AlarmExpression | undefined;
  private readonly template: string;
  private readonly severity: number;
  private snapshotState: AlarmSnapshot;
  /** The condition's last answer (before delays); undefined while it cannot be told. */
  private raw: boolean | undefined;
  private conditionProblem: ConditionProblem | undefined = { message: 'Not evaluated yet.' };
  private unit: string | undefined;
  private onTimer: TimerHandle | undefined;
  private offTimer: TimerHandle | undefined;
  private reAlarmTimer: TimerHandle | undefined;
  private shelveTimer: TimerHandle | undefined;
  private running = false;

  /**
   * @param snapshot the state kept from before a restart; default: a new alarm.
   * @throws an Error when an Expression condition or suppressWhen cannot be compiled.
   */
  constructor(
    definition: AlarmDefinition,
    private readonly deps: AlarmDeps,
    snapshot?: AlarmSnapshot,
  ) {
    this.definition = definition;
    this.condition = compileCondition(definition, deps.expressions);
    if (definition.suppressWhen !== undefined) {
      if (deps.expressions === undefined) {
        throw new Error('suppressWhen needs expressions, which this build does not have.');
      }
      this.suppression = deps.expressions.compile(definition.suppressWhen);
    }
    this.template = messageTemplate(definition.condition, definition.message);
    this.severity = definition.severity ?? defaultSeverity[definition.priority];
    this.snapshotState = snapshot ? structuredClone(snapshot) : initialSnapshot();
  }

  /** The alarm's name. */
  get name(): string {
    return this.definition.name;
  }

  /** The tags whose change calls for a new evaluation of the condition, besides the source. */
  get inputs(): readonly string[] {
    return this.condition.inputs;
  }

  /** The tags suppressWhen reads. */
  get suppressionInputs(): readonly string[] {
    return this.suppression?.inputs ?? [];
  }

  /**
   * The condition or suppressWhen changes with time alone (`now()`, window functions): call
   * {@link tick} every second.
   */
  get timeDependent(): boolean {
    return this.condition.timeDependent || this.suppression?.timeDependent === true;
  }

  /** What the alarm shows. */
  get state(): AlarmState {
    return stateOf(this.snapshotState);
  }

  /** Why the condition cannot be told now; undefined while it can. */
  get problem(): ConditionProblem | undefined {
    return this.conditionProblem;
  }

  /** The source's unit, as its last sample had it. */
  get sourceUnit(): string | undefined {
    return this.unit;
  }

  /** The severity in force: the definition's, else its priority's. */
  get effectiveSeverity(): number {
    return this.severity;
  }

  /** A copy of the state to keep across a restart. */
  snapshot(): AlarmSnapshot {
    return structuredClone(this.snapshotState);
  }

  /** The state as it is (read only: do not change it). */
  get current(): Readonly<AlarmSnapshot> {
    return this.snapshotState;
  }

  /** The message as the alarm shows it now. */
  message(): string {
    return renderMessage(this.template, {
      name: this.name,
      value: this.snapshotState.value,
      limit: this.snapshotState.limit ?? this.condition.limit,
      unit: this.unit,
    });
  }

  /**
   * Arms the timers a restored state needs: the end of a shelve (at once when it ended while
   * tagd was stopped), re-alarm. Idempotent.
   */
  start(): void {
    if (this.running) return;
    this.running = true;
    const shelve = this.snapshotState.shelve;
    if (shelve !== undefined) this.armShelveTimer(shelve);
    this.updateReAlarm();
  }

  /**
   * Puts back a state taken with {@link snapshot} (an operator action whose journal write
   * failed is undone), with the shelve and re-alarm timers it needs.
   */
  restore(snapshot: AlarmSnapshot): void {
    this.snapshotState = structuredClone(snapshot);
    this.clearTimer('reAlarm');
    this.deps.clock.clearTimer(this.shelveTimer);
    this.shelveTimer = undefined;
    if (this.running && snapshot.shelve !== undefined) this.armShelveTimer(snapshot.shelve);
    this.updateReAlarm();
  }

  /** Clears every timer. Idempotent; the state stays as it is. */
  stop(): void {
    this.running = false;
    for (const timer of [this.onTimer, this.offTimer, this.reAlarmTimer, this.shelveTimer]) {
      this.deps.clock.clearTimer(timer);
    }
    this.onTimer = this.offTimer = this.reAlarmTimer = this.shelveTimer = undefined;
  }

  /**
   * Evaluates the condition on the source's latest sample (and the other inputs, read).
   * @param source undefined when the source tag does not exist.
   * @param sampling false when only time moved (see {@link tick}).
   */
  evaluate(source: Sample | undefined, sampling = true): void {
    const state = this.snapshotState;
    if (source?.metadata?.unit !== undefined) this.unit = source.metadata.unit;
    const holding = this.raw ?? state.conditionActive ?? false;
    const holds = this.condition.evaluate(source, holding, this.deps.read, sampling);
    if (holds === undefined) {
      this.raw = undefined;
      this.cancelDelays();
      const problem = this.condition.problem as ConditionProblem;
      const before = this.conditionProblem;
      this.conditionProblem = problem;
      if (before === undefined || before.message !== problem.message) this.deps.sink.changed(this);
      return;
    }
    let changed = false;
    if (this.conditionProblem !== undefined) {
      this.conditionProblem = undefined;
      changed = true;
    }
    if (state.conditionActive === undefined) {
      // First evaluation: the alarm starts from Normal, then follows the condition.
      state.conditionActive = false;
      changed = true;
    }
    this.raw = holds;
    let transitioned = false;
    if (holds) {
      this.clearTimer('off');
      if (!state.conditionActive && this.onTimer === undefined) {
        if (this.definition.onDelayMs === 0) transitioned = this.activate();
        else this.onTimer = this.after(this.definition.onDelayMs, () => this.onDelayEnded());
      }
    } else {
      this.clearTimer('on');
      if (state.conditionActive && this.offTimer === undefined) {
        if (this.definition.offDelayMs === 0) transitioned = this.clear();
        else this.offTimer = this.after(this.definition.offDelayMs, () => this.offDelayEnded());
      }
    }
    if (changed && !transitioned) this.deps.sink.changed(this);
  }

  /**
   * Evaluates suppressWhen (when the definition has it). An expression that cannot be told
   * leaves the suppression as it is.
   * @param sampling false when only time moved (see {@link tick}).
   */
  evaluateSuppression(sampling = true): void {
    if (this.suppression === undefined) return;
    const outcome = this.suppression.evaluate(this.deps.read, sampling);
    if (outcome.problem !== undefined) return;
    this.setSuppressed(outcome.value);
  }

  /**
   * Time moved, no input changed: evaluates what changes with time alone (an Expression
   * condition with `now()` or a window, such a suppressWhen); window functions take no sample.
   * @param source the source's latest sample, as for {@link evaluate}.
   */
  tick(source: Sample | undefined): void {
    if (this.suppression?.timeDependent) this.evaluateSuppression(false);
    if (this.condition.timeDependent) this.evaluate(source, false);
  }

  /** Suppresses by design, or ends it. Nothing happens when it is already so. */
  setSuppressed(suppressed: boolean): void {
    if (this.snapshotState.suppressed === suppressed) return;
    const from = this.state;
    this.snapshotState.suppressed = suppressed;
    if (!suppressed) this.leaveOverlay();
    this.emit(suppressed ? 'Suppressed' : 'Unsuppressed', from, {});
  }

  /**
   * Acknowledges: an active alarm turns Acknowledged, one whose condition is gone (returned,
   * or latched) turns Normal.
   * @throws ConflictError `alarm-state-conflict` when nothing waits for an acknowledgement.
   */
  acknowledge(by: ActionBy = {}): void {
    const state = this.snapshotState;
    if (state.acknowledged) {
      throw new ConflictError(
        'alarm-state-conflict',
        `Alarm '${this.name}' has nothing to acknowledge (it is ${this.state}).`,
      );
    }
    const from = this.state;
    state.acknowledged = true;
    // A latched alarm (active only because nobody had acknowledged it) is released.
    if (state.active && state.conditionActive !== true) {
      state.active = false;
      delete state.activeSince;
    }
    this.emit('Acknowledged', from, by);
  }

  /**
   * Shelves (again: a new shelve replaces the one in force).
   * @throws ValidationError (path `durationMinutes`) for a Timed shelve without a duration or
   *   longer than maxShelveMinutes.
   */
  shelve(request: ShelveRequest): void {
    const now = this.deps.clock.now();
    const maxMs = this.definition.maxShelveMinutes * 60_000;
    let durationMs = maxMs;
    if (request.kind === 'Timed') {
      const asked = request.durationMs;
      if (asked === undefined || !(asked > 0) || asked > maxMs) {
        throw new ValidationError('The shelve duration is invalid.', [
          {
            path: 'durationMinutes',
            message: `A timed shelve lasts more than 0 and at most ${this.definition.maxShelveMinutes} minutes (maxShelveMinutes of alarm '${this.name}').`,
          },
        ]);
      }
      durationMs = asked;
    }
    const from = this.state;
    const shelve: Shelve = {
      kind: request.kind,
      since: now,
      until: now + durationMs,
      ...(request.account !== undefined ? { account: request.account } : {}),
      ...(request.comment !== undefined ? { reason: request.comment } : {}),
    };
    this.snapshotState.shelve = shelve;
    this.armShelveTimer(shelve);
    this.emit('Shelved', from, request);
  }

  /** Ends a shelve. @throws ConflictError `alarm-state-conflict` when not shelved. */
  unshelve(by: ActionBy = {}): void {
    if (this.snapshotState.shelve === undefined) {
      throw new ConflictError('alarm-state-conflict', `Alarm '${this.name}' is not shelved.`);
    }
    this.endShelve('Unshelved', by);
  }

  /**
   * Takes the alarm out of service, or puts it back.
   * @throws ConflictError `alarm-state-conflict` when it already is.
   */
  setOutOfService(outOfService: boolean, by: ActionBy = {}): void {
    if (this.snapshotState.outOfService === outOfService) {
      throw new ConflictError(
        'alarm-state-conflict',
        `Alarm '${this.name}' is already ${outOfService ? 'out of service' : 'in service'}.`,
      );
    }
    const from = this.state;
    this.snapshotState.outOfService = outOfService;
    if (!outOfService) this.leaveOverlay();
    this.emit(outOfService ? 'OutOfService' : 'InService', from, by);
  }

  private onDelayEnded(): void {
    this.onTimer = undefined;
    if (this.raw === true && this.snapshotState.conditionActive === false) this.activate();
  }

  private offDelayEnded(): void {
    this.offTimer = undefined;
    if (this.raw === false && this.snapshotState.conditionActive === true) this.clear();
  }

  private activate(): boolean {
    const state = this.snapshotState;
    const from = this.state;
    state.conditionActive = true;
    if (!state.active) state.activeSince = this.deps.clock.now();
    state.active = true;
    // A new occurrence waits for an acknowledgement, whatever was acknowledged before.
    state.acknowledged = false;
    this.emit('Activated', from, {});
    return true;
  }

  private clear(): boolean {
    const state = this.snapshotState;
    const from = this.state;
    state.conditionActive = false;
    if (!(this.definition.latching && !state.acknowledged)) {
      state.active = false;
      delete state.activeSince;
    }
    this.emit('Cleared', from, {});
    if (state.shelve?.kind === 'OneShot') {
      this.endShelve('ShelveEnded', { comment: 'One-shot shelve: the alarm cleared.' });
    }
    return true;
  }

  private endShelve(event: AlarmEvent, by: ActionBy): void {
    this.deps.clock.clearTimer(this.shelveTimer);
    this.shelveTimer = undefined;
    const from = this.state;
    delete this.snapshotState.shelve;
    this.leaveOverlay();
    this.emit(event, from, by);
  }

  /**
   * The last overlay ended: an alarm whose condition is gone is Normal (nobody was shown it, so
   * nothing waits for an acknowledgement); an active one keeps its acknowledgement state.
   */
  private leaveOverlay(): void {
    const state = this.snapshotState;
    if (state.outOfService || state.shelve !== undefined || state.suppressed) return;
    if (!state.active) state.acknowledged = true;
  }

  private armShelveTimer(shelve: Shelve): void {
    this.deps.clock.clearTimer(this.shelveTimer);
    const remaining = Math.max(0, shelve.until - this.deps.clock.now());
    this.shelveTimer = this.after(remaining, () => {
      this.shelveTimer = undefined;
      this.endShelve('ShelveEnded', {
        comment:
          shelve.kind === 'Timed'
            ? 'The shelve time is up.'
            : `One-shot shelve: maxShelveMinutes (${this.definition.maxShelveMinutes}) reached.`,
      });
    });
  }

  /** Keeps the re-alarm timer running exactly while the alarm is Unacknowledged. */
  private updateReAlarm(): void {
    const period = this.definition.reAlarmAfterMs;
    const wanted = period !== undefined && this.running && this.state === 'Unacknowledged';
    if (!wanted) {
      this.clearTimer('reAlarm');
      return;
    }
    if (this.reAlarmTimer !== undefined) return;
    this.reAlarmTimer = this.deps.clock.setTimeout(() => {
      this.reAlarmTimer = undefined;
      if (this.state !== 'Unacknowledged') return;
      this.emit('ReAlarm', 'Unacknowledged', { comment: 'Still unacknowledged: announced again.' });
    }, period);
  }

  private emit(event: AlarmEvent, from: AlarmState, by: ActionBy): void {
    const state = this.snapshotState;
    const now = this.deps.clock.now();
    state.changedAt = now;
    // The latest reading (a restored alarm not evaluated yet: the one it was stopped with).
    const value = this.condition.value ?? state.value;
    const limit = this.condition.limit;
    if (value === undefined) delete state.value;
    else state.value = value;
    if (limit === undefined) delete state.limit;
    else state.limit = limit;
    const transition: AlarmTransition = {
      time: now,
      name: this.name,
      event,
      from,
      to: this.state,
      active: state.active,
      acknowledged: state.acknowledged,
      ...(state.value !== undefined ? { value: state.value } : {}),
      ...(state.limit !== undefined ? { limit: state.limit } : {}),
      ...(by.account !== undefined ? { account: by.account } : {}),
      ...(by.comment !== undefined ? { comment: by.comment } : {}),
      priority: this.definition.priority,
      severity: this.severity,
      ...(this.definition.area !== undefined ? { area: this.definition.area } : {}),
      message: this.message(),
    };
    this.deps.sink.transition(this, transition);
    this.updateReAlarm();
  }

  private cancelDelays(): void {
    this.clearTimer('on');
    this.clearTimer('off');
  }

  private clearTimer(which: 'on' | 'off' | 'reAlarm'): void {
    const key = `${which}Timer` as 'onTimer' | 'offTimer' | 'reAlarmTimer';
    const timer = this[key];
    if (timer === undefined) return;
    this.deps.clock.clearTimer(timer);
    this[key] = undefined;
  }

  private after(delayMs: number, callback: () => void): TimerHandle {
    return this.deps.clock.setTimeout(callback, delayMs);
  }
}
