/**
 * Footprint (DESIGN §6, issue 15): how soon the built daemon answers, and how much memory it
 * holds, against a bare node process in the same run.
 *
 * - `footprint: demo ready` — seconds from spawning `node dist/src/cli.js start --demo` to its
 *   first 200 on `/healthz` (budget < 1 s, issue 15). The state directory is prepared by one
 *   untimed start first (keys, the admin account, the demo profile copy), so what is timed is
 *   a restart, as systemd does it.
 * - `footprint: 10,000 simulated tags ready` — the same for a profile with one simulator driver
 *   of 10,000 tags and nothing else (budget < 1.5 s, DESIGN §6).
 * - `footprint: demo RSS after 60 s` and `footprint: 10,000 simulated tags RSS after 60 s` —
 *   the resident set size (VmRSS) 60 s after spawning (budget < 120 MB with 10,000 tags).
 *
 * Baseline: `node -e` running a node:http server that answers `/healthz` with the same JSON, so
 * the ratios say how much tagd adds to what node itself costs. Starts are taken interleaved
 * (baseline, demo, 10,000 tags, then the next round), `samples` rounds; the three RSS processes
 * run side by side for the 60 s. Each sample's CPU time to ready (user + system, from
 * /proc/PID/stat) is printed as it is taken: on a busy machine it varies less than the wall time.
 *
 * Needs the build (`npm run build`) and Linux (/proc). `TAGD_BENCH_FOOTPRINT_RSS_SECONDS`
 * shortens the 60 s while working on this file.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cpuSecondsOf,
  requireBuild,
  rssMiBOf,
  simulatorProfile,
  startArgs,
  startReady,
  stop,
} from './daemon-process.js';
import {
  type CaseInfo,
  type CaseResult,
  caseResult,
  type MeasuredCase,
  sideResult,
} from './harness.js';

/** Timed starts per side. */
const samples = 5;
/** Seconds after spawning at which RSS is read. */
const rssSeconds = Number(process.env.TAGD_BENCH_FOOTPRINT_RSS_SECONDS ?? 60);
/** Longest wait for a process to answer, ms: beyond it the sample fails. */
const readyTimeoutMs = 30_000;
/** Tags of the large profile. */
const tagCount = 10_000;
/** Polling interval of `/healthz` while waiting for ready, ms: the resolution of the figure. */
const pollMs = 5;

/** A process under measurement: how it is started, and the folder it keeps its state in. */
interface Side {
  name: string;
  args(port: number): string[];
  env?: Record<string, string>;
}

/** node:http answering `/healthz` as tagd does, nothing more. */
const bareNode: Side = {
  name: 'bare node -e, node:http answering /healthz',
  args: (port) => [
    '-e',
    `require('node:http').createServer((req, res) => {
       res.setHeader('Content-Type', 'application/json; charset=utf-8');
       res.end('{"status":"ok","version":"0.1.0"}');
     }).listen(${port}, '127.0.0.1');`,
  ],
};

/** What one start measured. */
interface Start {
  /** Wall seconds from spawn to the first 200. */
  readySeconds: number;
  /** CPU seconds (user + system) the process had used by then. */
  cpuSeconds: number;
}

/** Starts a side and waits until it answers. */
function startSide(side: Side) {
  return startReady(side.args, side.env, side.name, { timeoutMs: readyTimeoutMs, pollMs });
}

async function timedStart(side: Side): Promise<Start> {
  const { child, spawnedAt } = await startSide(side);
  try {
    const readySeconds = (performance.now() - spawnedAt) / 1000;
    const cpuSeconds = await cpuSecondsOf(child.pid as number);
    return { readySeconds, cpuSeconds };
  } finally {
    await stop(child);
  }
}

/** The profile of the large case: one simulator driver of {@link tagCount} tags. */
function largeProfile(): unknown {
  return simulatorProfile(tagCount, [
    { kind: 'sine', amplitude: 5, offset: 60, periodSeconds: 60 },
    { kind: 'ramp', min: 0, max: 100, periodSeconds: 120 },
    { kind: 'randomWalk', start: 4, step: 0.05, min: 2, max: 6 },
    { kind: 'square', low: 0, high: 1, periodSeconds: 20 },
    { kind: 'counter', start: 0, step: 1 },
    { kind: 'boolean', periodSeconds: 30 },
  ]);
}

/** Every figure of the four cases, measured once (the cases share the processes). */
interface Figures {
  starts: Map<Side, Start[]>;
  rss: Map<Side, number>;
}

let measured: Promise<Figures> | undefined;

async function measureAll(): Promise<Figures> {
  requireBuild();
  const folder = await mkdtemp(join(tmpdir(), 'tagd-bench-footprint-'));
  try {
    const profileFile = join(folder, 'large-profile.json');
    await writeFile(profileFile, JSON.stringify(largeProfile()), { mode: 0o600 });
    const demo: Side = {
      name: 'tagd start --demo',
      args: (port) => startArgs(port, '--demo'),
      env: { TAGD_STATE_DIR: join(folder, 'demo-state') },
    };
    const large: Side = {
      name: `tagd start, ${tagCount.toLocaleString('en')} simulated tags`,
      args: (port) => startArgs(port, '--profile', profileFile),
      env: { TAGD_STATE_DIR: join(folder, 'large-state') },
    };
    const sides = [bareNode, demo, large];
    // The first start creates keys, the admin account and the demo copy: not what is timed.
    for (const side of [demo, large]) await timedStart(side);
    const starts = new Map<Side, Start[]>(sides.map((side) => [side, []]));
    for (let round = 0; round < samples; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const start = await timedStart(side);
        starts.get(side)?.push(start);
        process.stdout.write(
          `  ${side.name}: ready in ${start.readySeconds.toFixed(3)} s, ` +
            `${start.cpuSeconds.toFixed(2)} s of CPU\n`,
        );
      }
    }
    // Side by side for the RSS: a minute each would make the case three minutes long.
    const running = await Promise.all(
      sides.map(async (side) => ({ side, child: (await startSide(side)).child })),
    );
    const rss = new Map<Side, number>();
    try {
      await new Promise((resolve) => setTimeout(resolve, rssSeconds * 1000));
      for (const { side, child } of running) {
        rss.set(side, await rssMiBOf(child.pid as number));
      }
    } finally {
      await Promise.all(running.map(({ child }) => stop(child)));
    }
    process.stdout.write(
      `  RSS after ${rssSeconds} s: ${sides
        .map((side) => `${side.name} ${rss.get(side)?.toFixed(1)} MB`)
        .join(', ')}\n`,
    );
    return { starts, rss };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** The figures, measured by the first case that asks. */
function figures(): Promise<Figures> {
  measured ??= measureAll();
  return measured;
}

function sideNamed(all: Figures, index: number): Side {
  return [...all.starts.keys()][index] as Side;
}

/**
 * A case comparing the process of `index` (1: demo, 2: the large profile) with the bare node
 * process, on the figures `pick` takes of each; `label` names the subject.
 */
function footprintCase(
  index: 1 | 2,
  info: CaseInfo,
  pick: (all: Figures, side: Side) => number[],
  label: (all: Figures, side: Side) => string = (_all, side) => side.name,
): MeasuredCase {
  return {
    ...info,
    kind: 'measured',
    async measure(): Promise<CaseResult> {
      const all = await figures();
      const side = sideNamed(all, index);
      return caseResult(
        info,
        sideResult(bareNode.name, 1, pick(all, bareNode)),
        sideResult(label(all, side), 1, pick(all, side)),
      );
    },
  };
}

function readyCase(index: 1 | 2, info: CaseInfo): MeasuredCase {
  return footprintCase(
    index,
    info,
    (all, of) => (all.starts.get(of) ?? []).map((start) => start.readySeconds),
    (all, side) => {
      const cpu = (all.starts.get(side) ?? []).map((start) => start.cpuSeconds).sort();
      const medianCpu = cpu[cpu.length >> 1] ?? Number.NaN;
      return `${side.name} (median ${medianCpu.toFixed(2)} s of CPU)`;
    },
  );
}

function rssCase(index: 1 | 2, info: CaseInfo): MeasuredCase {
  return footprintCase(index, info, (all, of) => [all.rss.get(of) ?? Number.NaN]);
}

export const cases: MeasuredCase[] = [
  readyCase(1, {
    name: 'footprint: demo ready',
    unit: 's',
    quantity: 'amount',
    budget: { maxAmount: 1, description: 'issue 15: demo ready < 1 s' },
  }),
  readyCase(2, {
    name: 'footprint: 10,000 simulated tags ready',
    unit: 's',
    quantity: 'amount',
    budget: { maxAmount: 1.5, description: 'DESIGN §6: ready < 1.5 s' },
  }),
  rssCase(1, {
    name: 'footprint: demo RSS after 60 s',
    unit: 'MB',
    quantity: 'amount',
    budget: { maxAmount: 120, description: 'DESIGN §6: RSS < 120 MB' },
  }),
  rssCase(2, {
    name: 'footprint: 10,000 simulated tags RSS after 60 s',
    unit: 'MB',
    quantity: 'amount',
    budget: { maxAmount: 120, description: 'DESIGN §6: RSS < 120 MB with 10,000 tags' },
  }),
];
