/**
 * Server CPU per request of two API benchmark servers (bench/api-servers.ts), each in a child
 * process of its own (bench/api-server-child.ts), loaded in turn by autocannon from this
 * process with authenticated `GET /api/v2/Tags/Sample/{path}`. What is measured is each server's
 * CPU time (user + system, /proc/PID/stat) per answered request, in samples taken alternately
 * (which side goes first swaps every round) after an untimed warm-up of each.
 *
 * On a shared machine a throughput ratio of two servers swings with whatever else runs (the
 * load tool, the servers and other processes share the cores); CPU per request moves far less.
 * Used by bench/api-cpu.bench.ts and bench/assistant.bench.ts. Linux only (/proc).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { ApiServerKind } from './api-server-child.js';
import { fullTagId } from './api-servers.js';
import { startPeerProcess } from './cpu-cost.js';
import {
  type CaseInfo,
  type CaseResult,
  caseResult,
  type MeasuredCase,
  sideResult,
} from './harness.js';

/** Timed samples per side, alternating. */
const samples = 5;
/** Length of one sample, seconds. */
const sampleSeconds = 4;
/** Untimed load per side before sampling, seconds. */
const warmupSeconds = 2;
/** Concurrent keep-alive connections, as api.bench.ts. */
const connections = 20;

/** The path both servers are asked for. */
export const samplePath = `/api/v2/Tags/Sample/${fullTagId}`;

interface AutocannonResult {
  requests: { total: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
// autocannon is CommonJS without type declarations; require() keeps the compiler out of it.
const autocannon = createRequire(import.meta.url)('autocannon') as (
  options: Record<string, unknown>,
) => Promise<AutocannonResult>;

/** A running server of a case. */
export interface ServerProcess {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** The request headers (the Bearer token of the server's account; the bare server ignores it). */
  headers: Record<string, string>;
  pid: number;
}

/** One side of a server-CPU case. */
export interface ServerCpuSide {
  /** The server the child process runs. */
  kind: ApiServerKind;
  /** Label printed with the results. */
  name: string;
}

/** A server-CPU case: which servers, how the figures read, what a correct answer is. */
export interface ServerCpuCase extends Pick<CaseInfo, 'name' | 'budget'> {
  baseline: ServerCpuSide;
  subject: ServerCpuSide;
  /**
   * How the sides' figures read: `rate`, requests per server CPU second (higher is cheaper;
   * the ratio is the throughput ratio the servers reach when the CPU is what limits them), or
   * `cpu`, µs of server CPU per request (lower is cheaper; the ratio is the subject's cost in
   * baseline requests).
   */
  figure: 'rate' | 'cpu';
  /** Called once both servers run, before any load: throws when an answer is not as claimed. */
  verify?(baseline: ServerProcess, subject: ServerProcess): Promise<void>;
}

async function startServer(kind: ApiServerKind) {
  const child = await startPeerProcess<{ url: string; token: string }>(
    new URL('./api-server-child.ts', import.meta.url),
    [kind],
    `the ${kind} server`,
  );
  const { url, token } = child.announcement;
  const server: ServerProcess = {
    url,
    headers: { Authorization: `Bearer ${token || 'none'}` },
    pid: child.pid,
  };
  return { server, stop: () => child.stop('SIGTERM') };
}

/** CPU seconds a process has used (Linux: utime + stime of /proc/PID/stat, 100 ticks a second). */
async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** One load run; resolves with the server's CPU µs per answered request. */
async function sample(server: ServerProcess, seconds: number): Promise<number> {
  const before = await cpuSecondsOf(server.pid);
  const result = await autocannon({
    url: `${server.url}${samplePath}`,
    connections,
    duration: seconds,
    headers: server.headers,
  });
  const cpu = (await cpuSecondsOf(server.pid)) - before;
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(`${server.url}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
  }
  return (cpu * 1e6) / result.requests.total;
}

/** The `measured` case for bench/run.ts. */
export function serverCpuCase(definition: ServerCpuCase): MeasuredCase {
  const info: CaseInfo =
    definition.figure === 'rate'
      ? { name: definition.name, unit: 'requests per CPU', budget: definition.budget }
      : {
          name: definition.name,
          unit: 'µs CPU/request',
          quantity: 'amount',
          budget: definition.budget,
        };
  const log = (line: string) => process.stdout.write(`  ${line}\n`);
  return {
    kind: 'measured',
    ...info,
    async measure(): Promise<CaseResult> {
      const started: Awaited<ReturnType<typeof startServer>>[] = [];
      try {
        for (const side of [definition.baseline, definition.subject]) {
          started.push(await startServer(side.kind));
        }
        const servers = started.map(({ server }) => server) as [ServerProcess, ServerProcess];
        await definition.verify?.(...servers);
        for (const server of servers) await sample(server, warmupSeconds);
        const cpu: [number[], number[]] = [[], []];
        for (let round = 0; round < samples; round++) {
          for (const index of round % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
            const perRequest = await sample(servers[index], sampleSeconds);
            cpu[index].push(perRequest);
            log(
              `${index === 0 ? 'baseline' : 'subject '} sample ${round + 1}: ` +
                `${perRequest.toFixed(1)} µs of server CPU per request`,
            );
          }
        }
        const figures = (perRequest: number[]) =>
          definition.figure === 'rate' ? perRequest.map((micros) => 1e6 / micros) : perRequest;
        return caseResult(
          info,
          sideResult(definition.baseline.name, 1, figures(cpu[0])),
          sideResult(definition.subject.name, 1, figures(cpu[1])),
        );
      } finally {
        await Promise.all(started.map(({ stop }) => stop()));
      }
    },
  };
}
