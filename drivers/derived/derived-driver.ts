/**
 * The derived-tag driver: tags computed by expressions (src/expressions) from other tags of the
 * store, written back into the store like any driver's samples, so history, publishers, SSE,
 * the console, reload and metrics treat them as any other tag.
 *
 * Evaluation (trigger `change`): the driver subscribes to the store, whose subscribers are told
 * synchronously of each write batch. In that call it evaluates every tag an input of which
 * changed (value or quality), once per batch however many of its inputs changed, in dependency
 * order, derived tags that read derived tags of this driver after them, each reading the values
 * computed earlier in the same pass; then it writes one batch. Each tag keeps the latest sample of
 * each of its inputs, taken from the store's updates (every update, changed or not), so an
 * evaluation reads an array rather than the store's map. Its write runs inside the store's
 * notification of the input batch, so by the time `store.write(inputs)` returns, the derived
 * tags hold the values of those inputs. Derived tags of other derived drivers follow the same
 * way, one nested batch later. A loop between derived tags is refused by the profile.
 *
 * Expressions whose value moves with time alone (`now()`, `hour()`, window functions) are also
 * evaluated every second; such a re-evaluation takes no sample (sums and counts do not grow).
 * Trigger `intervalMs`: the tag is evaluated every interval, and at once (without a sample) when
 * an input's quality changes, so it never stays Good after an input left Good.
 *
 * What is written: a result equal to the last one written (value, quality, message) is not
 * written again, except at an interval tick (an interval tag declares its interval as refresh
 * bound, so the store turns it Stale when the ticks stop); a numeric result within `deadband`
 * of the last one written, at the same quality, is not written.
 *
 * State: window functions keep their history in memory; `integrate` totals are saved to the
 * state directory (totals-file.ts) every 10 seconds and at stop, and restored at start.
 */
import type { TimerHandle } from '../../src/clock.js';
import { formatProblem } from '../../src/expressions/expression-problem.js';
import type { ExpressionState } from '../../src/expressions/expression-state.js';
import type { EvaluationResult, ExpressionProgram } from '../../src/expressions/program.js';
import { compileExpression } from '../../src/expressions/program.js';
import type { QualityReason, Sample, SampleMetadata } from '../../src/tags/sample.js';
import type { TagUpdate } from '../../src/tags/tag-store.js';
import {
  type DriverDeps,
  type DriverState,
  type DriverStatus,
  driverTagId,
  pollRefreshBoundMs,
} from '../driver.js';
import { driverStoppedMessage, unavailableSample } from '../unavailable-sample.js';
import { dependencyOrder } from './dependency-order.js';
import type { DerivedTagReport, DerivedTagSource } from './derived-tag-report.js';
import type { DerivedDriverConfig, DerivedTagConfig } from './schema.js';
import { type DerivedTotals, TotalsFile } from './totals-file.js';

/** How often time-dependent `change` tags are re-evaluated, ms. */
export const timeTickMs = 1000;
/** How often changed totals are saved, ms. */
export const totalsSaveIntervalMs = 10_000;

interface DerivedTag {
  readonly fullTagId: string;
  readonly config: DerivedTagConfig;
  readonly program: ExpressionProgram;
  readonly state: ExpressionState;
  readonly metadata: SampleMetadata;
  /** Position in the evaluation order. */
  order: number;
  /** Interval of an interval tag, ms; undefined for `change`. */
  readonly intervalMs: number | undefined;
  /**
   * The latest sample of each reference, by index: kept current from the store's updates (and,
   * for tags of this driver, from each pass as it computes them), so an evaluation reads an
   * array, not the store's map.
   */
  readonly inputs: (Sample | undefined)[];
  /** Where tags of this driver read this one. */
  dependents: InputSlot[];
  /** The sample written last. */
  written: Sample | undefined;
  /** The pass that marked the tag for evaluation, and whether it takes a sample. */
  mark: number;
  sampling: boolean;
  /** The last evaluation and when it ran (the report is built from them when asked). */
  last: EvaluationResult | undefined;
  lastAt: string;
  /** What the program is evaluated with, reused from one evaluation to the next. */
  readonly environment: {
    now: number;
    read: (index: number) => Sample | undefined;
    state: ExpressionState;
    sampling: boolean;
  };
  evaluations: number;
  writes: number;
  faults: number;
}

/** One reference of a tag: the tag, and the index of the reference in its program. */
interface InputSlot {
  tag: DerivedTag;
  index: number;
}

/** See the module comment. */
export class DerivedDriver implements DerivedTagSource {
  readonly type = 'derived';
  readonly name: string;
  private readonly tags: DerivedTag[];
  /** The tags in evaluation order. */
  private readonly ordered: DerivedTag[];
  /** Where each input is read, by the input's fullTagId (tags of this driver excluded). */
  private readonly readers = new Map<string, InputSlot[]>();
  private readonly totalsFile: TotalsFile;
  private readonly hasTotals: boolean;
  private unsubscribe: (() => void)[] = [];
  private timers: TimerHandle[] = [];
  private running = false;
  private state: DriverState = 'Stopped';
  private since: number;
  private pass = 0;
  private evaluations = 0;
  private writes = 0;
  private faults = 0;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: DerivedDriverConfig,
    private readonly deps: DriverDeps,
  ) {
    this.name = config.name;
    this.since = deps.clock.now();
    this.totalsFile = new TotalsFile(deps.stateDir, config.name);
    this.tags = config.tags.map((tag, order) => this.build(tag, order));
    const byId = new Map(this.tags.map((tag) => [tag.fullTagId, tag]));
    for (const tag of this.tags) {
      for (const [index, reference] of tag.program.references.entries()) {
        const upstream = byId.get(reference);
        if (upstream) upstream.dependents.push({ tag, index });
        else {
          const list = this.readers.get(reference);
          if (list === undefined) this.readers.set(reference, [{ tag, index }]);
          else list.push({ tag, index });
        }
      }
    }
    const order = dependencyOrder(
      this.tags.map((tag) => ({ id: tag.fullTagId, references: tag.program.references })),
    );
    if (!order.ok) {
      throw new Error(`Derived tags form a loop: ${order.loop.join(' → ')}.`);
    }
    this.ordered = order.order.map((index) => this.tags[index] as DerivedTag);
    this.ordered.forEach((tag, position) => {
      tag.order = position;
    });
    this.hasTotals = this.tags.some((tag) => Object.keys(tag.state.totals()).length > 0);
  }

  private build(config: DerivedTagConfig, order: number): DerivedTag {
    const outcome = compileExpression(config.expression, { component: this.name });
    if (!outcome.ok) {
      // The profile schema compiles every expression: this is a driver built without it.
      throw new Error(`${this.name}/${config.name}: ${formatProblem(outcome.problem)}`);
    }
    const metadata: SampleMetadata = {
      source: `derived: ${config.expression.slice(0, 480)}`,
      ...(config.unit !== undefined ? { unit: config.unit } : {}),
      ...(config.description !== undefined ? { description: config.description } : {}),
    };
    const inputs: (Sample | undefined)[] = outcome.program.references.map(() => undefined);
    const state = outcome.program.createState();
    return {
      fullTagId: driverTagId(this.name, config.name),
      config,
      program: outcome.program,
      state,
      metadata,
      order,
      intervalMs: config.trigger === 'change' ? undefined : config.trigger.intervalMs,
      inputs,
      dependents: [],
      written: undefined,
      mark: 0,
      sampling: false,
      last: undefined,
      lastAt: '',
      environment: { now: 0, read: (index) => inputs[index], state, sampling: true },
      evaluations: 0,
      writes: 0,
      faults: 0,
    };
  }

  async start(): Promise<void> {
    if (this.running) return;
    const { store, clock, logger } = this.deps;
    this.running = true;
    if (this.hasTotals) await this.restoreTotals();
    store.define(
      this.tags.map((tag) => ({
        fullTagId: tag.fullTagId,
        metadata: tag.metadata,
        ...(tag.intervalMs !== undefined
          ? { refreshBoundMs: pollRefreshBoundMs(tag.intervalMs, 0) }
          : {}),
      })),
    );
    this.unsubscribe = [
      store.subscribe((updates) => this.onUpdates(updates)),
      store.onTagsRemoved((ids) => this.onRemoved(ids)),
    ];
    for (const tag of this.tags) {
      tag.written = undefined;
      tag.mark = 0;
      // What the store holds now; its updates keep them current from here on.
      const references = tag.program.references;
      for (let index = 0; index < references.length; index++) {
        tag.inputs[index] = store.get(references[index] as string);
      }
    }
    this.setState('Running');
    this.evaluate(this.ordered, true);
    const intervals = new Map<number, DerivedTag[]>();
    for (const tag of this.ordered) {
      if (tag.intervalMs === undefined) continue;
      const group = intervals.get(tag.intervalMs) ?? [];
      group.push(tag);
      intervals.set(tag.intervalMs, group);
    }
    for (const [intervalMs, group] of intervals) {
      this.timers.push(clock.setInterval(() => this.evaluate(group, true), intervalMs));
    }
    const ticking = this.ordered.filter(
      (tag) => tag.intervalMs === undefined && tag.program.timeDependent,
    );
    if (ticking.length > 0) {
      this.timers.push(clock.setInterval(() => this.evaluate(ticking, false), timeTickMs));
    }
    if (this.hasTotals) {
      this.timers.push(clock.setInterval(() => void this.saveTotals(), totalsSaveIntervalMs));
    }
    logger.info({ tags: this.tags.length }, 'derived tags started');
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    this.unsubscribe = [];
    for (const timer of this.timers) this.deps.clock.clearTimer(timer);
    this.timers = [];
    const utcTimestamp = new Date(this.deps.clock.now()).toISOString();
    this.deps.store.write(
      this.tags.map((tag) => unavailableSample(tag, utcTimestamp, driverStoppedMessage)),
    );
    if (this.hasTotals) await this.saveTotals();
    await this.saving;
    this.setState('Stopped');
    this.deps.logger.info('derived tags stopped');
  }

  status(): DriverStatus {
    return {
      state: this.state,
      since: new Date(this.since).toISOString(),
      tagCount: this.tags.length,
      counters: { evaluations: this.evaluations, writes: this.writes, faults: this.faults },
    };
  }

  derivedTags(): DerivedTagReport[] {
    return this.tags.map((tag) => {
      const { config } = tag;
      return {
        fullTagId: tag.fullTagId,
        driver: this.name,
        expression: config.expression,
        inputs: [...tag.program.references],
        dataType: config.dataType ?? tag.program.type,
        trigger: config.trigger,
        ...(config.unit !== undefined ? { unit: config.unit } : {}),
        ...(config.description !== undefined ? { description: config.description } : {}),
        ...(config.deadband !== undefined ? { deadband: config.deadband } : {}),
        ...(tag.last ? { lastEvaluation: { utcTimestamp: tag.lastAt, ...tag.last } } : {}),
        evaluations: tag.evaluations,
        writes: tag.writes,
        faults: tag.faults,
      };
    });
  }

  private onUpdates(updates: readonly TagUpdate[]): void {
    if (!this.running) return;
    const pass = ++this.pass;
    let dirty: DerivedTag[] | undefined;
    for (let i = 0; i < updates.length; i++) {
      const update = updates[i] as TagUpdate;
      const readers = this.readers.get(update.sample.fullTagId);
      if (readers === undefined) continue;
      // Every update, changed or not, so a new message of an unchanged Bad input is read too.
      for (const slot of readers) slot.tag.inputs[slot.index] = update.sample;
      if (!update.changed) continue;
      // An interval tag follows a quality change at once; its values wait for the interval.
      const qualityChanged = update.previous?.quality !== update.sample.quality;
      for (const { tag } of readers) {
        const sampling = tag.intervalMs === undefined;
        if (!sampling && !qualityChanged) continue;
        if (tag.mark !== pass) {
          tag.mark = pass;
          tag.sampling = sampling;
          if (dirty === undefined) dirty = [];
          dirty.push(tag);
        }
      }
    }
    if (dirty !== undefined) this.run(pass, dirty);
  }

  // A removed input (its driver stopped for good or restarted) makes its readers NotFound.
  private onRemoved(ids: readonly string[]): void {
    if (!this.running) return;
    const pass = ++this.pass;
    const dirty: DerivedTag[] = [];
    for (const id of ids) {
      for (const { tag, index } of this.readers.get(id) ?? []) {
        tag.inputs[index] = undefined;
        if (tag.mark === pass) continue;
        tag.mark = pass;
        tag.sampling = false;
        dirty.push(tag);
      }
    }
    if (dirty.length > 0) this.run(pass, dirty);
  }

  /** Evaluates `tags` (and the tags of this driver that read them) in one pass. */
  private evaluate(tags: readonly DerivedTag[], sampling: boolean): void {
    if (!this.running) return;
    const pass = ++this.pass;
    for (const tag of tags) {
      tag.mark = pass;
      tag.sampling = sampling;
    }
    this.run(pass, tags);
  }

  private run(pass: number, marked: readonly DerivedTag[]): void {
    const queue = new OrderQueue();
    for (const tag of marked) queue.push(tag);
    const now = this.deps.clock.now();
    const utcTimestamp = new Date(now).toISOString();
    const batch: Sample[] = [];
    for (let tag = queue.pop(); tag !== undefined; tag = queue.pop()) {
      const sample = this.evaluateTag(tag, now, utcTimestamp);
      if (sample === undefined) continue;
      const previous = tag.written;
      tag.written = sample;
      tag.writes++;
      batch.push(sample);
      const qualityChanged = previous?.quality !== sample.quality;
      for (const { tag: dependent, index } of tag.dependents) {
        // The tags after it in this pass read the new value before the store holds it.
        dependent.inputs[index] = sample;
        const sampling = dependent.intervalMs === undefined;
        if (!sampling && !qualityChanged) continue;
        if (dependent.mark !== pass) {
          dependent.mark = pass;
          dependent.sampling = sampling;
          queue.push(dependent);
        } else if (sampling) dependent.sampling = true;
      }
    }
    if (batch.length === 0) return;
    this.writes += batch.length;
    this.deps.store.write(batch);
  }

  /** Evaluates one tag; the sample to write, or undefined when nothing is to be written. */
  private evaluateTag(tag: DerivedTag, now: number, utcTimestamp: string): Sample | undefined {
    const environment = tag.environment;
    environment.now = now;
    environment.sampling = tag.sampling;
    let result: EvaluationResult = tag.program.evaluate(environment);
    const expected = tag.config.dataType;
    if (expected !== undefined && result.value !== undefined && typeof result.value !== expected) {
      result = {
        quality: 'Bad',
        reason: 'Expression',
        message: `The expression gave ${describe(result.value)}, and the tag's dataType is ${expected}.`,
      };
    }
    tag.evaluations++;
    this.evaluations++;
    if (result.reason === 'Expression' && result.quality === 'Bad') {
      tag.faults++;
      this.faults++;
    }
    tag.last = result;
    tag.lastAt = utcTimestamp;
    const written = tag.written;
    // An interval tick writes even an unchanged value: the tag's refresh bound counts on it.
    const tick = tag.intervalMs !== undefined && tag.sampling;
    if (written !== undefined && !tick && written.quality === result.quality) {
      if (Object.is(written.value, result.value) && written.message === result.message) {
        return undefined;
      }
      const deadband = tag.config.deadband;
      if (
        deadband !== undefined &&
        typeof written.value === 'number' &&
        typeof result.value === 'number' &&
        Math.abs(result.value - written.value) < deadband
      ) {
        return undefined;
      }
    }
    const sample: Sample = { fullTagId: tag.fullTagId, utcTimestamp, quality: result.quality };
    if (result.value !== undefined) sample.value = result.value;
    if (result.reason !== undefined) sample.reason = result.reason as QualityReason;
    if (result.message !== undefined) sample.message = result.message;
    sample.metadata = tag.metadata;
    return sample;
  }

  private async restoreTotals(): Promise<void> {
    let totals: DerivedTotals;
    try {
      totals = await this.totalsFile.load();
    } catch (error) {
      // A damaged file must not keep the tags from running: they start from zero, said loudly.
      this.deps.logger.error(
        { err: error, file: this.totalsFile.path },
        'the saved totals of integrate() are unreadable; they start from 0',
      );
      return;
    }
    for (const tag of this.tags) {
      const saved = totals[tag.config.name];
      if (saved) tag.state.restoreTotals(saved);
    }
  }

  private saveTotals(): Promise<void> {
    const totals: DerivedTotals = {};
    for (const tag of this.tags) {
      const own = tag.state.totals();
      if (Object.keys(own).length > 0) totals[tag.config.name] = own;
    }
    const next = this.saving.then(() =>
      this.totalsFile.save(totals).catch((error: unknown) => {
        this.deps.logger.error(
          { err: error, file: this.totalsFile.path },
          'the totals of integrate() could not be saved',
        );
      }),
    );
    this.saving = next;
    return next;
  }

  private setState(state: DriverState): void {
    this.state = state;
    this.since = this.deps.clock.now();
  }
}

function describe(value: unknown): string {
  return typeof value === 'string'
    ? 'a string'
    : typeof value === 'boolean'
      ? 'a boolean'
      : 'a number';
}

/** A binary min-heap of tags by evaluation order. */
class OrderQueue {
  private readonly heap: DerivedTag[] = [];

  push(tag: DerivedTag): void {
    const heap = this.heap;
    heap.push(tag);
    let child = heap.length - 1;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if ((heap[parent] as DerivedTag).order <= tag.order) break;
      heap[child] = heap[parent] as DerivedTag;
      child = parent;
    }
    heap[child] = tag;
  }

  pop(): DerivedTag | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let parent = 0;
    for (;;) {
      let child = 2 * parent + 1;
      if (child >= heap.length) break;
      const right = child + 1;
      if (
        right < heap.length &&
        (heap[right] as DerivedTag).order < (heap[child] as DerivedTag).order
      ) {
        child = right;
      }
      if ((heap[child] as DerivedTag).order >= last.order) break;
      heap[parent] = heap[child] as DerivedTag;
      parent = child;
    }
    heap[parent] = last;
    return top;
  }
}
