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
  /** Least median subject rate, in the case's units per second. */
  minRatePerSecond?: number;
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
export type CaseInfo = Pick<BenchmarkCase, 'name' | 'unit' | 'unitsPerIteration' | 'budget'>;

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

/** Times one call of `side.run(iterations)`, in seconds. */
function timeRun(side: BenchmarkSide, iterations: number): number {
  const start = process.hrtime.bigint();
  side.run(iterations);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** Iterations that would have lasted `targetSeconds`, given that `iterations` took `seconds`. */
function scaleIterations(iterations: number, seconds: number, targetSeconds: number): number {
  return Math.max(1, Math.round((iterations * targetSeconds) / seconds));
}

/** Grows the iteration count until a run is long enough to time, then scales it to the target. */
function calibrate(side: BenchmarkSide, targetSeconds: number): number {
  let iterations = 1;
  for (;;) {
    const seconds = timeRun(side, iterations);
    if (seconds >= targetSeconds / 10) return scaleIterations(iterations, seconds, targetSeconds);
    iterations *= seconds < targetSeconds / 1000 ? 10 : 2;
    if (iterations > maxIterations) {
      throw new Error(`benchmark side '${side.name}' takes no measurable time`);
    }
  }
}

/**
 * Runs the side untimed for `warmupSeconds` so the JIT reaches its steady state, re-scaling the
 * iteration count after every run (the optimized code is faster than the calibration saw).
 */
function warmUp(
  side: BenchmarkSide,
  iterations: number,
  warmupSeconds: number,
  targetSeconds: number,
): number {
  let spent = 0;
  let current = iterations;
  while (spent < warmupSeconds) {
    const seconds = timeRun(side, current);
    spent += seconds;
    current = scaleIterations(current, seconds, targetSeconds);
  }
  return current;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function sideResult(name: string, iterationsPerSample: number, rates: number[]): SideResult {
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

function judge(budget: BenchmarkBudget | undefined, ratio: number, rate: number): BudgetVerdict {
  if (budget === undefined) return undefined;
  const ratioMet = budget.minRatio === undefined || ratio >= budget.minRatio;
  const rateMet = budget.minRatePerSecond === undefined || rate >= budget.minRatePerSecond;
  return ratioMet && rateMet ? 'met' : 'NOT met';
}

/**
 * Measures one case: calibrates both sides to samples of about `targetSampleMs`, warms them up,
 * then takes `samples` timed samples of each, alternating sides and swapping which goes first
 * every round, so that drift (load, frequency, GC debt) falls on both sides alike.
 */
export function runCase(benchmark: BenchmarkCase, options: HarnessOptions = {}): CaseResult {
  const { targetSampleMs, samples, warmupMs } = { ...defaults, ...options };
  const targetSeconds = targetSampleMs / 1000;
  const unitsPerIteration = benchmark.unitsPerIteration ?? 1;
  const sides = [benchmark.baseline, benchmark.subject] as const;

  const iterations = sides.map((side) =>
    warmUp(side, calibrate(side, targetSeconds), warmupMs / 1000, targetSeconds),
  );
  const rates: [number[], number[]] = [[], []];
  for (let round = 0; round < samples; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const index of order) {
      const side = sides[index] as BenchmarkSide;
      const count = iterations[index] as number;
      const seconds = timeRun(side, count);
      rates[index]?.push((count * unitsPerIteration) / seconds);
    }
  }
  benchmark.verify?.();

  const baseline = sideResult(benchmark.baseline.name, iterations[0] as number, rates[0]);
  const subject = sideResult(benchmark.subject.name, iterations[1] as number, rates[1]);
  const ratio = subject.medianRate / baseline.medianRate;
  return {
    benchmark,
    baseline,
    subject,
    ratio,
    verdict: judge(benchmark.budget, ratio, subject.medianRate),
  };
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
  if (budget.minRatio !== undefined) parts.push(`ratio ≥ ${budget.minRatio}`);
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
        formatRate(result.baseline.medianRate, result.benchmark.unit),
        formatRate(result.subject.medianRate, result.benchmark.unit),
        `${result.ratio.toFixed(3)}×`,
        describeBudget(result.benchmark),
        result.verdict ?? '—',
      ]),
    ]),
  );
  out.push('', 'ratio = median subject rate / median baseline rate, measured interleaved.', '');

  out.push('Supporting figures (absolute; median, min–max, spread = (max − min) / median):');
  for (const result of results) {
    out.push(`  ${result.benchmark.name}`);
    for (const [role, side] of [
      ['baseline', result.baseline],
      ['subject', result.subject],
    ] as const) {
      const unit = result.benchmark.unit;
      out.push(
        `    ${role.padEnd(8)}  ${side.name}: ${formatRate(side.medianRate, unit)}` +
          ` (${formatRate(side.minRate, unit)} – ${formatRate(side.maxRate, unit)},` +
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
          `measured ${formatRate(result.subject.medianRate, result.benchmark.unit)}, ` +
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
