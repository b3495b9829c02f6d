/**
 * Sparkplug store-and-forward catch-up (issue 23, budget "≥ 50,000 stored samples per second
 * forwarded"), against a Mosquitto started for the run on a loopback port.
 *
 * `sparkplug: catch-up forwarded` — a real MqttPublisher (sparkplugB, `primaryHostId`,
 * Everything, ManualClock) stores 100,000 samples of 1,000 tags while the scripted primary host
 * is offline (100 ticks of 1,000 changes, in its durable outbox on disk). The timed part runs
 * from the host's STATE `online` to the moment the outbox is empty: births, then every stored
 * sample read back from SQLite, encoded as historical DDATA (2,000 metrics a payload), published
 * at QoS 1 and acknowledged by the broker, then removed from the outbox. The rate is stored
 * samples / second. The baseline is a bare mqtt.js client encoding the same samples with
 * `sparkplug-payload` into 2,000-metric payloads and publishing them at QoS 1 (every PUBACK
 * awaited): the floor of encoding and broker alone. A subscriber counts the DDATA messages, so
 * the broker delivers them as in production. Three samples per side, alternating.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { connectAsync } from 'mqtt';
import { pino } from 'pino';
import { MqttPublisher, mqttHealthTagIds } from '../src/publishers/mqtt/mqtt-publisher.js';
import { mqttConfigSchema } from '../src/publishers/mqtt/schema.js';
import { encode } from '../src/publishers/mqtt/sparkplug-payloads.js';
import { Collections } from '../src/tags/collections.js';
import type { Sample } from '../src/tags/sample.js';
import { TagStore } from '../src/tags/tag-store.js';
import { ManualClock } from '../test/helpers/manual-clock.js';
import { startMosquitto } from '../test/helpers/mosquitto.js';
import { caseResult, type MeasuredCase, sideResult } from './harness.js';

const silent = pino({ level: 'silent' });
const tagCount = 1_000;
const rounds = 100;
const stored = tagCount * rounds;
const perPayload = 2_000;
const runs = 3;
const tagIds = Array.from(
  { length: tagCount },
  (_, i) => `Line${i % 4}/plc-${i % 10}/HR${40001 + i}`,
);

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

function roundSamples(clock: ManualClock, round: number): Sample[] {
  const stamp = new Date(clock.now()).toISOString();
  return tagIds.map((fullTagId, i) => ({
    fullTagId,
    utcTimestamp: stamp,
    quality: 'Good',
    value: round * 1_000 + i * 0.5,
  }));
}

function catchUpCase(): MeasuredCase {
  const info = {
    name: 'sparkplug: catch-up forwarded',
    unit: 'samples',
    budget: {
      minRatePerSecond: 50_000,
      description: '≥ 50,000 stored samples/s forwarded after the primary host is back (issue 23)',
    },
  };
  return {
    kind: 'measured',
    ...info,
    async measure() {
      const { t, cleanUp } = benchContext();
      try {
        const broker = await startMosquitto(t);
        const sink = await connectAsync(broker.url, { reconnectPeriod: 0 });
        t.teardown(() => sink.endAsync(true));
        await sink.subscribeAsync('spBv1.0/#', { qos: 0 });
        const host = await connectAsync(broker.url, { reconnectPeriod: 0 });
        t.teardown(() => host.endAsync(true));
        let hostTimestamp = Date.now();
        const hostState = (online: boolean) =>
          host.publishAsync(
            'spBv1.0/STATE/central',
            JSON.stringify({ online, timestamp: hostTimestamp++ }),
            { qos: 1, retain: true },
          );

        const baselineRun = async (): Promise<number> => {
          const client = await connectAsync(broker.url, { reconnectPeriod: 0, protocolVersion: 5 });
          const clock = new ManualClock(Date.UTC(2026, 0, 1));
          const samples: Sample[] = [];
          for (let round = 1; round <= rounds; round++) {
            clock.advance(100);
            samples.push(...roundSamples(clock, round));
          }
          const started = performance.now();
          const publishes: Promise<unknown>[] = [];
          let seq = 0;
          for (let start = 0; start < samples.length; start += perPayload) {
            const metrics = samples.slice(start, start + perPayload).map((sample, i) => ({
              alias: (start + i) % tagCount,
              timestamp: Date.parse(sample.utcTimestamp),
              type: 'Double' as const,
              value: sample.value as number,
              isHistorical: true,
              properties: { Quality: { type: 'Int32' as const, value: 192 } },
            }));
            const payload = encode({ timestamp: Date.now(), seq: seq++ % 256, metrics });
            publishes.push(
              client.publishAsync('spBv1.0/Bench/DDATA/bare/Line0', payload, { qos: 1 }),
            );
          }
          await Promise.all(publishes);
          const seconds = (performance.now() - started) / 1000;
          await client.endAsync();
          return stored / seconds;
        };

        const subjectRun = async (): Promise<number> => {
          const folder = mkdtempSync(join(tmpdir(), 'tagd-bench-spb-'));
          try {
            await hostState(false);
            const clock = new ManualClock(Date.UTC(2026, 0, 1));
            const store = new TagStore({ clock, logger: silent });
            store.write(roundSamples(clock, 0));
            const collections = new Collections(
              store,
              [{ name: 'plant', members: ['**'] }],
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
                primaryHostId: 'central',
                loggingMode: 'Everything',
                updateIntervalMs: 100,
                bufferLimitMB: 256,
              }),
              { store, collections, clock, logger: silent, stateDir: folder },
            );
            await publisher.start();
            for (let round = 1; round <= rounds; round++) {
              clock.advance(10);
              store.write(roundSamples(clock, round));
              clock.advance(90);
            }
            const queued = publisher.state().sparkplug?.storedSamples;
            if (queued !== stored) throw new Error(`${queued} samples stored, not ${stored}`);
            const storedId = mqttHealthTagIds('bench').storedSamples;
            const empty = new Promise<void>((resolve) => {
              const off = store.subscribe((updates) => {
                if (updates.some((u) => u.sample.fullTagId === storedId && u.sample.value === 0)) {
                  off();
                  resolve();
                }
              });
            });
            const started = performance.now();
            await hostState(true);
            await empty;
            const seconds = (performance.now() - started) / 1000;
            const forwarded = publisher.state().sparkplug?.forwardedSamples;
            if (forwarded !== stored) throw new Error(`${forwarded} forwarded, not ${stored}`);
            await publisher.stop();
            await collections.stop();
            return stored / seconds;
          } finally {
            rmSync(folder, { recursive: true, force: true });
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
          sideResult(
            `bare mqtt client, ${perPayload}-metric historical DDATA, QoS 1`,
            stored,
            baseline,
          ),
          sideResult(`MqttPublisher catch-up of ${stored} stored samples`, stored, subject),
        );
      } finally {
        await cleanUp();
      }
    },
  };
}

/** The case, for bench/run.ts. */
export const cases: MeasuredCase[] = [catchUpCase()];
