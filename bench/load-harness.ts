/**
 * HTTP load cases for the benchmark harness: the sibling of `runCase` for servers under load
 * (the results are built by the harness's `sideResult` and `caseResult`).
 *
 * A load case measures a baseline server and a subject server with the same load tool
 * (autocannon), the same request, the same connections and the same duration, alternating the
 * sides sample by sample, and reports the ratio of the median request rates like any other
 * case. The load runs in a worker thread, so the load generator does not share the servers'
 * event loop; the two servers listen side by side, the idle one costs nothing.
 */
import { createRequire } from 'node:module';
import {
  type BenchmarkBudget,
  type CaseResult,
  caseResult,
  median,
  sideResult,
} from './harness.js';

/** One server under load. */
export interface LoadSide {
  /** Label printed with the results, e.g. `bare node:http`. */
  name: string;
  /** Starts the server; resolves with its base URL, e.g. `http://127.0.0.1:40123`. */
  start(): Promise<string>;
  /** Stops the server and releases what start() took. */
  stop(): Promise<void>;
}

/** A load benchmark: the same request against a baseline server and a subject server. */
export interface LoadCase {
  /** Marks the case for `bench/run.ts`. */
  kind: 'load';
  /** Unique name, printed in the table and matched by the command-line filter. */
  name: string;
  /** What is counted, plural; rates are in units per second. One response is one unit. */
  unit: string;
  /** Path and query requested from both sides, e.g. `/api/v2/Tags/Sample/Demo/Line1/Pressure`. */
  path: string;
  /** Request headers, sent to both sides alike. */
  headers?: Record<string, string>;
  baseline: LoadSide;
  subject: LoadSide;
  budget?: BenchmarkBudget;
  /**
   * Called once both sides run, before any load: throws when they do not answer the request
   * as the case claims (for example different bodies).
   */
  verify?(baselineUrl: string, subjectUrl: string): Promise<void>;
}

/** Tuning of a load measurement. */
export interface LoadOptions {
  /** Concurrent keep-alive connections. Default: 20. */
  connections?: number;
  /** Length of one timed sample, seconds. Default: 5. */
  sampleSeconds?: number;
  /** Timed samples per side, taken alternately with the other side. Default: 5. */
  samples?: number;
  /** Untimed warm-up per side before sampling, seconds. Default: 2. */
  warmupSeconds?: number;
  /** Receives a progress line per sample. Default: stdout. */
  log?: (line: string) => void;
}

const defaults = { connections: 20, sampleSeconds: 5, samples: 5, warmupSeconds: 2 };

/** The subset of autocannon's result this harness reads. */
interface AutocannonResult {
  requests: { total: number };
  latency: { p50: number; p99: number };
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
}

type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;

// autocannon is CommonJS without type declarations; require() keeps the compiler out of it.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** True for the load cases among a `cases` export. */
export function isLoadCase(value: unknown): value is LoadCase {
  return (value as { kind?: unknown } | undefined)?.kind === 'load';
}

/** One autocannon run; throws on any error, timeout or non-2xx answer. */
async function load(
  url: string,
  headers: Record<string, string> | undefined,
  connections: number,
  seconds: number,
): Promise<AutocannonResult> {
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    headers: headers ?? {},
    workers: 1,
  });
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(
      `${url}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx answers`,
    );
  }
  return result;
}

/**
 * Measures one load case: starts both sides, verifies them, warms each up, then takes
 * `samples` timed samples per side, alternating sides and swapping which goes first every
 * round, and stops both sides whatever happens.
 */
export async function runLoadCase(
  benchmark: LoadCase,
  options: LoadOptions = {},
): Promise<CaseResult> {
  const { connections, sampleSeconds, samples, warmupSeconds } = { ...defaults, ...options };
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const sides = [benchmark.baseline, benchmark.subject] as const;
  const started: LoadSide[] = [];
  try {
    const urls: string[] = [];
    for (const side of sides) {
      urls.push(`${await side.start()}${benchmark.path}`);
      started.push(side);
    }
    const [baselineUrl, subjectUrl] = urls as [string, string];
    await benchmark.verify?.(baselineUrl, subjectUrl);
    for (const url of urls) await load(url, benchmark.headers, connections, warmupSeconds);

    const rates: [number[], number[]] = [[], []];
    const requests: [number[], number[]] = [[], []];
    for (let round = 0; round < samples; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const index of order) {
        const result = await load(
          urls[index] as string,
          benchmark.headers,
          connections,
          sampleSeconds,
        );
        const rate = result.requests.total / result.duration;
        rates[index]?.push(rate);
        requests[index]?.push(result.requests.total);
        log(
          `  ${index === 0 ? 'baseline' : 'subject '} sample ${round + 1}: ` +
            `${Math.round(rate)} ${benchmark.unit}/s, latency p50 ${result.latency.p50} ms, ` +
            `p99 ${result.latency.p99} ms`,
        );
      }
    }
    // A sample's "iterations" are its requests: the median count is printed with the results.
    return caseResult(
      benchmark,
      sideResult(benchmark.baseline.name, Math.round(median(requests[0])), rates[0]),
      sideResult(benchmark.subject.name, Math.round(median(requests[1])), rates[1]),
    );
  } finally {
    for (const side of started.reverse()) await side.stop();
  }
}
