/**
 * The running alarms: one {@link Alarm} per enabled definition, fed by the tag store's updates
 * (as publishers subscribe), its timers on the clock, its transitions journaled, its state
 * written back into the store as the tags `Alarms/<name>/Active`, `…/Acknowledged` and
 * `…/State`, so history, publishers, SSE and the console carry them like any tag.
 *
 * Order of a batch (a store batch, a timer, an operator action): every alarm evaluates; then the
 * transitions and the states they led to are committed to the journal in one transaction
 * (fsynced before an operator action is answered; see alarm-journal.ts); then the state tags
 * are written; then the Stream listeners hear of the transitions.
 * So nothing shows a transition the journal could lose, and an operator action is answered only
 * once it is on disk (a failing journal undoes it: 503 `alarm-journal-unavailable`). Automatic
 * transitions the journal refused are kept in memory, bounded, and written with the next batch.
 *
 * State tags are Good while the alarm's condition is evaluated on Good data. When it cannot be
 * (the source is not Good, missing, of the wrong type), `Active` and `State` turn Stale with the
 * last decided values (Unavailable when never decided), their message saying why; an overlay
 * state (Shelved, Suppressed, OutOfService) and `Acknowledged` are facts of their own and stay
 * Good.
 */
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../clock.js';
import { AlarmJournalUnavailableError, NotFoundError, TagdError } from '../errors.js';
import { callSafely } from '../tags/call-safely.js';
import type { Sample, TagValue } from '../tags/sample.js';
import type { TagStore, TagUpdate } from '../tags/tag-store.js';
import { type ActionBy, Alarm, type AlarmSink, type ShelveRequest } from './alarm.js';
import type { AlarmExpressionCompiler } from './alarm-expression.js';
import type { AlarmJournal } from './alarm-journal.js';
import type { AlarmDefinition } from './alarm-schema.js';
import type { AlarmSnapshot, AlarmTransition } from './alarm-state.js';
import { type AlarmView, evaluationQuality, viewOf } from './alarm-view.js';
import { engineExpressionCompiler } from './expression-compiler.js';

/** Default journal retention: 365 days. */
export const defaultJournalRetentionDays = 365;
/** Most transitions kept in memory while the journal refuses writes; beyond, the oldest go. */
const maxUnjournaled = 100_000;
/** How often retention runs, ms: hourly. */
const retentionIntervalMs = 3_600_000;

/** The journal file in the state directory. */
export function alarmJournalFile(stateDir: string): string {
  return join(stateDir, 'alarms.db');
}

/** The ids of an alarm's state tags. */
export function alarmTagIds(name: string): { active: string; acknowledged: string; state: string } {
  return {
    active: `Alarms/${name}/Active`,
    acknowledged: `Alarms/${name}/Acknowledged`,
    state: `Alarms/${name}/State`,
  };
}

/**
 * A transition as the listeners hear it: with its journal position, unless the journal refused
 * it (it is written with a later batch then).
 */
export type StreamedTransition = AlarmTransition & { seq?: number };

/** Hears the transitions of each batch, in order, after the journal has them. */
export type TransitionListener = (transitions: readonly StreamedTransition[]) => void;

/** What {@link AlarmService} works with. */
export interface AlarmServiceOptions {
  store: TagStore;
  clock: Clock;
  logger: Logger;
  /** The journal (opened by start, closed by stop). */
  journal: AlarmJournal;
  /** The profile's `alarms[]`. */
  definitions: readonly AlarmDefinition[];
  /**
   * Journal entries older than this many days are deleted (checked hourly); asked at each run,
   * so a reload changes it. Default (or undefined): 365.
   */
  retentionDays?: () => number | undefined;
  /**
   * Compiles Expression conditions and suppressWhen. Default: the derived tags' expression
   * engine on the service's clock.
   */
  expressions?: AlarmExpressionCompiler;
}

/** How often expressions that change with time alone are evaluated, ms. */
const tickIntervalMs = 1000;

/** The running alarms. */
export class AlarmService {
  private readonly alarms = new Map<string, Alarm>();
  // Tag → the alarms it feeds: as their source; as another input (setpoint, expression);
  // as an input of their suppressWhen.
  private bySource = new Map<string, Alarm[]>();
  private byInput = new Map<string, Alarm[]>();
  private bySuppression = new Map<string, Alarm[]>();
  private definitionList: AlarmDefinition[];
  private pending: AlarmTransition[] = [];
  private readonly toPersist = new Set<Alarm>();
  private readonly dirty = new Set<Alarm>();
  /** Transitions (and alarms whose state) the journal refused, to write with the next batch. */
  private unjournaled: AlarmTransition[] = [];
  private readonly unsaved = new Set<Alarm>();
  private droppedTransitions = 0;
  private journalFailing = false;
  private depth = 0;
  private readonly listeners = new Set<TransitionListener>();
  private unsubscribers: (() => void)[] = [];
  private retentionTimer: TimerHandle | undefined;
  private tickTimer: TimerHandle | undefined;
  private ticking: Alarm[] = [];
  private readonly expressions: AlarmExpressionCompiler;
  private running = false;
  private readonly timerClock: Clock;
  private readonly sink: AlarmSink;
  private readonly log: Logger;

  constructor(private readonly options: AlarmServiceOptions) {
    this.definitionList = [...options.definitions];
    this.log = options.logger;
    const clock = options.clock;
    // Alarm timers (delays, re-alarm, shelve ends) run as a batch of their own.
    this.timerClock = {
      now: () => clock.now(),
      setTimeout: (callback, delayMs) => clock.setTimeout(() => this.batch(callback), delayMs),
      setInterval: (callback, intervalMs) =>
        clock.setInterval(() => this.batch(callback), intervalMs),
      clearTimer: (handle) => clock.clearTimer(handle),
    };
    this.sink = {
      transition: (alarm, transition) => {
        this.pending.push(transition);
        this.toPersist.add(alarm);
        this.dirty.add(alarm);
      },
      changed: (alarm) => this.dirty.add(alarm),
    };
    this.expressions = options.expressions ?? engineExpressionCompiler(this.timerClock);
  }

  /**
   * Opens the journal, restores the saved states, evaluates every alarm on the store's current
   * samples and follows the store from then on. Idempotent.
   * @throws when the journal cannot be opened (nothing runs then).
   */
  async start(): Promise<void> {
    if (this.running) return;
    const { journal, store, clock } = this.options;
    journal.open();
    this.running = true;
    const saved = journal.states();
    this.batch(() => {
      for (const definition of this.definitionList) {
        if (definition.enabled) this.create(definition, saved.get(definition.name));
      }
      this.reindex();
      for (const alarm of this.alarms.values()) this.evaluateAll(alarm);
    });
    // States of alarms removed or disabled while tagd was stopped go with them.
    journal.removeStates([...saved.keys()].filter((name) => !this.alarms.has(name)));
    this.warnMissing([...this.alarms.values()]);
    this.unsubscribers = [
      store.subscribe(this.onUpdates),
      store.onTagsAdded(this.onTagsChanged),
      store.onTagsRemoved(this.onTagsChanged),
    ];
    this.retentionTimer = clock.setInterval(() => {
      const days = this.options.retentionDays?.() ?? defaultJournalRetentionDays;
      journal.deleteBefore(clock.now() - days * 86_400_000).catch((error: unknown) => {
        this.log.error({ err: error }, 'alarm journal retention failed');
      });
    }, retentionIntervalMs);
    this.log.info({ alarms: this.alarms.size }, 'alarms started');
  }

  /** Stops following the store, writes what is pending and closes the journal. Idempotent. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    for (const unsubscribe of this.unsubscribers) unsubscribe();
    this.unsubscribers = [];
    this.options.clock.clearTimer(this.retentionTimer);
    this.retentionTimer = undefined;
    this.timerClock.clearTimer(this.tickTimer);
    this.tickTimer = undefined;
    for (const alarm of this.alarms.values()) alarm.stop();
    this.flush(false);
    this.options.journal.close();
  }

  /** The definitions in force (disabled ones included), in profile order. */
  definitions(): readonly AlarmDefinition[] {
    return this.definitionList;
  }

  /**
   * Puts a new set of definitions in force (a reload, an API edit): alarms removed or disabled
   * stop and lose their state tags and saved state (their journal stays); a changed definition
   * keeps its alarm's state; new ones start Normal.
   */
  apply(definitions: readonly AlarmDefinition[]): void {
    const previous = new Map(
      this.definitionList.map((definition) => [definition.name, definition]),
    );
    this.definitionList = [...definitions];
    if (!this.running) return;
    const wanted = new Map(
      definitions.filter((definition) => definition.enabled).map((d) => [d.name, d]),
    );
    const started: Alarm[] = [];
    const gone: string[] = [];
    this.batch(() => {
      for (const [name, alarm] of [...this.alarms]) {
        const next = wanted.get(name);
        if (next !== undefined && isDeepStrictEqual(previous.get(name), next)) continue;
        alarm.stop();
        this.alarms.delete(name);
        this.dirty.delete(alarm);
        if (next === undefined) gone.push(name);
        else started.push(this.create(next, alarm.snapshot()));
      }
      for (const [name, definition] of wanted) {
        if (!this.alarms.has(name)) started.push(this.create(definition, undefined));
      }
      this.reindex();
      for (const alarm of started) this.evaluateAll(alarm);
    });
    if (gone.length > 0) {
      this.options.store.remove(gone.flatMap((name) => Object.values(alarmTagIds(name))));
      try {
        this.options.journal.removeStates(gone);
      } catch (error) {
        this.log.error({ err: error }, 'alarm journal: removing states failed');
      }
    }
    this.warnMissing(started);
  }

  /** Every running alarm's view, in profile order. */
  list(): AlarmView[] {
    return [...this.alarms.values()].map(viewOf);
  }

  /** One running alarm's view, or undefined. */
  get(name: string): AlarmView | undefined {
    const alarm = this.alarms.get(name);
    return alarm === undefined ? undefined : viewOf(alarm);
  }

  /** The journal, for queries. */
  get journal(): AlarmJournal {
    return this.options.journal;
  }

  /**
   * Acknowledges an alarm; answered once the journal has it.
   * @throws NotFoundError, ConflictError `alarm-state-conflict`, AlarmJournalUnavailableError.
   */
  acknowledge(name: string, by: ActionBy): AlarmView {
    return this.act(name, (alarm) => alarm.acknowledge(by));
  }

  /**
   * Acknowledges several alarms with one journal write (one fsync): each name gets its view, or
   * the error a single acknowledgement would have met (NotFoundError, ConflictError
   * `alarm-state-conflict`). A journal that refuses the write undoes them all: each of them gets
   * AlarmJournalUnavailableError.
   */
  acknowledgeMany(names: readonly string[], by: ActionBy): (AlarmView | TagdError)[] {
    const outcomes: (Alarm | TagdError)[] = [];
    const before = new Map<Alarm, AlarmSnapshot>();
    this.depth++;
    try {
      for (const name of names) {
        const alarm = this.alarms.get(name);
        if (alarm === undefined || !this.running) {
          outcomes.push(new NotFoundError(`Alarm '${name}' does not exist or is disabled.`));
          continue;
        }
        if (!before.has(alarm)) before.set(alarm, alarm.snapshot());
        try {
          alarm.acknowledge(by);
          outcomes.push(alarm);
        } catch (error) {
          if (!(error instanceof TagdError)) throw error;
          outcomes.push(error);
        }
      }
    } finally {
      this.depth--;
    }
    try {
      this.flush(true);
    } catch (error) {
      for (const [alarm, snapshot] of before) {
        alarm.restore(snapshot);
        this.toPersist.delete(alarm);
      }
      if (!(error instanceof TagdError)) throw error;
      return outcomes.map((outcome) => (outcome instanceof Alarm ? error : outcome));
    }
    return outcomes.map((outcome) => (outcome instanceof Alarm ? viewOf(outcome) : outcome));
  }

  /**
   * Shelves an alarm (a new shelve replaces the one in force).
   * @throws NotFoundError, ValidationError (duration), AlarmJournalUnavailableError.
   */
  shelve(name: string, request: ShelveRequest): AlarmView {
    return this.act(name, (alarm) => alarm.shelve(request));
  }

  /** @throws NotFoundError, ConflictError `alarm-state-conflict`, AlarmJournalUnavailableError. */
  unshelve(name: string, by: ActionBy): AlarmView {
    return this.act(name, (alarm) => alarm.unshelve(by));
  }

  /**
   * Takes an alarm out of service (`true`) or puts it back.
   * @throws NotFoundError, ConflictError `alarm-state-conflict`, AlarmJournalUnavailableError.
   */
  setOutOfService(name: string, outOfService: boolean, by: ActionBy): AlarmView {
    return this.act(name, (alarm) => alarm.setOutOfService(outOfService, by));
  }

  /**
   * Hears the transitions of each batch once the journal has them. Returns the function that
   * unsubscribes.
   */
  subscribe(listener: TransitionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Transitions lost because the journal refused writes for too long, since start. */
  get dropped(): number {
    return this.droppedTransitions;
  }

  private readonly onUpdates = (updates: readonly TagUpdate[]): void => {
    const bySource = this.bySource;
    const byInput = this.byInput;
    const bySuppression = this.bySuppression;
    this.depth++;
    try {
      for (let i = 0; i < updates.length; i++) {
        const update = updates[i] as TagUpdate;
        const id = update.sample.fullTagId;
        const direct = bySource.get(id);
        if (direct !== undefined) {
          for (let j = 0; j < direct.length; j++) {
            const alarm = direct[j] as Alarm;
            // An update that changed neither value nor quality cannot change a condition's
            // answer, except a rate's (a new reading of the same value: no change per second).
            if (update.changed || alarm.definition.condition === 'RateOfChange') {
              alarm.evaluate(update.sample);
            }
          }
        }
        if (byInput.size > 0 && update.changed) {
          const fed = byInput.get(id);
          if (fed !== undefined) for (const alarm of fed) this.evaluateCondition(alarm);
        }
        if (bySuppression.size > 0 && update.changed) {
          const fed = bySuppression.get(id);
          if (fed !== undefined) for (const alarm of fed) alarm.evaluateSuppression();
        }
      }
    } finally {
      this.depth--;
    }
    if (this.depth === 0) this.flush(false);
  };

  // A tag appearing or going away: the alarms it feeds look again (a source that appears is
  // evaluated at once; one removed is missing).
  private readonly onTagsChanged = (ids: readonly string[]): void => {
    this.batch(() => {
      for (const id of ids) {
        for (const alarm of this.bySource.get(id) ?? []) this.evaluateCondition(alarm);
        for (const alarm of this.byInput.get(id) ?? []) this.evaluateCondition(alarm);
        for (const alarm of this.bySuppression.get(id) ?? []) alarm.evaluateSuppression();
      }
    });
  };

  private create(definition: AlarmDefinition, snapshot: AlarmSnapshot | undefined): Alarm {
    const { store } = this.options;
    const alarm = new Alarm(
      definition,
      {
        clock: this.timerClock,
        sink: this.sink,
        read: (path) => store.get(path),
        expressions: this.expressions,
      },
      snapshot,
    );
    const ids = alarmTagIds(definition.name);
    store.define([
      {
        fullTagId: ids.active,
        metadata: { description: `Alarm ${definition.name} is active` },
      },
      {
        fullTagId: ids.acknowledged,
        metadata: {
          description: `Alarm ${definition.name} is acknowledged (nothing to acknowledge)`,
        },
      },
      {
        fullTagId: ids.state,
        metadata: {
          description: `State of alarm ${definition.name}: Normal, Unacknowledged, Acknowledged, ReturnedUnacknowledged, Shelved, Suppressed or OutOfService`,
        },
      },
    ]);
    this.alarms.set(definition.name, alarm);
    alarm.start();
    this.dirty.add(alarm);
    return alarm;
  }

  private reindex(): void {
    const bySource = new Map<string, Alarm[]>();
    const byInput = new Map<string, Alarm[]>();
    const bySuppression = new Map<string, Alarm[]>();
    const add = (map: Map<string, Alarm[]>, id: string, alarm: Alarm) => {
      const list = map.get(id);
      if (list === undefined) map.set(id, [alarm]);
      else list.push(alarm);
    };
    for (const alarm of this.alarms.values()) {
      const source = alarm.definition.source;
      if (source !== undefined) add(bySource, source, alarm);
      for (const input of alarm.inputs) add(byInput, input, alarm);
      for (const input of alarm.suppressionInputs) add(bySuppression, input, alarm);
    }
    this.bySource = bySource;
    this.byInput = byInput;
    this.bySuppression = bySuppression;
    // Expressions with now(), hour() or windows change with time alone: a tick every second.
    this.ticking = [...this.alarms.values()].filter((alarm) => alarm.timeDependent);
    if (this.ticking.length === 0) {
      this.timerClock.clearTimer(this.tickTimer);
      this.tickTimer = undefined;
    } else if (this.tickTimer === undefined && this.running) {
      this.tickTimer = this.timerClock.setInterval(() => this.tick(), tickIntervalMs);
    }
  }

  private tick(): void {
    const { store } = this.options;
    for (const alarm of this.ticking) {
      const source = alarm.definition.source;
      alarm.tick(source === undefined ? undefined : store.get(source));
    }
  }

  private evaluateAll(alarm: Alarm): void {
    alarm.evaluateSuppression();
    this.evaluateCondition(alarm);
  }

  private evaluateCondition(alarm: Alarm): void {
    const source = alarm.definition.source;
    alarm.evaluate(source === undefined ? undefined : this.options.store.get(source));
  }

  private warnMissing(alarms: readonly Alarm[]): void {
    const { store } = this.options;
    for (const alarm of alarms) {
      const missing = [alarm.definition.source, ...alarm.inputs].filter(
        (path): path is string => path !== undefined && !store.has(path),
      );
      if (missing.length > 0) {
        this.log.warn(
          { alarm: alarm.name, missing },
          `alarm ${alarm.name} refers to tags that do not exist (yet): ${missing.join(', ')}`,
        );
      }
    }
  }

  /** Runs `work` as one batch: its transitions are journaled, shown and sent together. */
  private batch(work: () => void): void {
    this.depth++;
    try {
      work();
    } finally {
      this.depth--;
    }
    if (this.depth === 0) this.flush(false);
  }

  private act(name: string, action: (alarm: Alarm) => void): AlarmView {
    const alarm = this.alarms.get(name);
    if (alarm === undefined || !this.running) {
      throw new NotFoundError(`Alarm '${name}' does not exist or is disabled.`);
    }
    const before = alarm.snapshot();
    this.depth++;
    try {
      action(alarm);
    } finally {
      this.depth--;
    }
    try {
      this.flush(true);
    } catch (error) {
      alarm.restore(before);
      this.toPersist.delete(alarm);
      throw error;
    }
    return viewOf(alarm);
  }

  /**
   * Journals, then shows, then sends what the batch did.
   * @param strict an operator action: a journal failure throws (the caller undoes the action)
   *   instead of keeping the transitions for the next batch.
   */
  private flush(strict: boolean): void {
    if (this.pending.length === 0 && this.toPersist.size === 0 && this.dirty.size === 0) return;
    const fresh = this.pending;
    this.pending = [];
    const persist = [...this.toPersist];
    this.toPersist.clear();
    const dirty = [...this.dirty];
    this.dirty.clear();

    let streamed: StreamedTransition[] = fresh;
    if (fresh.length > 0 || persist.length > 0 || this.unjournaled.length > 0) {
      const transitions = this.unjournaled.length > 0 ? [...this.unjournaled, ...fresh] : fresh;
      // By name, from the alarm running now: one replaced (apply) or removed since is not saved.
      const names = new Set([...this.unsaved, ...persist].map((alarm) => alarm.name));
      const states: [string, AlarmSnapshot][] = [];
      for (const name of names) {
        const alarm = this.alarms.get(name);
        if (alarm !== undefined) states.push([name, alarm.snapshot()]);
      }
      try {
        const seqs = this.options.journal.append(transitions, states, { fsync: strict });
        // The fresh transitions are the tail of the batch.
        const offset = seqs.length - fresh.length;
        streamed = fresh.map((transition, index) => ({ ...transition, seq: seqs[offset + index] }));
        this.unjournaled = [];
        this.unsaved.clear();
        if (this.journalFailing) {
          this.journalFailing = false;
          this.log.info('alarm journal writable again');
        }
      } catch (error) {
        if (strict) {
          // Undone by the caller: its transitions and tags never happened.
          for (const alarm of dirty) this.dirty.add(alarm);
          throw new AlarmJournalUnavailableError({ cause: error });
        }
        if (!this.journalFailing) {
          this.journalFailing = true;
          this.log.error(
            { err: error },
            'alarm journal refused a write: transitions are kept in memory and written with the next batch',
          );
        }
        this.unjournaled = transitions;
        for (const alarm of persist) this.unsaved.add(alarm);
        if (this.unjournaled.length > maxUnjournaled) {
          const excess = this.unjournaled.length - maxUnjournaled;
          this.unjournaled.splice(0, excess);
          this.droppedTransitions += excess;
        }
      }
    }

    if (dirty.length > 0) this.writeTags(dirty);
    if (streamed.length > 0) {
      for (const listener of this.listeners) {
        callSafely(() => listener(streamed), this.log, 'alarm transition listener failed');
      }
    }
  }

  private writeTags(alarms: readonly Alarm[]): void {
    const { store, clock } = this.options;
    const now = new Date(clock.now()).toISOString();
    const samples: Sample[] = [];
    const add = (
      fullTagId: string,
      evaluation: ReturnType<typeof evaluationQuality>,
      value: TagValue,
    ) => {
      const sample: Sample =
        evaluation.quality === 'Good'
          ? { fullTagId, utcTimestamp: now, quality: 'Good', value }
          : {
              fullTagId,
              utcTimestamp: now,
              quality: evaluation.quality,
              ...(evaluation.quality === 'Stale' ? { value } : {}),
              ...(evaluation.reason !== undefined ? { reason: evaluation.reason } : {}),
              ...(evaluation.message !== undefined ? { message: evaluation.message } : {}),
            };
      const current = store.get(fullTagId);
      if (
        current !== undefined &&
        current.quality === sample.quality &&
        current.value === sample.value &&
        current.message === sample.message
      ) {
        return;
      }
      samples.push(sample);
    };
    const good = { quality: 'Good' as const };
    for (const alarm of alarms) {
      if (this.alarms.get(alarm.name) !== alarm) continue;
      const ids = alarmTagIds(alarm.name);
      const evaluation = evaluationQuality(alarm);
      const state = alarm.state;
      const overlay = state === 'Shelved' || state === 'Suppressed' || state === 'OutOfService';
      add(ids.active, evaluation, alarm.current.active);
      add(ids.state, overlay ? good : evaluation, state);
      add(ids.acknowledged, good, alarm.current.acknowledged);
    }
    if (samples.length > 0) store.write(samples);
  }
}
