/**
 * A tiny, dependency-free benchmark harness.
 *
 * Absolute timings on a shared machine drift with load, CPU frequency and the other tenant, so
 * every case measures a baseline (the cheapest way to do the same work, e.g. a plain `Map.set`
 * loop) and a subject in the same run, interleaved, and reports the ratio subject/baseline.
 * Absolute rates are printed too, as supporting figures, and budgets may be set on either.
 *
 * Benchmarks are not tests: a budget that is not met is reported, never turned into a failing
 * exit code.
 */

/** One side of a benchmark case: the code that is timed. */
export interface BenchmarkSide {
  /** Label printed with the results, e.g. `Map.set loop`. */
  name: string;
  /**
   * Performs `iterations` iterations of the work, synchronously; each iteration is worth
   * {@link BenchmarkCase.unitsPerIteration} units. Called many times with varying counts; the
   * side keeps whatever state it needs between calls. Set-up belongs outside: it is not timed.
   */
  run(iterations: number): void;
}

/** Pass conditions of a case. Every condition given must hold for the budget to be met. */
export interface BenchmarkBudget {
  /** Least subject/baseline ratio of median rates (dimensionless; 1 = as fast as the baseline). */
  minRatio?: number;
  /**
   * Largest subject/baseline ratio of median figures (dimensionless), for amount cases where
   * lower is better: 1.1 = the subject costs at most 10 % more than the baseline.
   */
  maxRatio?: number;
  /** Least median subject rate, in the case's units per second. */
  minRatePerSecond?: number;
  /**
   * Largest median subject amount, in the case's unit, for cases that measure an amount
   * ({@link BenchmarkCase.quantity} `amount`: a start-up time, a resident set size).
   */
  maxAmount?: number;
  /** Where the budget comes from, printed with the verdict. */
  description: string;
}

/** A benchmark: a subject measured against a baseline doing the same work. */
export interface BenchmarkCase {
  /** Unique name, printed in the table and matched by the command-line filter. */
  name: string;
  /** What one unit of work is, plural, e.g. `updates`; rates are printed in units per second. */
  unit: string;
  /** Units of work done by one iteration of `run` (e.g. the batch size). Default: 1. */
  unitsPerIteration?: number;
  /**
   * What the sides' figures are: `rate` (default), units per second, higher is better; or
   * `amount`, a quantity in `unit` such as seconds to ready or megabytes resident, lower is
   * better. Only `measured` cases report amounts (bench/footprint.bench.ts); the figures are
   * kept in the result's `rates` fields either way, and the ratio is subject/baseline.
   */
  quantity?: 'rate' | 'amount';
  /** The reference implementation of the work. */
  baseline: BenchmarkSide;
  /** The code under measurement. */
  subject: BenchmarkSide;
  /** Optional pass conditions; without them the verdict column shows a dash. */
  budget?: BenchmarkBudget;
  /**
   * Called once after measuring; throws when the sides did not do the work they claim
   * (for example a subscriber that saw fewer updates than were written).
   */
  verify?(): void;
}

/**
 * What the report needs to know of a case; load cases (bench/load-harness.ts) have it too, so
 * their results print in the same table.
 */
export type CaseInfo = Pick<
  BenchmarkCase,
  'name' | 'unit' | 'unitsPerIteration' | 'budget' | 'quantity'
>;

/** One side of an {@link AsyncBenchmarkCase}. */
export interface AsyncBenchmarkSide {
  /** Label printed with the results. */
  name: string;
  /**
   * Performs `iterations` iterations of the work; the promise settles when they are done.
   * Otherwise as {@link BenchmarkSide.run}.
   */
  run(iterations: number): Promise<void>;
}

/** A benchmark whose sides are asynchronous, measured by {@link runAsyncCase}. */
export interface AsyncBenchmarkCase extends CaseInfo {
  /** The reference implementation of the work. */
  baseline: AsyncBenchmarkSide;
  /** The code under measurement. */
  subject: AsyncBenchmarkSide;
  /** As {@link BenchmarkCase.verify}, and may be asynchronous (e.g. to count stored rows). */
  verify?(): void | Promise<void>;
}

/**
 * A case that measures itself asynchronously and returns its result in the harness's format,
 * for work that is neither a synchronous loop nor an HTTP load (e.g. bench/opcua.bench.ts:
 * client CPU per notification from a server in a child process; bench/history-postgres.bench.ts:
 * round trips to a database server).
 */
export interface MeasuredCase extends CaseInfo {
  /** Marks the case for `bench/run.ts`. */
  kind: 'measured';
  /** Sets up, measures both sides, tears down, and returns the result. */
  measure(): Promise<CaseResult>;
}

/** Tuning of the measurement. */
export interface HarnessOptions {
  /** Intended duration of one timed sample, in milliseconds. Default: 150. */
  targetSampleMs?: number;
  /** Timed samples per side, taken alternately with the other side. Default: 7. */
  samples?: number;
  /** Untimed warm-up per side before sampling, in milliseconds. Default: 500. */
  warmupMs?: number;
}

/** The measurements of one side. */
export interface SideResult {
  /** The side's name. */
  name: string;
  /** Iterations run per timed sample (after calibration). */
  iterationsPerSample: number;
  /** Rate of each timed sample, in units per second, in the order they were taken. */
  rates: number[];
  /** Median of `rates`, in units per second. */
  medianRate: number;
  /** Lowest of `rates`, in units per second. */
  minRate: number;
  /** Highest of `rates`, in units per second. */
  maxRate: number;
  /** (maxRate − minRate) / medianRate, dimensionless (0.05 = 5 %). */
  spread: number;
}

/** Verdict of a budget: `met`, `NOT met`, or undefined when the case has no budget. */
export type BudgetVerdict = 'met' | 'NOT met' | undefined;

/** The outcome of one case. */
export interface CaseResult {
  /** The case as given. */
  benchmark: CaseInfo;
  /** Baseline measurements. */
  baseline: SideResult;
  /** Subject measurements. */
  subject: SideResult;
  /** subject.medianRate / baseline.medianRate, dimensionless (> 1: the subject is faster). */
  ratio: number;
  /** Whether the budget was met. */
  verdict: BudgetVerdict;
}

const defaults: Required<HarnessOptions> = { targetSampleMs: 150, samples: 7, warmupMs: 500 };
// Beyond this many iterations a side that still takes no measurable time does no work.
const maxIterations = 2 ** 40;

/**
 * A step of the measurement procedure: time one run of `iterations` iterations of a side
 * (0: baseline, 1: subject). The driver of the procedure answers with the run's duration, in
 * seconds. The procedure is written once, as a generator, and driven synchronously by
 * {@link runCase} and asynchronously by {@link runAsyncCase}.
 */
interface TimedRun {
  side: 0 | 1;
  iterations: number;
}

/** A measurement procedure: yields runs to time, receives their seconds, returns `T`. */
type Procedure<T> = Generator<TimedRun, T, number>;

/** Names, iterations per sample and sample rates (units per second) of both sides. */
interface Samples {
  names: readonly [string, string];
  iterations: [number, number];
  rates: [number[], number[]];
}

/** Iterations that would have lasted `targetSeconds`, given that `iterations` took `seconds`. */
function scaleIterations(iterations: number, seconds: number, targetSeconds: number): number {
  return Math.max(1, Math.round((iterations * targetSeconds) / seconds));
}

/** Grows the iteration count until a run is long enough to time, then scales it to the target. */
function* calibrate(side: 0 | 1, name: string, targetSeconds: number): Procedure<number> {
  let iterations = 1;
  for (;;) {
    const seconds = yield { side, iterations };
    if (seconds >= targetSeconds / 10) return scaleIterations(iterations, seconds, targetSeconds);
    iterations *= seconds < targetSeconds / 1000 ? 10 : 2;
    if (iterations > maxIterations) {
      throw new Error(`benchmark side '${name}' takes no measurable time`);
    }
  }
}

/**
 * Runs the side untimed for `warmupSeconds` so the JIT reaches its steady state, re-scaling the
 * iteration count after every run (the optimized code is faster than the calibration saw).
 */
function* warmUp(
  side: 0 | 1,
  iterations: number,
  warmupSeconds: number,
  targetSeconds: number,
): Procedure<number> {
  let spent = 0;
  let current = iterations;
  while (spent < warmupSeconds) {
    const seconds = yield { side, iterations: current };
    spent += seconds;
    current = scaleIterations(current, seconds, targetSeconds);
  }
  return current;
}

/** The measurement of {@link runCase} and {@link runAsyncCase}, whichever times the runs. */
function* sampleSides(
  benchmark: CaseInfo & { baseline: { name: string }; subject: { name: string } },
  options: HarnessOptions,
): Procedure<Samples> {
  const { targetSampleMs, samples, warmupMs } = { ...defaults, ...options };
  const names = [benchmark.baseline.name, benchmark.subject.name] as const;
  const unitsPerIteration = benchmark.unitsPerIteration ?? 1;
  const targetSeconds = targetSampleMs / 1000;
  const iterations: [number, number] = [0, 0];
  for (const side of [0, 1] as const) {
    const calibrated = yield* calibrate(side, names[side], targetSeconds);
    iterations[side] = yield* warmUp(side, calibrated, warmupMs / 1000, targetSeconds);
  }
  const rates: [number[], number[]] = [[], []];
  for (let round = 0; round < samples; round++) {
    const order = round % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const);
    for (const side of order) {
      const count = iterations[side];
      const seconds = yield { side, iterations: count };
      rates[side].push((count * unitsPerIteration) / seconds);
    }
  }
  return { names, iterations, rates };
}

/** Median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * The statistics of one side's samples, for runners that measure in their own way
 * (bench/load-harness.ts, bench/cpu-cost.ts).
 *
 * @param iterationsPerSample - what one sample was made of, printed with the results.
 * @param rates - the rate of each sample in units per second, in the order taken (not empty).
 */
export function sideResult(name: string, iterationsPerSample: number, rates: number[]): SideResult {
  const medianRate = median(rates);
  const minRate = Math.min(...rates);
  const maxRate = Math.max(...rates);
  return {
    name,
    iterationsPerSample,
    rates,
    medianRate,
    minRate,
    maxRate,
    spread: (maxRate - minRate) / medianRate,
  };
}

/**
 * Judges a budget: `met` when every condition given holds for `ratio` (subject/baseline, of
 * median rates) and `rate` (the median subject rate, units per second); undefined without a
 * budget.
 */
export function verdict(
  budget: BenchmarkBudget | undefined,
  ratio: number,
  rate: number,
): BudgetVerdict {
  if (budget === undefined) return undefined;
  const ratioMet =
    (budget.minRatio === undefined || ratio >= budget.minRatio) &&
    (budget.maxRatio === undefined || ratio <= budget.maxRatio);
  const rateMet = budget.minRatePerSecond === undefined || rate >= budget.minRatePerSecond;
  const amountMet = budget.maxAmount === undefined || rate <= budget.maxAmount;
  return ratioMet && rateMet && amountMet ? 'met' : 'NOT met';
}

/** Assembles a case's result from its two sides: the ratio of medians and the verdict. */
export function caseResult(
  benchmark: CaseInfo,
  baseline: SideResult,
  subject: SideResult,
): CaseResult {
  const ratio = subject.medianRate / baseline.medianRate;
  return {
    benchmark,
    baseline,
    subject,
    ratio,
    verdict: verdict(benchmark.budget, ratio, subject.medianRate),
  };
}

function resultOf(benchmark: CaseInfo, { names, iterations, rates }: Samples): CaseResult {
  return caseResult(
    benchmark,
    sideResult(names[0], iterations[0], rates[0]),
    sideResult(names[1], iterations[1], rates[1]),
  );
}

/** Seconds since `start`, a `process.hrtime.bigint()` reading. */
function secondsSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** Times one call of `side.run(iterations)`, in seconds. */
function timeRun(side: BenchmarkSide, iterations: number): number {
  const start = process.hrtime.bigint();
  side.run(iterations);
  return secondsSince(start);
}

/** Times one call of `side.run(iterations)` until its promise settles, in seconds. */
async function timeAsyncRun(side: AsyncBenchmarkSide, iterations: number): Promise<number> {
  const start = process.hrtime.bigint();
  await side.run(iterations);
  return secondsSince(start);
}

/**
 * Runs a procedure to its end, timing each run it asks for with `time`: synchronously while
 * `time` returns numbers, so a synchronous case never waits for the event loop, and resuming
 * after each promise when it returns promises.
 */
function drive<T>(procedure: Procedure<T>, time: (run: TimedRun) => number): T;
function drive<T>(procedure: Procedure<T>, time: (run: TimedRun) => Promise<number>): Promise<T>;
function drive<T>(
  procedure: Procedure<T>,
  time: (run: TimedRun) => number | Promise<number>,
): T | Promise<T> {
  const resume = (seconds: number): T | Promise<T> => {
    let step = procedure.next(seconds);
    while (step.done !== true) {
      const timed = time(step.value);
      if (typeof timed !== 'number') return timed.then(resume);
      step = procedure.next(timed);
    }
    return step.value;
  };
  // The argument of a generator's first next() is discarded.
  return resume(0);
}

/**
 * Measures one case: calibrates both sides to samples of about `targetSampleMs`, warms them up,
 * then takes `samples` timed samples of each, alternating sides and swapping which goes first
 * every round, so that drift (load, frequency, GC debt) falls on both sides alike.
 */
export function runCase(benchmark: BenchmarkCase, options: HarnessOptions = {}): CaseResult {
  const sides = [benchmark.baseline, benchmark.subject] as const;
  const samples = drive(sampleSides(benchmark, options), (run) =>
    timeRun(sides[run.side], run.iterations),
  );
  benchmark.verify?.();
  return resultOf(benchmark, samples);
}

/**
 * Measures an asynchronous case exactly as {@link runCase} measures a synchronous one (same
 * calibration, warm-up, interleaved samples, medians and verdict; the same defaults). A
 * sample's time runs until the promise of `run` settles, so it includes any waiting, e.g. the
 * round trips to a database server. For `measured` cases (see bench/history-postgres.bench.ts).
 */
export async function runAsyncCase(
  benchmark: AsyncBenchmarkCase,
  options: HarnessOptions = {},
): Promise<CaseResult> {
  const sides = [benchmark.baseline, benchmark.subject] as const;
  const samples = await drive(sampleSides(benchmark, options), (run) =>
    timeAsyncRun(sides[run.side], run.iterations),
  );
  await benchmark.verify?.();
  return resultOf(benchmark, samples);
}

/** Formats a rate in units per second with an SI prefix and three significant digits. */
export function formatRate(ratePerSecond: number, unit: string): string {
  const prefixes: readonly [number, string][] = [
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [scale, prefix] of prefixes) {
    if (ratePerSecond >= scale) {
      return `${(ratePerSecond / scale).toPrecision(3)} ${prefix} ${unit}/s`;
    }
  }
  return `${ratePerSecond.toPrecision(3)} ${unit}/s`;
}

/** A figure of a case: a rate (`12.3 k samples/s`) or, for amount cases, `0.812 s`. */
function formatFigure(value: number, benchmark: CaseInfo): string {
  if (benchmark.quantity === 'amount') return `${value.toPrecision(3)} ${benchmark.unit}`;
  return formatRate(value, benchmark.unit);
}

function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)} %`;
}

function describeBudget(benchmark: CaseInfo): string {
  const budget = benchmark.budget;
  if (budget === undefined) return '—';
  const parts: string[] = [];
  if (budget.minRatePerSecond !== undefined) {
    parts.push(`≥ ${formatRate(budget.minRatePerSecond, benchmark.unit)}`);
  }
  if (budget.maxAmount !== undefined) parts.push(`≤ ${formatFigure(budget.maxAmount, benchmark)}`);
  if (budget.minRatio !== undefined) parts.push(`ratio ≥ ${budget.minRatio}`);
  if (budget.maxRatio !== undefined) parts.push(`ratio ≤ ${budget.maxRatio}`);
  return parts.join(' and ');
}

function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  const line = (row: readonly string[]): string =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  const [header, ...body] = rows;
  return [line(header ?? []), rule, ...body.map(line)].join('\n');
}

/**
 * Renders the results: the ratio table (the headline figures), then the absolute rates and
 * sample statistics of every side, then the budgets with their verdicts.
 */
export function formatReport(results: readonly CaseResult[]): string {
  const out: string[] = [];
  out.push(
    table([
      ['case', 'baseline', 'subject', 'ratio', 'budget', 'verdict'],
      ...results.map((result) => [
        result.benchmark.name,
        formatFigure(result.baseline.medianRate, result.benchmark),
        formatFigure(result.subject.medianRate, result.benchmark),
        `${result.ratio.toFixed(3)}×`,
        describeBudget(result.benchmark),
        result.verdict ?? '—',
      ]),
    ]),
  );
  out.push(
    '',
    'ratio = median subject rate / median baseline rate, measured interleaved (for amounts ' +
      'such as seconds or MB: subject / baseline, lower is better).',
    '',
  );

  out.push('Supporting figures (absolute; median, min–max, spread = (max − min) / median):');
  for (const result of results) {
    out.push(`  ${result.benchmark.name}`);
    for (const [role, side] of [
      ['baseline', result.baseline],
      ['subject', result.subject],
    ] as const) {
      const unit = result.benchmark.unit;
      const figure = (value: number) => formatFigure(value, result.benchmark);
      out.push(
        `    ${role.padEnd(8)}  ${side.name}: ${figure(side.medianRate)}` +
          ` (${figure(side.minRate)} – ${figure(side.maxRate)},` +
          ` spread ${formatPercent(side.spread)}; ${side.rates.length} samples` +
          ` of ${side.iterationsPerSample} iterations × ${result.benchmark.unitsPerIteration ?? 1}` +
          ` ${unit})`,
      );
    }
  }

  const judged = results.filter((result) => result.verdict !== undefined);
  if (judged.length > 0) {
    out.push('', 'Budgets:');
    for (const result of judged) {
      out.push(
        `  ${result.verdict === 'met' ? 'met    ' : 'NOT MET'}  ${result.benchmark.name}: ` +
          `${describeBudget(result.benchmark)} (${result.benchmark.budget?.description}); ` +
          `measured ${formatFigure(result.subject.medianRate, result.benchmark)}, ` +
          `ratio ${result.ratio.toFixed(3)}`,
      );
    }
    const missed = judged.filter((result) => result.verdict === 'NOT met').length;
    out.push(
      '',
      missed === 0
        ? `All ${judged.length} budgets met.`
        : `${missed} of ${judged.length} budgets NOT met (reported only; the exit code stays 0).`,
    );
  }
  return `${out.join('\n')}\n`;
}

/**
 * A latency side: prints p50, p99 and max of `latencies` (ms, one per change) and reports the
 * "rate" 1000 / p99, so a budget of p99 < X ms reads as a minimum rate of 1000 / X.
 */
export function latencySide(name: string, latencies: number[]): SideResult {
  const sorted = [...latencies].sort((a, b) => a - b);
  const p = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  process.stdout.write(
    `  ${name}: ${latencies.length} changes, p50 ${p(0.5).toFixed(1)} ms, p99 ${p(0.99).toFixed(1)} ms, max ${p(1).toFixed(1)} ms\n`,
  );
  return sideResult(name, latencies.length, [1000 / Math.max(p(0.99), 0.001)]);
}

/**
 * Runs `baseline` then `subject`, `runs` times, one at a time, for cases whose every run sets
 * up and measures anew; resolves with each side's figures (e.g. rates) in the order taken.
 */
export async function alternateRuns(
  runs: number,
  baseline: () => Promise<number>,
  subject: () => Promise<number>,
): Promise<[number[], number[]]> {
  const figures: [number[], number[]] = [[], []];
  for (let run = 0; run < runs; run++) {
    figures[0].push(await baseline());
    figures[1].push(await subject());
  }
  return figures;
}
