/**
 * Sustained history logging (issue 20 item 7): the built daemon with one simulator driver of
 * 100,000 tags scanned every second, each tag a new value at every scan (counters, sines and
 * ramps), and a SQLite history logging them all on change: 100,000 samples a second. Before the
 * fix it dropped 120,000 samples in its first seconds ("history buffer full (100000 samples)").
 *
 * - `history: 100,000 tags/s sustained onChange to SQLite` — share of one core the daemon uses
 *   (user + system CPU of the process, /proc/PID/stat), one figure per second of the measured
 *   window. Met when no sample was dropped since the daemon started
 *   (`tagd_history_dropped_samples_total`, read from /metrics), the history stored at least
 *   95 % of 100,000 samples a second over the window (`tagd_history_appended_samples_total`),
 *   and the daemon used less than one core (appends run on its main thread: beyond a core it
 *   could not keep up).
 * - `history: 100,000 tags/s sustained onChange to SQLite, RSS` — the resident set size
 *   (VmRSS, MiB), one figure per second of the window.
 *
 * Baseline: the same daemon and profile without the history section, so the ratios say what
 * logging costs on top of simulating, storing and serving 100,000 tags. The sides run one after
 * the other (never side by side: they would share the two cores): each starts, settles for
 * `settleSeconds` (start-up, the first scans, the history's tag dictionary), then is measured
 * for its window (the subject 20 s, `TAGD_BENCH_HISTORY_SECONDS` changes it; the baseline half
 * that), then stopped with SIGTERM.
 *
 * The window covers the first half-minute of a history. SQLite's cost per sample grows with
 * each tag's history when every transaction holds one sample of each of many tags (it rewrites
 * one index page per tag), so a longer run of this profile falls behind after about a minute on
 * a 2-core machine (docs/operations.md, "Cost of many tags"); `TAGD_BENCH_HISTORY_SECONDS` runs
 * longer windows.
 *
 * Needs the build (`npm run build`) and Linux (/proc). `npm run bench -- sustained`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
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

/** Simulated tags, each logged at every scan. */
const tagCount = 100_000;
/** Seconds of the subject's measured window. */
const windowSeconds = Number(process.env.TAGD_BENCH_HISTORY_SECONDS ?? 20);
/** Seconds from ready to the start of the window. */
const settleSeconds = 5;
/** Longest wait for the daemon to answer /healthz, ms. */
const readyTimeoutMs = 60_000;
/** Least stored rate over the window for the budget, samples per second (95 % of the offer). */
const minStoredRate = 0.95 * tagCount;

const log = (line: string) => process.stdout.write(`  ${line}\n`);

/** What one side measured. */
interface Run {
  name: string;
  /** CPU share of one core, percent, one per second of the window. */
  cpuPercent: number[];
  /** VmRSS, MiB, one per second of the window. */
  rssMiB: number[];
  /** History counters (undefined without history). */
  history?: { dropped: number; storedPerSecond: number; maxBuffered: number };
}

/** The profile: one simulator of {@link tagCount} tags changing at every scan, maybe history. */
function profile(withHistory: boolean): unknown {
  // Kinds whose value changes at every 1 s scan (a random walk may stand still at its bounds).
  const kinds = [
    { kind: 'counter', start: 0, step: 1 },
    { kind: 'sine', amplitude: 5, offset: 60, periodSeconds: 60 },
    { kind: 'ramp', min: 0, max: 100, periodSeconds: 120 },
  ];
  return {
    ...simulatorProfile(tagCount, kinds),
    ...(withHistory
      ? { history: { backend: 'sqlite', log: [{ source: 'Sim/**', mode: 'onChange' }] } }
      : {}),
  };
}

/** GET on loopback: status and body (empty on a connection error). */
function fetchText(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    }).on('error', () => resolve({ status: 0, body: '' }));
  });
}

/** The history series of /metrics (loopback needs no token). */
async function historyCounters(
  port: number,
): Promise<{ appended: number; dropped: number; buffered: number }> {
  const { status, body } = await fetchText(port, '/metrics');
  if (status !== 200) throw new Error(`/metrics answered ${status}`);
  const value = (name: string) => {
    const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(body);
    if (!match) throw new Error(`/metrics has no ${name}`);
    return Number(match[1]);
  };
  return {
    appended: value('tagd_history_appended_samples_total'),
    dropped: value('tagd_history_dropped_samples_total'),
    buffered: value('tagd_history_buffered_samples'),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the daemon on `profileFile`, measures it for `seconds`, stops it. */
async function measureSide(
  name: string,
  profileFile: string,
  stateDir: string,
  withHistory: boolean,
  seconds: number,
): Promise<Run> {
  const { child, port, errors } = await startReady(
    (listen) => startArgs(listen, '--profile', profileFile),
    { TAGD_STATE_DIR: stateDir },
    name,
    { timeoutMs: readyTimeoutMs, pollMs: 50 },
  );
  try {
    const pid = child.pid as number;
    await sleep(settleSeconds * 1000);
    const first = withHistory ? await historyCounters(port) : undefined;
    const began = performance.now();
    let cpuBefore = await cpuSecondsOf(pid);
    let wallBefore = began;
    const cpuPercent: number[] = [];
    const rssMiB: number[] = [];
    let maxBuffered = first?.buffered ?? 0;
    for (let second = 1; second <= seconds; second++) {
      await sleep(began + second * 1000 - performance.now());
      const cpu = await cpuSecondsOf(pid);
      const wall = performance.now();
      cpuPercent.push(((cpu - cpuBefore) / ((wall - wallBefore) / 1000)) * 100);
      rssMiB.push(await rssMiBOf(pid));
      cpuBefore = cpu;
      wallBefore = wall;
      if (withHistory) maxBuffered = Math.max(maxBuffered, (await historyCounters(port)).buffered);
    }
    const wallSeconds = (performance.now() - began) / 1000;
    let history: Run['history'];
    if (first !== undefined) {
      const last = await historyCounters(port);
      history = {
        dropped: last.dropped,
        storedPerSecond: (last.appended - first.appended) / wallSeconds,
        maxBuffered,
      };
    }
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    const median = (values: number[]) => sorted(values)[values.length >> 1] ?? Number.NaN;
    log(
      `${name}: ${median(cpuPercent).toFixed(1)} % of a core (median of ${seconds} s), RSS ` +
        `${median(rssMiB).toFixed(0)} MiB (max ${Math.max(...rssMiB).toFixed(0)})` +
        (history
          ? `; stored ${Math.round(history.storedPerSecond).toLocaleString('en')} samples/s, ` +
            `${history.dropped.toLocaleString('en')} dropped since start, at most ` +
            `${history.maxBuffered.toLocaleString('en')} buffered at the once-a-second readings`
          : ''),
    );
    return { name, cpuPercent, rssMiB, ...(history ? { history } : {}) };
  } catch (error) {
    if (errors()) process.stderr.write(errors());
    throw error;
  } finally {
    await stop(child);
  }
}

/** Both sides, measured once for both cases. */
interface Figures {
  baseline: Run;
  subject: Run;
}

let measured: Promise<Figures> | undefined;

async function measureAll(): Promise<Figures> {
  requireBuild();
  const folder = await mkdtemp(join(tmpdir(), 'tagd-bench-history-sustained-'));
  try {
    const plain = join(folder, 'simulator.json');
    const logged = join(folder, 'simulator-history.json');
    await writeFile(plain, JSON.stringify(profile(false)), { mode: 0o600 });
    await writeFile(logged, JSON.stringify(profile(true)), { mode: 0o600 });
    const tags = tagCount.toLocaleString('en');
    const subject = await measureSide(
      `tagd, ${tags} simulated tags, SQLite history onChange`,
      logged,
      join(folder, 'history-state'),
      true,
      windowSeconds,
    );
    const baseline = await measureSide(
      `tagd, ${tags} simulated tags, no history`,
      plain,
      join(folder, 'plain-state'),
      false,
      Math.max(1, Math.round(windowSeconds / 2)),
    );
    return { baseline, subject };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

function figures(): Promise<Figures> {
  measured ??= measureAll();
  return measured;
}

function sustainedCase(info: CaseInfo, pick: (run: Run) => number[]): MeasuredCase {
  return {
    ...info,
    kind: 'measured',
    async measure(): Promise<CaseResult> {
      const { baseline, subject } = await figures();
      const history = subject.history;
      const name = history
        ? `${subject.name} (${history.dropped.toLocaleString('en')} dropped, ` +
          `${Math.round(history.storedPerSecond).toLocaleString('en')} samples/s stored)`
        : subject.name;
      const result = caseResult(
        info,
        sideResult(baseline.name, 1, pick(baseline)),
        sideResult(name, 1, pick(subject)),
      );
      // The point of the case: nothing dropped, and the history keeps up with the offer.
      const keptUp =
        history !== undefined && history.dropped === 0 && history.storedPerSecond >= minStoredRate;
      if (result.verdict === 'met' && !keptUp) result.verdict = 'NOT met';
      return result;
    },
  };
}

export const cases: MeasuredCase[] = [
  sustainedCase(
    {
      name: 'history: 100,000 tags/s sustained onChange to SQLite',
      unit: '% of a core',
      quantity: 'amount',
      budget: {
        maxAmount: 100,
        description:
          'issue 20: 0 samples dropped since start and ≥ 95,000 samples/s stored, within one core',
      },
    },
    (run) => run.cpuPercent,
  ),
  sustainedCase(
    {
      name: 'history: 100,000 tags/s sustained onChange to SQLite, RSS',
      unit: 'MiB',
      quantity: 'amount',
    },
    (run) => run.rssMiB,
  ),
];
