/**
 * Relay budgets (issue 23, docs/relay.md "Fleet test and budgets"), against a Mosquitto started
 * for the run on a loopback port.
 *
 * `relay: central ingest` — metrics per CPU-second of the central side. A bare Sparkplug edge
 * in a child process (bench/relay-edge-child.ts, so its CPU is not counted) births 1,000
 * Double metrics, then sends bursts of 100 DDATA messages that change every metric (100,000
 * metrics a burst, QoS 1). The subject is the Sparkplug host driver (`SparkplugDriver`, a
 * TagStore, seq and alias checks, quality, samples written to the store); the baseline a bare
 * mqtt.js subscriber decoding the same payloads with `sparkplug-payload` and counting the
 * metrics. The rate is metrics received / CPU seconds of this process (user + system) from
 * the burst's start until its last metric is counted. Three samples per side, alternating.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import { connectAsync } from 'mqtt';
import { pino } from 'pino';
import sparkplug from 'sparkplug-payload';
import { sparkplugDriverSchema } from '../drivers/sparkplug/schema.js';
import { SparkplugDriver } from '../drivers/sparkplug/sparkplug-driver.js';
import { systemClock } from '../src/clock.js';
import { TagStore } from '../src/tags/tag-store.js';
import { startMosquitto } from '../test/helpers/mosquitto.js';
import { caseResult, type MeasuredCase, sideResult } from './harness.js';

const codec = sparkplug.get('spBv1.0') as NonNullable<ReturnType<typeof sparkplug.get>>;
const metricsPerDevice = 1_000;
const messagesPerBurst = 100;
const perBurst = metricsPerDevice * messagesPerBurst;
const runs = 3;
const child = fileURLToPath(new URL('./relay-edge-child.ts', import.meta.url));

/** The helpers take an ava context for clean-up; the bench gives them one of its own. */
function benchContext(): { t: ExecutionContext; cleanUp: () => Promise<void> } {
  const teardowns: (() => unknown)[] = [];
  const t = { teardown: (fn: () => unknown) => teardowns.push(fn) } as unknown as ExecutionContext;
  return {
    t,
    cleanUp: async () => {
      for (const fn of teardowns.reverse()) await fn();
    },
  };
}

/** The edge child: resolves once it has published its births. */
async function startEdge(url: string) {
  const process_ = spawn(
    process.execPath,
    ['--import', 'tsx', child, url, String(metricsPerDevice), String(messagesPerBurst)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: process_.stdout as NodeJS.ReadableStream });
  const waiters: ((line: string) => void)[] = [];
  lines.on('line', (line) => waiters.shift()?.(line));
  const nextLine = () => new Promise<string>((resolve) => waiters.push(resolve));
  if ((await nextLine()) !== 'born') throw new Error('the edge child did not birth');
  return {
    go: () => {
      const sent = nextLine();
      process_.stdin?.write('go\n');
      return sent;
    },
    stop: () => stopChild(process_),
  };
}

function stopChild(process_: ChildProcess): Promise<void> {
  if (process_.exitCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => process_.once('exit', () => resolve()));
  process_.kill('SIGKILL');
  return exited;
}

/** CPU seconds of this process while `work` runs until `done` resolves. */
async function cpuSecondsOf(work: () => unknown, done: Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  work();
  await done;
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

function ingestCase(): MeasuredCase {
  const info = {
    name: 'relay: central ingest',
    unit: 'metrics',
    budget: {
      minRatePerSecond: 100_000,
      description: '≥ 100,000 metrics per CPU-second on the central side (issue 23)',
    },
  };
  return {
    kind: 'measured',
    ...info,
    async measure() {
      const { t, cleanUp } = benchContext();
      try {
        const broker = await startMosquitto(t);

        const baselineRun = async (): Promise<number> => {
          const client = await connectAsync(broker.url, { reconnectPeriod: 0 });
          let counted = 0;
          let target = Number.POSITIVE_INFINITY;
          let reached: () => void = () => undefined;
          client.on('message', (topic, payload) => {
            const decoded = codec.decodePayload(payload);
            if (topic.includes('/DDATA/')) counted += decoded.metrics?.length ?? 0;
            if (counted >= target) reached();
          });
          await client.subscribeAsync('spBv1.0/Bench/#', { qos: 1 });
          const edge = await startEdge(broker.url);
          try {
            target = perBurst;
            const done = new Promise<void>((resolve) => {
              reached = resolve;
            });
            const seconds = await cpuSecondsOf(() => edge.go(), done);
            return counted / seconds;
          } finally {
            await edge.stop();
            await client.endAsync(true);
          }
        };

        const subjectRun = async (): Promise<number> => {
          const store = new TagStore({ clock: systemClock });
          const driver = new SparkplugDriver(
            sparkplugDriverSchema.parse({
              type: 'sparkplug',
              name: 'site',
              brokerUrl: broker.url,
              hostId: 'bench',
              groupIds: ['Bench'],
            }),
            {
              store,
              clock: systemClock,
              logger: pino({ level: 'silent' }),
              stateDir: '/nonexistent',
            },
          );
          await driver.start();
          // The driver subscribes once connected: wait for its STATE before the births.
          const watcher = await connectAsync(broker.url, { reconnectPeriod: 0 });
          const online = new Promise<void>((resolve) =>
            watcher.on('message', (_topic, payload) => {
              if (JSON.parse(payload.toString()).online === true) resolve();
            }),
          );
          await watcher.subscribeAsync('spBv1.0/STATE/bench', { qos: 1 });
          await online;
          await watcher.endAsync(true);
          let counted = 0;
          let target = Number.POSITIVE_INFINITY;
          let reached: () => void = () => undefined;
          const off = store.subscribe((updates) => {
            counted += updates.length;
            if (counted >= target) reached();
          });
          const edge = await startEdge(broker.url);
          try {
            // The DBIRTH's metrics are tags before the burst starts.
            while (store.size < metricsPerDevice) await new Promise((r) => setTimeout(r, 20));
            await new Promise((r) => setTimeout(r, 200));
            counted = 0;
            target = perBurst;
            const done = new Promise<void>((resolve) => {
              reached = resolve;
            });
            const seconds = await cpuSecondsOf(() => edge.go(), done);
            return counted / seconds;
          } finally {
            off();
            await edge.stop();
            await driver.stop();
          }
        };

        const baseline: number[] = [];
        const subject: number[] = [];
        for (let run = 0; run < runs; run++) {
          baseline.push(await baselineRun());
          subject.push(await subjectRun());
        }
        return caseResult(
          info,
          sideResult('bare mqtt.js subscriber decoding with sparkplug-payload', perBurst, baseline),
          sideResult('Sparkplug host driver into the TagStore', perBurst, subject),
        );
      } finally {
        await cleanUp();
      }
    },
  };
}

/** The cases, for bench/run.ts. */
export const cases: MeasuredCase[] = [ingestCase()];
