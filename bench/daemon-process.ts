/**
 * The built daemon (or a bare `node -e` server in its place) in a child process under
 * measurement, as bench/footprint.bench.ts and bench/history-sustained.bench.ts run it: its
 * profile, spawned with its standard error kept, polled on `/healthz` until ready, read from
 * /proc (Linux) for its CPU time and resident set size, and stopped with SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { get } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { packageRoot } from '../src/package-root.js';
import { freePort } from './loopback.js';

/** A spawned process. */
export interface Launched {
  child: ChildProcess;
  /** `performance.now()` just before the spawn, ms. */
  spawnedAt: number;
  /** What the process wrote to standard error so far. */
  errors(): string;
}

/**
 * Spawns node with `args`, its standard output ignored, at log level `warn`, with `env` added to
 * this process's environment.
 */
function launch(args: string[], env: Record<string, string> = {}): Launched {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, TAGD_LOG_LEVEL: 'warn', ...env },
  });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  return { child, spawnedAt, errors: () => errors };
}

/** Whether `/healthz` on the loopback `port` answers 200 (false on a connection error). */
function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    }).on('error', () => resolve(false));
  });
}

/**
 * Resolves once the process answers 200 on `/healthz`, asking every `pollMs`; rejects when it
 * exits first or is not ready within `timeoutMs`. `name` names it in those errors.
 */
async function untilReady(
  child: ChildProcess,
  port: number,
  name: string,
  { timeoutMs, pollMs }: { timeoutMs: number; pollMs: number },
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}) before ready`);
    if (await healthy(port)) return;
    if (performance.now() > deadline) throw new Error(`${name} not ready in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** A process that answers on `/healthz`. */
export interface Ready extends Launched {
  /** The loopback port it listens on. */
  port: number;
}

/**
 * Launches node with `args(port)` for a free loopback port (see {@link launch}) and resolves
 * once it is ready (see {@link untilReady}). When it is not, prints its standard error, stops
 * it and rejects.
 */
export async function startReady(
  args: (port: number) => string[],
  env: Record<string, string> | undefined,
  name: string,
  wait: { timeoutMs: number; pollMs: number },
): Promise<Ready> {
  const port = await freePort();
  const launched = launch(args(port), env);
  try {
    await untilReady(launched.child, port, name, wait);
  } catch (error) {
    if (launched.errors()) process.stderr.write(launched.errors());
    await stop(launched.child);
    throw error;
  }
  return { ...launched, port };
}

/** The arguments of `tagd start` with `options`, listening on the loopback `port`. */
export function startArgs(port: number, ...options: string[]): string[] {
  return [cli, 'start', ...options, '--listen', `127.0.0.1:${port}`];
}

/** Sends SIGTERM (unless the process ended already) and resolves once it exited. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** CPU seconds a process has used (Linux: utime + stime of /proc/PID/stat, in clock ticks). */
export async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of proc(5), counted from the state (field 3) here; 100 ticks a second.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resident set size of a process, MiB (VmRSS of /proc/PID/status, kB / 1024). */
export async function rssMiBOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kilobytes = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
  if (!Number.isFinite(kilobytes)) throw new Error(`no VmRSS for process ${pid}`);
  return kilobytes / 1024;
}

/** The built daemon's entry point, `dist/src/cli.js`. */
const cli = join(packageRoot, 'dist/src/cli.js');

/** Throws, saying to build, when {@link cli} is missing. */
export function requireBuild(): void {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first`);
}

/**
 * A profile with one simulator driver `Sim` of `tagCount` tags scanned every second, tag `i`
 * named `Line{i % 100}/Tag{i}` and of kind `kinds[i % kinds.length]`; the HTTP listener is
 * replaced by `--listen` on start.
 */
export function simulatorProfile(
  tagCount: number,
  kinds: readonly Record<string, unknown>[],
): Record<string, unknown> {
  return {
    server: { http: { host: '127.0.0.1', port: 8080 } },
    drivers: [
      {
        type: 'simulator',
        name: 'Sim',
        scanIntervalMs: 1000,
        tags: Array.from({ length: tagCount }, (_, i) => ({
          name: `Line${i % 100}/Tag${i}`,
          ...kinds[i % kinds.length],
        })),
      },
    ],
  };
}
