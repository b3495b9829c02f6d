/**
 * Derived tags (issue 21), two budgets:
 *
 * - Evaluation: at least 1,000,000 evaluations per CPU-second of a 6-node expression with two
 *   tag references, `abs({L/a} - {L/b}) > 5` (references, `-`, `abs`, a literal, `>`). Baseline:
 *   the same expression as a compiled JavaScript closure, reading the same two samples from the
 *   same Map; the subject is the expression language's evaluate(), quality tracking included.
 * - 10,000 derived tags over 100,000 inputs (each averages ten inputs of its own) at 10,000
 *   input changes per second: under 10 % of one core, i.e. at least 100,000 input changes per
 *   CPU-second through the store and the derived driver together, every change visible on its
 *   derived tag when the store's write returns (checked after every batch). Baseline: the same
 *   batches written to a store without the derived driver.
 *
 * Both are timed in CPU time of this process (process.cpuUsage, user + system), not wall time: on
 * a shared machine other processes take the cores in turns, and the budgets are per CPU-second.
 * Samples of the two sides alternate; each sample of the second case writes every input once
 * (1,000 batches), so no tag's closures stay warmer than another's.
 */
import { pino } from 'pino';
import { DerivedDriver } from '../drivers/derived/derived-driver.js';
import { derivedDriverSchema } from '../drivers/derived/schema.js';
import type { Clock } from '../src/clock.js';
import { compileExpression } from '../src/expressions/program.js';
import type { Sample } from '../src/tags/sample.js';
import { TagStore } from '../src/tags/tag-store.js';
import {
  type BenchmarkBudget,
  type BenchmarkSide,
  type CaseResult,
  caseResult,
  type MeasuredCase,
  sideResult,
} from './harness.js';

/** A case timed in CPU seconds; see the module comment. */
interface CpuCase {
  name: string;
  unit: string;
  unitsPerIteration: number;
  baseline: BenchmarkSide;
  subject: BenchmarkSide;
  budget: BenchmarkBudget;
  /** Iterations per timed sample, and untimed ones before the first. */
  iterationsPerSample: number;
  warmupIterations: number;
  verify(): void;
}

const samplesPerSide = 7;

function cpuSecondsOf(run: () => void): number {
  const before = process.cpuUsage();
  run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

function measuredInCpuTime(spec: CpuCase): MeasuredCase {
  const info = {
    name: spec.name,
    unit: spec.unit,
    unitsPerIteration: spec.unitsPerIteration,
    budget: spec.budget,
  };
  return {
    ...info,
    kind: 'measured',
    async measure(): Promise<CaseResult> {
      const { iterationsPerSample, warmupIterations } = spec;
      spec.baseline.run(warmupIterations);
      spec.subject.run(warmupIterations);
      const rates: [number[], number[]] = [[], []];
      const units = iterationsPerSample * spec.unitsPerIteration;
      for (let sample = 0; sample < samplesPerSide; sample++) {
        rates[0].push(units / cpuSecondsOf(() => spec.baseline.run(iterationsPerSample)));
        rates[1].push(units / cpuSecondsOf(() => spec.subject.run(iterationsPerSample)));
      }
      spec.verify();
      return caseResult(
        info,
        sideResult(spec.baseline.name, iterationsPerSample, rates[0]),
        sideResult(spec.subject.name, iterationsPerSample, rates[1]),
      );
    },
  };
}

/** A clock with no timers: the derived driver's time-only ticks are not part of this load. */
const stillClock: Clock = {
  now: () => Date.UTC(2026, 0, 1),
  setTimeout: () => 0 as never,
  setInterval: () => 0 as never,
  clearTimer: () => undefined,
};

function evaluationCase(): MeasuredCase {
  const text = 'abs({L/a} - {L/b}) > 5';
  const outcome = compileExpression(text);
  if (!outcome.ok) throw new Error(outcome.problem.message);
  const program = outcome.program;
  const inputs = new Map<string, Sample>([
    ['L/a', { fullTagId: 'L/a', utcTimestamp: '', quality: 'Good', value: 10 }],
    ['L/b', { fullTagId: 'L/b', utcTimestamp: '', quality: 'Good', value: 4 }],
  ]);
  const references = program.references;
  const read = (index: number) => inputs.get(references[index] as string);
  let subjectTrue = 0;
  let baselineTrue = 0;
  const state = program.createState();
  const environment = { now: 0, read, state };
  const closure = (a: Sample | undefined, b: Sample | undefined) =>
    Math.abs((a?.value as number) - (b?.value as number)) > 5;
  const baseline: BenchmarkSide = {
    name: `compiled JavaScript closure of ${text}`,
    run(iterations) {
      for (let i = 0; i < iterations; i++) {
        if (closure(inputs.get(references[0] as string), inputs.get(references[1] as string))) {
          baselineTrue++;
        }
      }
    },
  };
  const subject: BenchmarkSide = {
    name: `ExpressionProgram.evaluate of ${text} (${program.nodeCount} nodes)`,
    run(iterations) {
      for (let i = 0; i < iterations; i++) {
        environment.now = i;
        if (program.evaluate(environment).value === true) subjectTrue++;
      }
    },
  };
  return measuredInCpuTime({
    name: 'derived: evaluate a 6-node expression with two tag references',
    unit: 'evaluations',
    unitsPerIteration: 1,
    iterationsPerSample: 2_000_000,
    warmupIterations: 2_000_000,
    baseline,
    subject,
    budget: {
      minRatePerSecond: 1_000_000,
      description: 'issue 21: at least 1,000,000 evaluations per CPU-second',
    },
    verify() {
      if (program.nodeCount !== 6) throw new Error(`${program.nodeCount} nodes, not 6`);
      if (subjectTrue === 0 || baselineTrue === 0) throw new Error('a side computed nothing');
    },
  });
}

const derivedCount = 10_000;
const inputsPerTag = 10;
const inputCount = derivedCount * inputsPerTag;
/** Input changes per store write: 100 every 10 ms is 10,000 per second. */
const batchSize = 100;
/** Batches prepared in advance (the simulated driver's samples are not what is measured). */
const batchCount = 2_000;

function inputId(index: number): string {
  return `Field/plc${Math.floor(index / 1000)}/HR${index % 1000}`;
}

/**
 * Batches of changed inputs spread over every derived tag (each value differs from the last),
 * with the index of the input of each sample.
 */
function buildBatches(): { batches: Sample[][]; indexes: number[][] } {
  const batches: Sample[][] = [];
  const indexes: number[][] = [];
  let cursor = 0;
  for (let b = 0; b < batchCount; b++) {
    const batch: Sample[] = [];
    const batchIndexes: number[] = [];
    for (let i = 0; i < batchSize; i++) {
      // A stride that visits every input: consecutive batches touch different derived tags.
      const index = (cursor * 7919) % inputCount;
      batchIndexes.push(index);
      batch.push({
        fullTagId: inputId(index),
        utcTimestamp: '2026-01-01T00:00:00.000Z',
        quality: 'Good',
        value: cursor,
      });
      cursor++;
    }
    batches.push(batch);
    indexes.push(batchIndexes);
  }
  return { batches, indexes };
}

function inputStore(): TagStore {
  const store = new TagStore({ clock: stillClock });
  const initial: Sample[] = [];
  for (let i = 0; i < inputCount; i++) {
    initial.push({
      fullTagId: inputId(i),
      utcTimestamp: '2026-01-01T00:00:00.000Z',
      quality: 'Good',
      value: -1,
    });
  }
  store.write(initial);
  return store;
}

function fanInCase(): MeasuredCase {
  const { batches, indexes } = buildBatches();
  const plainStore = inputStore();
  const store = inputStore();
  const tags = Array.from({ length: derivedCount }, (_, t) => {
    const terms = Array.from(
      { length: inputsPerTag },
      (_, k) => `{${inputId(t * inputsPerTag + k)}}`,
    );
    return { name: `Avg/t${t}`, expression: `(${terms.join(' + ')}) / ${inputsPerTag}` };
  });
  const driver = new DerivedDriver(
    derivedDriverSchema.parse({ type: 'derived', name: 'Calc', tags }),
    { store, clock: stillClock, logger: pino({ level: 'silent' }), stateDir: '/nonexistent' },
  );
  void driver.start();
  let plainNext = 0;
  let subjectNext = 0;
  let checked = 0;
  let stale = 0;
  const baseline: BenchmarkSide = {
    name: `TagStore.write of the batches (${inputCount} inputs, no derived tags)`,
    run(iterations) {
      for (let i = 0; i < iterations; i++) {
        plainStore.write(batches[plainNext] as Sample[]);
        plainNext = (plainNext + 1) % batchCount;
      }
    },
  };
  const subject: BenchmarkSide = {
    name: `the same writes with ${derivedCount} derived tags of ${inputsPerTag} inputs each`,
    run(iterations) {
      for (let i = 0; i < iterations; i++) {
        store.write(batches[subjectNext] as Sample[]);
        // Same-batch visibility, sampled (one tag per write) to keep the check cheap.
        const index = (indexes[subjectNext] as number[])[i % batchSize] as number;
        subjectNext = (subjectNext + 1) % batchCount;
        const tag = Math.floor(index / inputsPerTag);
        let sum = 0;
        for (let k = 0; k < inputsPerTag; k++) {
          sum += store.get(inputId(tag * inputsPerTag + k))?.value as number;
        }
        checked++;
        if (store.get(`Calc/Avg/t${tag}`)?.value !== sum / inputsPerTag) stale++;
      }
    },
  };
  return measuredInCpuTime({
    name: 'derived: 10,000 tags over 100,000 inputs, input changes through the store',
    unit: 'input changes',
    unitsPerIteration: batchSize,
    // Every input once per sample, every input twice before the first.
    iterationsPerSample: inputCount / batchSize,
    warmupIterations: (2 * inputCount) / batchSize,
    baseline,
    subject,
    budget: {
      minRatePerSecond: 100_000,
      description:
        'issue 21: 10,000 input changes/s under 10 % of one core (≥ 100,000 changes per CPU-second)',
    },
    verify() {
      if (checked === 0) throw new Error('no write was checked');
      if (stale > 0) throw new Error(`${stale} of ${checked} derived tags lagged their inputs`);
    },
  });
}

/** The cases of this file. */
export const cases: MeasuredCase[] = [evaluationCase(), fanInCase()];
