/**
 * A Sparkplug store-and-forward backlog, for bench/relay.bench.ts and
 * bench/sparkplug-catch-up.bench.ts: `rounds` rounds of one sample of each tag, 100 ms apart on a
 * ManualClock from 2026-01-01, stored by a real MqttPublisher (sparkplugB, `primaryHostId`
 * `central`, Everything) while its primary host is offline; and the same samples as
 * historical DDATA payloads for a bare client, the baseline.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { UMetric, UPayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import type { MqttPublisher } from '../src/publishers/mqtt/mqtt-publisher.js';
import type { Sample } from '../src/tags/sample.js';
import { TagStore } from '../src/tags/tag-store.js';
import { ManualClock } from '../test/helpers/manual-clock.js';
import { benchPublisher } from './bench-publisher.js';

const silent = pino({ level: 'silent' });

/** The samples of a round: each tag's value is `round × 1000 + index × 0.5`, stamped now. */
function roundSamples(tagIds: readonly string[], clock: ManualClock, round: number): Sample[] {
  const stamp = new Date(clock.now()).toISOString();
  return tagIds.map((fullTagId, i) => ({
    fullTagId,
    utcTimestamp: stamp,
    quality: 'Good',
    value: round * 1_000 + i * 0.5,
  }));
}

/** The backlog's samples, rounds 1 to `rounds`, as the baseline publishes them. */
export function backlogSamples(tagIds: readonly string[], rounds: number): Sample[] {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const samples: Sample[] = [];
  for (let round = 1; round <= rounds; round++) {
    clock.advance(100);
    samples.push(...roundSamples(tagIds, clock, round));
  }
  return samples;
}

/**
 * The historical DDATA payload of `samples[start, start + count)`, each a Double of quality Good
 * (192) whose alias is its tag's index in a round (`tagCount` tags) plus `firstAlias`.
 */
export function historicalPayload(
  samples: readonly Sample[],
  start: number,
  count: number,
  tagCount: number,
  firstAlias: number,
  seq: number,
): UPayload {
  const metrics: UMetric[] = samples.slice(start, start + count).map((sample, i) => ({
    alias: ((start + i) % tagCount) + firstAlias,
    timestamp: Date.parse(sample.utcTimestamp),
    type: 'Double' as const,
    value: sample.value as number,
    isHistorical: true,
    properties: { Quality: { type: 'Int32' as const, value: 192 } },
  }));
  return { timestamp: Date.now(), seq, metrics };
}

/** The edge publisher holding the backlog, and its store. */
export interface StoredBacklog {
  store: TagStore;
  publisher: MqttPublisher;
}

/**
 * Starts the edge: a TagStore on a ManualClock holding round 0 of `tagIds`, and the publisher
 * `bench` (group `Bench`, edge node `edge`, 100 ms interval, 256 MB buffer, state in a fresh
 * folder), writes rounds 1 to `rounds` while the primary host `central` is offline, then runs
 * `forward` (which brings a host online and waits for what it measures), stops the edge and
 * removes the folder. Throws unless the publisher stored every sample.
 */
export async function withBacklog<T>(
  brokerUrl: string,
  tagIds: readonly string[],
  rounds: number,
  forward: (backlog: StoredBacklog) => Promise<T>,
): Promise<T> {
  const stateDir = mkdtempSync(join(tmpdir(), 'tagd-bench-backlog-'));
  try {
    return await forwardBacklog(brokerUrl, stateDir, tagIds, rounds, forward);
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

async function forwardBacklog<T>(
  brokerUrl: string,
  stateDir: string,
  tagIds: readonly string[],
  rounds: number,
  forward: (backlog: StoredBacklog) => Promise<T>,
): Promise<T> {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const store = new TagStore({ clock, logger: silent });
  store.write(roundSamples(tagIds, clock, 0));
  const { publisher, collections } = await benchPublisher(
    { store, clock, brokerUrl, stateDir },
    {
      format: 'sparkplugB',
      groupId: 'Bench',
      edgeNodeId: 'edge',
      primaryHostId: 'central',
      loggingMode: 'Everything',
      updateIntervalMs: 100,
      bufferLimitMB: 256,
    },
  );
  await publisher.start();
  for (let round = 1; round <= rounds; round++) {
    clock.advance(10);
    store.write(roundSamples(tagIds, clock, round));
    clock.advance(90);
  }
  const stored = tagIds.length * rounds;
  const queued = publisher.state().sparkplug?.storedSamples;
  if (queued !== stored) throw new Error(`${queued} samples stored, not ${stored}`);
  const result = await forward({ store, publisher });
  await publisher.stop();
  await collections.stop();
  return result;
}
