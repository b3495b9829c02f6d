/**
 * Client-side CPU cost of a protocol stream: a peer (server) runs in a child process, so its
 * CPU is not counted, and two clients take turns consuming the same stream from it — a bare
 * protocol client as the baseline, the tagd driver as the subject. What is measured is the CPU
 * time of this process (user + system, process.cpuUsage) per unit received (register read,
 * notification) while the stream runs; rates are units per CPU second (higher is cheaper).
 *
 * Used by bench/modbus.bench.ts and bench/opcua.bench.ts, which supply the peer, the sides and
 * their progress lines; the result is in the harness's format (a `measured` case).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type { DriverDeps } from '../drivers/driver.js';
import {
  type CaseInfo,
  type CaseResult,
  caseResult,
  type MeasuredCase,
  type SideResult,
  sideResult,
} from './harness.js';

/** A client that consumes the peer's stream and counts what it receives. */
export interface CpuCostSide<Peer> {
  /** Label printed with the results. */
  name: string;
  /** Connects to the peer and starts consuming; resolves once it runs. */
  start(peer: Peer): Promise<void>;
  /** Units received so far. */
  count(): number;
  /** Disconnects and releases what start() took. */
  stop(): Promise<void>;
}

/** What one timed sample measured. */
export interface CpuSample {
  /** Units received during the sample. */
  units: number;
  /** CPU time of this process (user + system) during the sample, seconds. */
  cpuSeconds: number;
  /** Wall time of the sample, seconds. */
  wallSeconds: number;
}

/** A CPU-cost case: what to start, what to count and what to print. */
export interface CpuCostCase<Peer, Side extends CpuCostSide<Peer> = CpuCostSide<Peer>>
  extends Pick<CaseInfo, 'name' | 'unit' | 'budget'> {
  /** Starts the peer; `close` stops it and removes what it left. */
  startPeer(): Promise<{ peer: Peer; close(): Promise<void> }>;
  /** The bare client. */
  baseline: Side;
  /** The tagd driver. */
  subject: Side;
  /** What one counted unit is, plural, e.g. `registers` (for timeout messages). */
  counted: string;
  /**
   * Units a side must have received before a sample's timing starts (initial values, first
   * polls: set-up costs that are not the steady state), and what they are, e.g.
   * `the first three polls`.
   */
  settle: { units: number; what: string };
  /** Units counted per timed sample; printed as the sample size. */
  window: number;
  /** Timed samples per side, taken alternately with the other side. */
  samples: number;
  /** Longest wait for the settling units or for one sample's window, ms. */
  timeoutMs: number;
  /** The progress line printed after each sample (without indentation). */
  describeSample(side: Side, sample: CpuSample): string;
  /** The summary line printed after the last sample (without indentation). */
  describeMedians(baseline: SideResult, subject: SideResult): string;
}

const log = (line: string) => process.stdout.write(`  ${line}\n`);

/** Resolves once `ready()` holds, polling every 20 ms; rejects after `timeoutMs`. */
export async function until(ready: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * What a subject side gives its tagd driver: a fresh TagStore on the system clock, a silent
 * logger and `stateDir`. Imported on use, like the drivers, so that listing the benchmarks
 * loads none of it.
 */
export async function driverDeps(stateDir: string): Promise<DriverDeps> {
  const { TagStore } = await import('../src/tags/tag-store.js');
  const { systemClock } = await import('../src/clock.js');
  return {
    store: new TagStore({ clock: systemClock }),
    clock: systemClock,
    logger: pino({ level: 'silent' }),
    stateDir,
  };
}

/** A peer in a child process. */
export interface PeerProcess<Announcement> {
  /** What the child printed on its first JSON line, e.g. `{ port }`. */
  announcement: Announcement;
  /** The child's process id (its CPU time is in /proc/PID/stat). */
  pid: number;
  /** Sends `signal` and resolves once the child exited. */
  stop(signal: NodeJS.Signals): Promise<void>;
}

/**
 * Runs the TypeScript file `script` (a URL; through tsx) with `args` in a child process and
 * resolves with the first line it prints that starts with `{`, parsed as JSON. Rejects when the
 * child exits before; `what` names it in that error.
 */
export async function startPeerProcess<Announcement>(
  script: URL,
  args: readonly string[],
  what: string,
): Promise<PeerProcess<Announcement>> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(script), ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const announcement = await new Promise<Announcement>((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk) => {
      text += chunk;
      const line = text.split('\n').find((candidate) => candidate.startsWith('{'));
      if (line) resolve(JSON.parse(line) as Announcement);
    });
    child.once('exit', (code) => reject(new Error(`${what} exited (${code})`)));
  });
  return {
    announcement,
    pid: child.pid as number,
    async stop(signal) {
      child.kill(signal);
      await exited;
    },
  };
}

/** One timed sample of a side: starts it, lets it settle, counts `window` units, stops it. */
async function sample<Peer, Side extends CpuCostSide<Peer>>(
  definition: CpuCostCase<Peer, Side>,
  side: Side,
  peer: Peer,
): Promise<number> {
  const { settle, window, counted, timeoutMs } = definition;
  await side.start(peer);
  try {
    await until(() => side.count() >= settle.units, `${side.name}: ${settle.what}`, timeoutMs);
    const startCount = side.count();
    const startCpu = process.cpuUsage();
    const startWall = process.hrtime.bigint();
    await until(
      () => side.count() - startCount >= window,
      `${side.name}: ${window} ${counted}`,
      timeoutMs,
    );
    const cpu = process.cpuUsage(startCpu);
    const measured: CpuSample = {
      units: side.count() - startCount,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      wallSeconds: Number(process.hrtime.bigint() - startWall) / 1e9,
    };
    log(definition.describeSample(side, measured));
    return measured.units / measured.cpuSeconds;
  } finally {
    await side.stop();
  }
}

/**
 * The `measured` case for bench/run.ts: starts the peer, takes `samples` samples per side,
 * alternating sides and swapping which goes first every round, stops the peer whatever
 * happens, and judges the budget on the medians (units per CPU second).
 */
export function cpuCostCase<Peer, Side extends CpuCostSide<Peer>>(
  definition: CpuCostCase<Peer, Side>,
): MeasuredCase {
  const info: CaseInfo = {
    name: definition.name,
    unit: definition.unit,
    budget: definition.budget,
  };
  return {
    kind: 'measured',
    ...info,
    async measure(): Promise<CaseResult> {
      const { peer, close } = await definition.startPeer();
      try {
        const sides = [definition.baseline, definition.subject] as const;
        const rates: [number[], number[]] = [[], []];
        for (let round = 0; round < definition.samples; round++) {
          for (const index of round % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
            rates[index].push(await sample(definition, sides[index], peer));
          }
        }
        const baseline = sideResult(sides[0].name, definition.window, rates[0]);
        const subject = sideResult(sides[1].name, definition.window, rates[1]);
        log(definition.describeMedians(baseline, subject));
        return caseResult(info, baseline, subject);
      } finally {
        await close();
      }
    },
  };
}
