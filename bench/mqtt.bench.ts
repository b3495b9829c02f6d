/**
 * MQTT publisher budgets (issue 13), against a Mosquitto started for the run on a loopback port
 * (Debian's `mosquitto`), with a subscriber in this process receiving every message:
 *
 * 1. `mqtt: publish QoS 0` and `mqtt: publish QoS 1` — messages per second, tagd against a bare
 *    `mqtt` client loop sending the same payloads (budget: ratio ≥ 0.7). One iteration is one
 *    tick of a real MqttPublisher (json-per-tag, Snapshot, ManualClock moved by one interval)
 *    over 1,000 tags: members re-read, samples selected, 1,000 entries built and serialized,
 *    published, (QoS 1) every PUBACK received, and all 1,000 messages received by the
 *    subscriber. The baseline publishes the same 1,000 topics and payloads, built once
 *    beforehand, from a bare client and waits the same way. Waiting for the subscriber keeps
 *    each side's work in its own samples: when an iteration ended at the socket write (QoS 0),
 *    the broker forwarded and this process parsed one side's messages during the other side's
 *    next sample, which billed the fast side's backlog to the slow one (0.22–0.30× measured so
 *    on a quiet machine, where the two sides timed directly over 100 ticks are 0.9–1.0×).
 * 2. `mqtt: change → subscriber p99` — `updateIntervalMs` 10, On Change, json, on the real
 *    clock: 100 tags change every 10 ms (10,000 changes/s) for 5 s; each change carries its
 *    write time, and the subscriber records when its entry arrives. The rate printed is
 *    1000 / p99 (ms), so the budget "p99 < 50 ms" is "≥ 20 /s"; the baseline is a bare client
 *    publishing each 10 ms batch at once (the floor: broker and subscriber alone).
 */
import { performance } from 'node:perf_hooks';
import { connectAsync, type MqttClient } from 'mqtt';
import { systemClock } from '../src/clock.js';
import { toPayloadEntry } from '../src/publishers/trigger/payload.js';
import type { Sample } from '../src/tags/sample.js';
import type { TagStore } from '../src/tags/tag-store.js';
import { ManualClock } from '../test/helpers/manual-clock.js';
import { benchPublisher } from './bench-publisher.js';
import { brokerCase } from './broker-case.js';
import { ChangeLatencies } from './change-latency.js';
import { caseResult, latencySide, type MeasuredCase, runAsyncCase } from './harness.js';
import { seededStore } from './seeded-store.js';

const tagCount = 1_000;
const tagIds = Array.from({ length: tagCount }, (_, i) => `Line1/plc-${i % 10}/HR${40001 + i}`);

/** Resolves once the publisher `bench` reports its status `On` (connected) in `store`. */
function publisherOn(store: TagStore): Promise<void> {
  return new Promise<void>((resolve) => {
    const off = store.subscribe((updates) => {
      if (
        updates.some(
          (u) => u.sample.fullTagId === 'Publishers/bench/Status' && u.sample.value === 'On',
        )
      ) {
        off();
        resolve();
      }
    });
  });
}

async function counter(
  url: string,
  topic: string,
): Promise<{
  client: MqttClient;
  count: () => number;
  reached: (count: number) => Promise<void>;
}> {
  const client = await connectAsync(url, { reconnectPeriod: 0 });
  let received = 0;
  let waiting: { count: number; resolve: () => void } | undefined;
  client.on('message', () => {
    received++;
    if (waiting !== undefined && received >= waiting.count) {
      waiting.resolve();
      waiting = undefined;
    }
  });
  await client.subscribeAsync(topic, { qos: 0 });
  return {
    client,
    count: () => received,
    reached: (count) =>
      received >= count
        ? Promise.resolve()
        : new Promise((resolve) => (waiting = { count, resolve })),
  };
}

function publishCase(qos: 0 | 1): MeasuredCase {
  const info = {
    name: `mqtt: publish QoS ${qos}`,
    unit: 'messages',
    unitsPerIteration: tagCount,
    budget: { minRatio: 0.7, description: '≥ 0.7 × a bare mqtt client loop (issue 13)' },
  };
  return brokerCase(info, 'mqtt', async ({ t, broker, folder }) => {
    const sink = await counter(broker.url, 'bench/#');
    t.teardown(() => sink.client.endAsync(true));
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const store = seededStore(tagIds, (i) => i * 0.5, clock);
    const { publisher } = await benchPublisher(
      { store, clock, brokerUrl: broker.url, stateDir: folder },
      {
        format: 'json-per-tag',
        loggingMode: 'Snapshot',
        retain: false,
        qos,
        topicPrefix: 'bench/tagd',
        updateIntervalMs: 1000,
      },
    );
    const connected = publisherOn(store);
    await publisher.start();
    await connected;
    t.teardown(() => publisher.stop());
    const bare = await connectAsync(broker.url, { reconnectPeriod: 0, protocolVersion: 5 });
    t.teardown(() => bare.endAsync(true));
    const messages = tagIds.map((id) => {
      const entry = toPayloadEntry(store.get(id) as Sample);
      return { topic: `bench/bare/${id}`, payload: JSON.stringify(entry) };
    });
    return await runAsyncCase(
      {
        ...info,
        baseline: {
          name: `bare mqtt client, ${tagCount} prepared messages`,
          run: async (iterations) => {
            for (let i = 0; i < iterations; i++) {
              const received = sink.count() + messages.length;
              await new Promise<void>((resolve, reject) => {
                let pending = messages.length;
                for (const message of messages) {
                  bare.publish(message.topic, message.payload, { qos }, (error) => {
                    if (error) reject(error);
                    else if (--pending === 0) resolve();
                  });
                }
              });
              await sink.reached(received);
            }
          },
        },
        subject: {
          name: `MqttPublisher tick: ${tagCount} tags, json-per-tag`,
          run: async (iterations) => {
            for (let i = 0; i < iterations; i++) {
              const received = sink.count() + tagCount;
              clock.advance(1000);
              await publisher.idle();
              await sink.reached(received);
            }
          },
        },
        verify() {
          const state = publisher.state();
          if (state.counters.failures > 0) throw new Error('a batch failed');
        },
      },
      { samples: 7, warmupMs: 500 },
    );
  });
}

function latencyCase(): MeasuredCase {
  const info = {
    name: 'mqtt: change → subscriber p99',
    unit: 'p99⁻¹ (1000 / ms)',
    budget: {
      minRatePerSecond: 20,
      description: 'p99 < 50 ms at 10,000 changes/s, updateIntervalMs 10, On Change (issue 13)',
    },
  };
  const changesPerWrite = 100;
  const writeEveryMs = 10;
  const durationMs = 5_000;
  return brokerCase(info, 'mqtt', async ({ t, broker, folder }) => {
    const changes = new ChangeLatencies({
      tagIds: tagIds.slice(0, changesPerWrite),
      everyMs: writeEveryMs,
      durationMs,
      // The last batch's way through the broker.
      settleMs: 200,
    });
    const run = async (topic: string, start: () => Promise<(values: Sample[]) => void>) => {
      const sub = await connectAsync(broker.url, { reconnectPeriod: 0 });
      t.teardown(() => sub.endAsync(true));
      sub.on('message', (_topic, payload) => {
        const now = performance.now();
        for (const entry of JSON.parse(String(payload)) as { value: number }[]) {
          changes.arrived(entry.value, now);
        }
      });
      await sub.subscribeAsync(topic, { qos: 0 });
      return changes.drive(await start());
    };

    const bare = await connectAsync(broker.url, { reconnectPeriod: 0, protocolVersion: 5 });
    t.teardown(() => bare.endAsync(true));
    const baseline = await run('bench/bare/#', async () => (samples) => {
      const entries = samples.map((sample) => toPayloadEntry(sample));
      bare.publish('bench/bare/plant', JSON.stringify(entries), { qos: 1 });
    });

    const store = seededStore(tagIds, () => 0);
    const { publisher } = await benchPublisher(
      { store, clock: systemClock, brokerUrl: broker.url, stateDir: folder },
      {
        format: 'json',
        loggingMode: 'On Change',
        updateIntervalMs: 10,
        topicPrefix: 'bench/tagd',
      },
    );
    t.teardown(() => publisher.stop());
    const subject = await run('bench/tagd/#', async () => {
      const connected = publisherOn(store);
      await publisher.start();
      await connected;
      return (samples) => store.write(samples);
    });
    return caseResult(
      info,
      latencySide('bare client, each 10 ms batch published at once', baseline),
      latencySide('MqttPublisher, On Change every 10 ms', subject),
    );
  });
}

/** The cases, for bench/run.ts. */
export const cases: MeasuredCase[] = [publishCase(0), publishCase(1), latencyCase()];
