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
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { connectAsync } from 'mqtt';
import { pino } from 'pino';
import sparkplug from 'sparkplug-payload';
import { sparkplugDriverSchema } from '../drivers/sparkplug/schema.js';
import { SparkplugDriver } from '../drivers/sparkplug/sparkplug-driver.js';
import { systemClock } from '../src/clock.js';
import { TagStore } from '../src/tags/tag-store.js';
import { benchPublisher } from './bench-publisher.js';
import { brokerCase } from './broker-case.js';
import { ChangeLatencies } from './change-latency.js';
import {
  alternateRuns,
  caseResult,
  latencySide,
  type MeasuredCase,
  sideResult,
} from './harness.js';
import { seededStore } from './seeded-store.js';
import { backlogSamples, historicalPayload, withBacklog } from './sparkplug-backlog.js';

const codec = sparkplug.get('spBv1.0') as NonNullable<ReturnType<typeof sparkplug.get>>;
const metricsPerDevice = 1_000;
const messagesPerBurst = 100;
const perBurst = metricsPerDevice * messagesPerBurst;
const runs = 3;
const child = fileURLToPath(new URL('./relay-edge-child.ts', import.meta.url));

/** The central side: a Sparkplug host driver `site` of group `Bench`, writing into `store`. */
function hostDriver(brokerUrl: string, hostId: string, store: TagStore): SparkplugDriver {
  return new SparkplugDriver(
    sparkplugDriverSchema.parse({
      type: 'sparkplug',
      name: 'site',
      brokerUrl,
      hostId,
      groupIds: ['Bench'],
    }),
    { store, clock: systemClock, logger: pino({ level: 'silent' }), stateDir: '/nonexistent' },
  );
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

/** Metrics a side of the ingest case counts, and its rate over one burst of the edge. */
class BurstCount {
  #counted = 0;
  #target = Number.POSITIVE_INFINITY;
  #reached: () => void = () => undefined;

  /** Counts `metrics` received. */
  add(metrics: number): void {
    this.#counted += metrics;
    if (this.#counted >= this.#target) this.#reached();
  }

  /**
   * From a count of 0, has the edge send its burst and resolves, once {@link perBurst} metrics
   * are counted, with metrics per CPU second of this process (user + system) meanwhile.
   */
  async burst(edge: { go(): unknown }): Promise<number> {
    this.#counted = 0;
    this.#target = perBurst;
    const done = new Promise<void>((resolve) => {
      this.#reached = resolve;
    });
    const before = process.cpuUsage();
    edge.go();
    await done;
    const used = process.cpuUsage(before);
    return this.#counted / ((used.user + used.system) / 1e6);
  }
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
  return brokerCase(info, 'relay', async ({ broker }) => {
    const baselineRun = async (): Promise<number> => {
      const client = await connectAsync(broker.url, { reconnectPeriod: 0 });
      const count = new BurstCount();
      client.on('message', (topic, payload) => {
        const decoded = codec.decodePayload(payload);
        count.add(topic.includes('/DDATA/') ? (decoded.metrics?.length ?? 0) : 0);
      });
      await client.subscribeAsync('spBv1.0/Bench/#', { qos: 1 });
      const edge = await startEdge(broker.url);
      try {
        return await count.burst(edge);
      } finally {
        await edge.stop();
        await client.endAsync(true);
      }
    };

    const subjectRun = async (): Promise<number> => {
      const store = new TagStore({ clock: systemClock });
      const driver = hostDriver(broker.url, 'bench', store);
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
      const count = new BurstCount();
      const off = store.subscribe((updates) => count.add(updates.length));
      const edge = await startEdge(broker.url);
      try {
        // The DBIRTH's metrics are tags before the burst starts.
        while (store.size < metricsPerDevice) await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, 200));
        return await count.burst(edge);
      } finally {
        off();
        await edge.stop();
        await driver.stop();
      }
    };

    const [baseline, subject] = await alternateRuns(runs, baselineRun, subjectRun);
    return caseResult(
      info,
      sideResult('bare mqtt.js subscriber decoding with sparkplug-payload', perBurst, baseline),
      sideResult('Sparkplug host driver into the TagStore', perBurst, subject),
    );
  });
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
  return brokerCase(info, 'relay', async ({ t, broker, folder }) => {
    const changes = new ChangeLatencies({
      tagIds,
      everyMs: writeEveryMs,
      durationMs,
      settleMs: 500,
    });

    // Baseline: one DDATA per batch from a bare client, decoded by a bare subscriber.
    const sub = await connectAsync(broker.url, { reconnectPeriod: 0 });
    t.teardown(() => sub.endAsync(true));
    sub.on('message', (_topic, payload) => {
      for (const metric of codec.decodePayload(payload).metrics ?? []) {
        changes.arrived(metric.value);
      }
    });
    await sub.subscribeAsync('spBv1.0/Bare/#', { qos: 0 });
    const bare = await connectAsync(broker.url, { reconnectPeriod: 0 });
    t.teardown(() => bare.endAsync(true));
    let seq = 0;
    const baseline = await changes.drive((samples) => {
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
    const driver = hostDriver(broker.url, 'bench', central);
    await driver.start();
    t.teardown(() => driver.stop());
    const edge = seededStore(tagIds, () => 0);
    const { publisher } = await benchPublisher(
      {
        store: edge,
        clock: systemClock,
        brokerUrl: broker.url,
        stateDir: folder,
        members: ['Line1/**'],
      },
      {
        format: 'sparkplugB',
        groupId: 'Bench',
        edgeNodeId: 'edge',
        loggingMode: 'On Change',
        updateIntervalMs: writeEveryMs,
      },
    );
    t.teardown(() => publisher.stop());
    await publisher.start();
    // Every tag born centrally before the changes start.
    const first = 'site/Bench/edge/Line1/T0';
    while (central.get(first)?.quality !== 'Good') {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    central.subscribe((updates) => {
      for (const { sample } of updates) changes.arrived(sample.value);
    });
    const subject = await changes.drive((samples) => edge.write(samples));
    return caseResult(
      info,
      latencySide('bare client → bare subscriber, one DDATA per 10 ms batch', baseline),
      latencySide('MqttPublisher (sparkplugB, On Change, 10 ms) → SparkplugDriver', subject),
    );
  });
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
  return brokerCase(info, 'relay', async ({ broker }) => {
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
      const samples = backlogSamples(tagIds, rounds);
      const started = performance.now();
      let seq = 0;
      const publishes: Promise<unknown>[] = [];
      for (let start = 0; start < samples.length; start += perPayload) {
        const payload = codec.encodePayload(
          historicalPayload(samples, start, perPayload, tagCount, 1, seq++ % 256),
        );
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

    const subjectRun = (): Promise<number> =>
      withBacklog(broker.url, tagIds, rounds, async () => {
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
        const driver = hostDriver(broker.url, 'central', central);
        const started = performance.now();
        await driver.start();
        await done;
        const seconds = (performance.now() - started) / 1000;
        await driver.stop();
        return stored / seconds;
      });

    const [baseline, subject] = await alternateRuns(runs, baselineRun, subjectRun);
    return caseResult(
      info,
      sideResult(
        `bare client → bare subscriber, ${perPayload}-metric historical DDATA`,
        stored,
        baseline,
      ),
      sideResult(`MqttPublisher catch-up → SparkplugDriver, ${stored} samples`, stored, subject),
    );
  });
}

/** The cases, for bench/run.ts. */
export const cases: MeasuredCase[] = [ingestCase(), latencyCase(), catchUpCase()];
