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
 *
 * `relay: edge change → central p99` — an edge TagStore with a real MqttPublisher (sparkplugB,
 * On Change, `updateIntervalMs` 10) and a central SparkplugDriver in this process, on the real
 * clock: 100 tags change every 10 ms (10,000 changes/s) for 5 s; each change carries a serial
 * number as its value, and the time it reaches the central TagStore (which `GET /api/v2/Tags`
 * answers from; the HTTP request itself is not in the figure) is recorded. The rate printed is
 * 1000 / p99 (ms), so the budget "p99 < 100 ms" is "≥ 10 /s"; the baseline is a bare client
 * publishing each 10 ms batch as one Sparkplug DDATA to a bare subscriber that decodes it.
 *
 * `relay: catch-up end to end` — a real MqttPublisher (sparkplugB, `primaryHostId`,
 * Everything, ManualClock) stores 100,000 samples of 1,000 tags while no host is online; then
 * the central SparkplugDriver starts (its STATE online is the edge's signal): births, the stored
 * samples as historical DDATA, decoded by the driver and handed to the central TagStore's
 * history listeners. The rate is stored samples / seconds from the driver's start to the last
 * historical sample received centrally. The baseline is a bare client publishing the same
 * samples as 2,000-metric historical DDATA (QoS 1) to a bare subscriber that decodes them.
 * Three samples per side, alternating.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import { connectAsync } from 'mqtt';
import { pino } from 'pino';
import sparkplug from 'sparkplug-payload';
import { sparkplugDriverSchema } from '../drivers/sparkplug/schema.js';
import { SparkplugDriver } from '../drivers/sparkplug/sparkplug-driver.js';
import { systemClock } from '../src/clock.js';
import { MqttPublisher } from '../src/publishers/mqtt/mqtt-publisher.js';
import { mqttConfigSchema } from '../src/publishers/mqtt/schema.js';
import { Collections } from '../src/tags/collections.js';
import type { Sample } from '../src/tags/sample.js';
import { TagStore } from '../src/tags/tag-store.js';
import { ManualClock } from '../test/helpers/manual-clock.js';
import { startMosquitto } from '../test/helpers/mosquitto.js';
import { caseResult, latencySide, type MeasuredCase, sideResult } from './harness.js';

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

function latencyCase(): MeasuredCase {
  const info = {
    name: 'relay: edge change → central p99',
    unit: 'p99⁻¹ (1000 / ms)',
    budget: {
      minRatePerSecond: 10,
      description:
        'p99 < 100 ms from an edge change to the central value at 10,000 changes/s (issue 23)',
    },
  };
  const tagCount = 100;
  const writeEveryMs = 10;
  const durationMs = 5_000;
  const tagIds = Array.from({ length: tagCount }, (_, i) => `Line1/T${i}`);
  const silent = pino({ level: 'silent' });
  return {
    kind: 'measured',
    ...info,
    async measure() {
      const { t, cleanUp } = benchContext();
      const folder = mkdtempSync(join(tmpdir(), 'tagd-bench-relay-'));
      try {
        const broker = await startMosquitto(t);
        const writtenAt = new Map<number, number>();
        const latencies: number[] = [];
        const arrived = (value: unknown) => {
          const at = writtenAt.get(value as number);
          if (at !== undefined) latencies.push(performance.now() - at);
        };
        const drive = async (write: (samples: Sample[]) => void) => {
          latencies.length = 0;
          let serial = 0;
          const began = performance.now();
          await new Promise<void>((resolve) => {
            const timer = setInterval(() => {
              const stamp = new Date().toISOString();
              const at = performance.now();
              const samples = tagIds.map((fullTagId) => {
                serial++;
                writtenAt.set(serial, at);
                return { fullTagId, utcTimestamp: stamp, quality: 'Good' as const, value: serial };
              });
              write(samples);
              if (at - began >= durationMs) {
                clearInterval(timer);
                resolve();
              }
            }, writeEveryMs);
          });
          await new Promise((resolve) => setTimeout(resolve, 500));
          writtenAt.clear();
          return [...latencies];
        };

        // Baseline: one DDATA per batch from a bare client, decoded by a bare subscriber.
        const sub = await connectAsync(broker.url, { reconnectPeriod: 0 });
        t.teardown(() => sub.endAsync(true));
        sub.on('message', (_topic, payload) => {
          for (const metric of codec.decodePayload(payload).metrics ?? []) arrived(metric.value);
        });
        await sub.subscribeAsync('spBv1.0/Bare/#', { qos: 0 });
        const bare = await connectAsync(broker.url, { reconnectPeriod: 0 });
        t.teardown(() => bare.endAsync(true));
        let seq = 0;
        const baseline = await drive((samples) => {
          const payload = codec.encodePayload({
            timestamp: Date.now(),
            seq: seq++ % 256,
            metrics: samples.map((sample, i) => ({
              alias: i + 1,
              timestamp: Date.parse(sample.utcTimestamp),
              type: 'Double' as const,
              value: sample.value as number,
            })),
          });
          bare.publish('spBv1.0/Bare/DDATA/edge/Line1', Buffer.from(payload), { qos: 1 });
        });
        await sub.endAsync(true);

        // Subject: the edge's publisher to the central host driver.
        const central = new TagStore({ clock: systemClock });
        const driver = new SparkplugDriver(
          sparkplugDriverSchema.parse({
            type: 'sparkplug',
            name: 'site',
            brokerUrl: broker.url,
            hostId: 'bench',
            groupIds: ['Bench'],
          }),
          { store: central, clock: systemClock, logger: silent, stateDir: '/nonexistent' },
        );
        await driver.start();
        t.teardown(() => driver.stop());
        const edge = new TagStore({ clock: systemClock, logger: silent });
        const stamp = new Date().toISOString();
        edge.write(
          tagIds.map((fullTagId) => ({
            fullTagId,
            utcTimestamp: stamp,
            quality: 'Good',
            value: 0,
          })),
        );
        const collections = new Collections(
          edge,
          [{ name: 'plant', members: ['Line1/**'] }],
          silent,
        );
        await collections.start();
        const publisher = new MqttPublisher(
          mqttConfigSchema.parse({
            name: 'bench',
            brokerUrl: broker.url,
            collections: ['plant'],
            format: 'sparkplugB',
            groupId: 'Bench',
            edgeNodeId: 'edge',
            loggingMode: 'On Change',
            updateIntervalMs: writeEveryMs,
          }),
          { store: edge, collections, clock: systemClock, logger: silent, stateDir: folder },
        );
        t.teardown(() => publisher.stop());
        await publisher.start();
        // Every tag born centrally before the changes start.
        const first = 'site/Bench/edge/Line1/T0';
        while (central.get(first)?.quality !== 'Good') {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        central.subscribe((updates) => {
          for (const { sample } of updates) arrived(sample.value);
        });
        const subject = await drive((samples) => edge.write(samples));
        return caseResult(
          info,
          latencySide('bare client → bare subscriber, one DDATA per 10 ms batch', baseline),
          latencySide('MqttPublisher (sparkplugB, On Change, 10 ms) → SparkplugDriver', subject),
        );
      } finally {
        await cleanUp();
        rmSync(folder, { recursive: true, force: true });
      }
    },
  };
}

function catchUpCase(): MeasuredCase {
  const info = {
    name: 'relay: catch-up end to end',
    unit: 'samples',
    budget: {
      minRatePerSecond: 50_000,
      description:
        '≥ 50,000 stored samples/s forwarded by the edge and ingested centrally (issue 23)',
    },
  };
  const tagCount = 1_000;
  const rounds = 100;
  const stored = tagCount * rounds;
  const perPayload = 2_000;
  const tagIds = Array.from({ length: tagCount }, (_, i) => `Line1/T${i}`);
  const silent = pino({ level: 'silent' });
  const roundSamples = (clock: ManualClock, round: number): Sample[] => {
    const stamp = new Date(clock.now()).toISOString();
    return tagIds.map((fullTagId, i) => ({
      fullTagId,
      utcTimestamp: stamp,
      quality: 'Good',
      value: round * 1_000 + i * 0.5,
    }));
  };
  return {
    kind: 'measured',
    ...info,
    async measure() {
      const { t, cleanUp } = benchContext();
      try {
        const broker = await startMosquitto(t);

        const baselineRun = async (): Promise<number> => {
          const sub = await connectAsync(broker.url, { reconnectPeriod: 0 });
          let counted = 0;
          let reached: () => void = () => undefined;
          const done = new Promise<void>((resolve) => {
            reached = resolve;
          });
          sub.on('message', (_topic, payload) => {
            counted += codec.decodePayload(payload).metrics?.length ?? 0;
            if (counted >= stored) reached();
          });
          await sub.subscribeAsync('spBv1.0/Bare/#', { qos: 1 });
          const client = await connectAsync(broker.url, { reconnectPeriod: 0 });
          const clock = new ManualClock(Date.UTC(2026, 0, 1));
          const samples: Sample[] = [];
          for (let round = 1; round <= rounds; round++) {
            clock.advance(100);
            samples.push(...roundSamples(clock, round));
          }
          const started = performance.now();
          let seq = 0;
          const publishes: Promise<unknown>[] = [];
          for (let start = 0; start < samples.length; start += perPayload) {
            const metrics = samples.slice(start, start + perPayload).map((sample, i) => ({
              alias: ((start + i) % tagCount) + 1,
              timestamp: Date.parse(sample.utcTimestamp),
              type: 'Double' as const,
              value: sample.value as number,
              isHistorical: true,
              properties: { Quality: { type: 'Int32' as const, value: 192 } },
            }));
            const payload = codec.encodePayload({
              timestamp: Date.now(),
              seq: seq++ % 256,
              metrics,
            });
            publishes.push(
              client.publishAsync('spBv1.0/Bare/DDATA/edge/Line1', Buffer.from(payload), {
                qos: 1,
              }),
            );
          }
          await done;
          const seconds = (performance.now() - started) / 1000;
          await Promise.all(publishes);
          await client.endAsync(true);
          await sub.endAsync(true);
          return stored / seconds;
        };

        const subjectRun = async (): Promise<number> => {
          const folder = mkdtempSync(join(tmpdir(), 'tagd-bench-relay-'));
          try {
            const clock = new ManualClock(Date.UTC(2026, 0, 1));
            const edge = new TagStore({ clock, logger: silent });
            edge.write(roundSamples(clock, 0));
            const collections = new Collections(edge, [{ name: 'plant', members: ['**'] }], silent);
            await collections.start();
            const publisher = new MqttPublisher(
              mqttConfigSchema.parse({
                name: 'bench',
                brokerUrl: broker.url,
                collections: ['plant'],
                format: 'sparkplugB',
                groupId: 'Bench',
                edgeNodeId: 'edge',
                primaryHostId: 'central',
                loggingMode: 'Everything',
                updateIntervalMs: 100,
                bufferLimitMB: 256,
              }),
              { store: edge, collections, clock, logger: silent, stateDir: folder },
            );
            await publisher.start();
            for (let round = 1; round <= rounds; round++) {
              clock.advance(10);
              edge.write(roundSamples(clock, round));
              clock.advance(90);
            }
            const queued = publisher.state().sparkplug?.storedSamples;
            if (queued !== stored) throw new Error(`${queued} samples stored, not ${stored}`);

            const central = new TagStore({ clock: systemClock });
            let received = 0;
            let reached: () => void = () => undefined;
            const done = new Promise<void>((resolve) => {
              reached = resolve;
            });
            central.onHistorical((samples) => {
              received += samples.length;
              if (received >= stored) reached();
            });
            const driver = new SparkplugDriver(
              sparkplugDriverSchema.parse({
                type: 'sparkplug',
                name: 'site',
                brokerUrl: broker.url,
                hostId: 'central',
                groupIds: ['Bench'],
              }),
              { store: central, clock: systemClock, logger: silent, stateDir: '/nonexistent' },
            );
            const started = performance.now();
            await driver.start();
            await done;
            const seconds = (performance.now() - started) / 1000;
            await driver.stop();
            await publisher.stop();
            await collections.stop();
            return stored / seconds;
          } finally {
            rmSync(folder, { recursive: true, force: true });
          }
        };

        const baseline: number[] = [];
        const subject: number[] = [];
        for (let run = 0; run < 3; run++) {
          baseline.push(await baselineRun());
          subject.push(await subjectRun());
        }
        return caseResult(
          info,
          sideResult(
            `bare client → bare subscriber, ${perPayload}-metric historical DDATA`,
            stored,
            baseline,
          ),
          sideResult(
            `MqttPublisher catch-up → SparkplugDriver, ${stored} samples`,
            stored,
            subject,
          ),
        );
      } finally {
        await cleanUp();
      }
    },
  };
}

/** The cases, for bench/run.ts. */
export const cases: MeasuredCase[] = [ingestCase(), latencyCase(), catchUpCase()];
