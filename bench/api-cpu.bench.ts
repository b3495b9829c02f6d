/**
 * Authenticated `GET /api/v2/Tags/Sample/{path}`, as server CPU per request (issue 15): the
 * same two servers as bench/api.bench.ts (the bare node:http server and the real API), each in
 * a child process of its own, loaded in turn by autocannon from this process. What is measured
 * is each server's CPU time (user + system, /proc/PID/stat) per answered request; rates are
 * requests per CPU second, and the ratio is the throughput ratio the servers reach when the
 * CPU is what limits them.
 *
 * On a shared machine the throughput ratio of api.bench.ts swings with whatever else runs
 * (the load tool, the two servers and other processes share the cores); CPU per request moves
 * far less, so this case is the steadier reading of the same budget. Linux only (/proc).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { fullTagId } from './api-servers.js';
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

const child = fileURLToPath(new URL('./api-server-child.ts', import.meta.url));

interface Server {
  process: ChildProcess;
  url: string;
  headers: Record<string, string>;
}

async function startServer(kind: 'bare' | 'api'): Promise<Server> {
  const started = spawn(process.execPath, ['--import', 'tsx', child, kind], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    started.once('exit', (code) => reject(new Error(`the ${kind} server exited (${code})`)));
    started.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString()));
  });
  const { url, token } = JSON.parse(line) as { url: string; token: string };
  // The same request to both sides; the bare server ignores the token.
  return { process: started, url, headers: { Authorization: `Bearer ${token || 'none'}` } };
}

/** CPU seconds a process has used (Linux: utime + stime of /proc/PID/stat, 100 ticks a second). */
async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** One load run; resolves with requests per server CPU second. */
async function sample(server: Server, seconds: number): Promise<number> {
  const pid = server.process.pid as number;
  const before = await cpuSecondsOf(pid);
  const result = await autocannon({
    url: `${server.url}/api/v2/Tags/Sample/${fullTagId}`,
    connections,
    duration: seconds,
    headers: server.headers,
  });
  const cpu = (await cpuSecondsOf(pid)) - before;
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(`${server.url}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
  }
  return result.requests.total / cpu;
}

const info: CaseInfo = {
  name: 'api: GET Tags/Sample, server CPU per request',
  unit: 'requests per CPU',
  budget: {
    minRatio: 0.7,
    description: 'issue 15: ≥ 0.7 × bare node:http, per server CPU second',
  },
};

async function measure(): Promise<CaseResult> {
  const servers: Server[] = [];
  try {
    servers.push(await startServer('bare'), await startServer('api'));
    const rates: [number[], number[]] = [[], []];
    for (const server of servers) await sample(server, warmupSeconds);
    for (let round = 0; round < samples; round++) {
      for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const rate = await sample(servers[index] as Server, sampleSeconds);
        rates[index]?.push(rate);
        process.stdout.write(
          `  ${index === 0 ? 'baseline' : 'subject '} sample ${round + 1}: ` +
            `${(1e6 / rate).toFixed(1)} µs of server CPU per request\n`,
        );
      }
    }
    return caseResult(
      info,
      sideResult('bare node:http server, own process', 1, rates[0]),
      sideResult('tagd API, own process', 1, rates[1]),
    );
  } finally {
    for (const server of servers) server.process.kill('SIGTERM');
  }
}

export const cases: MeasuredCase[] = [{ ...info, kind: 'measured', measure }];
