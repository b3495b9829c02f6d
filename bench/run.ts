/**
 * `npm run bench [-- FILTER…]`: runs every case exported as `cases` by the `*.bench.ts` files of
 * this folder (timed code, or HTTP load cases of bench/load-harness.ts) and prints the ratio
 * table. A FILTER keeps the cases whose file name (without `.bench.ts`) or case name contains
 * it, case-insensitively; several filters keep the union.
 *
 * The exit code is 0 whether budgets are met or not; it is 1 only when no case matches or a
 * benchmark file is malformed.
 */
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  type BenchmarkCase,
  type CaseResult,
  formatReport,
  type MeasuredCase,
  runCase,
} from './harness.js';
import { isLoadCase, type LoadCase, runLoadCase } from './load-harness.js';

/** A case of any kind: timed synchronous code, an HTTP load (bench/load-harness.ts), or measured. */
type AnyCase = BenchmarkCase | LoadCase | MeasuredCase;

function isMeasuredCase(value: AnyCase): value is MeasuredCase {
  return (value as { kind?: unknown }).kind === 'measured';
}

const suffix = '.bench.ts';
const folder = path.dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2).map((filter) => filter.toLowerCase());

async function loadCases(file: string): Promise<AnyCase[]> {
  const module: { cases?: unknown } = await import(pathToFileURL(path.join(folder, file)).href);
  if (!Array.isArray(module.cases)) throw new Error(`${file} does not export an array 'cases'`);
  return module.cases as AnyCase[];
}

function matches(file: string, benchmark: AnyCase): boolean {
  if (filters.length === 0) return true;
  const text = `${file.slice(0, -suffix.length)} ${benchmark.name}`.toLowerCase();
  return filters.some((filter) => text.includes(filter));
}

const files = readdirSync(folder)
  .filter((file) => file.endsWith(suffix))
  .sort();
const selected: AnyCase[] = [];
const available: string[] = [];
for (const file of files) {
  for (const benchmark of await loadCases(file)) {
    available.push(benchmark.name);
    if (matches(file, benchmark)) selected.push(benchmark);
  }
}

if (selected.length === 0) {
  process.stderr.write(
    `No benchmark matches ${filters.map((filter) => `'${filter}'`).join(' or ')}. ` +
      `Available:\n${available.map((name) => `  ${name}\n`).join('')}`,
  );
  process.exit(1);
}

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
process.stdout.write(
  `tagd benchmarks — Node ${process.version}, ${cpu}, ${os.availableParallelism()} cores, ` +
    `load average ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}\n\n`,
);

const results: CaseResult[] = [];
for (const benchmark of selected) {
  process.stdout.write(`running ${benchmark.name} …\n`);
  results.push(
    isLoadCase(benchmark)
      ? await runLoadCase(benchmark)
      : isMeasuredCase(benchmark)
        ? await benchmark.measure()
        : runCase(benchmark),
  );
}
process.stdout.write(`\n${formatReport(results)}`);
