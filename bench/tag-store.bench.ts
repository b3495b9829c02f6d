/**
 * TagStore write throughput against a plain `Map.set` loop doing the same stores.
 *
 * 10,000 tags are written in batches of 100, as a driver poll would hand them over. The sample
 * objects are prebuilt outside the timed loop (drivers allocate them anyway); two sets with
 * different values alternate round by round, so every update really changes its tag.
 */
import type { Sample } from '../src/tags/sample.js';
import { TagStore, type TagUpdate } from '../src/tags/tag-store.js';
import type { BenchmarkCase, BenchmarkSide } from './harness.js';

/** Tags written per round. */
const tagCount = 10_000;
/** Samples per `write` call, like one driver poll. */
const batchSize = 100;
/** The design budget: sample updates per second on one core. */
const minUpdatesPerSecond = 5_000_000;

const tagIds = Array.from(
  { length: tagCount },
  (_, i) => `line1/plc-${Math.floor(i / batchSize)}/HR${40001 + (i % batchSize)}`,
);

/** One round of samples for every tag, split into batches; `phase` varies the values. */
function buildRound(phase: number): Sample[][] {
  const utcTimestamp = new Date(Date.UTC(2025, 0, 1, 0, 0, phase)).toISOString();
  const batches: Sample[][] = [];
  for (let start = 0; start < tagCount; start += batchSize) {
    const batch: Sample[] = [];
    for (let i = start; i < start + batchSize; i++) {
      batch.push({
        fullTagId: tagIds[i] as string,
        utcTimestamp,
        quality: 'Good',
        value: i + phase / 2,
      });
    }
    batches.push(batch);
  }
  return batches;
}

const rounds = [buildRound(0), buildRound(1)] as const;
const batchesPerRound = tagCount / batchSize;

/** Hands out the batches of alternating rounds, one per call, endlessly. */
class BatchFeed {
  private round = 0;
  private batch = 0;

  next(): readonly Sample[] {
    const batches = rounds[this.round] as Sample[][];
    const batch = batches[this.batch] as Sample[];
    if (++this.batch === batchesPerRound) {
      this.batch = 0;
      this.round ^= 1;
    }
    return batch;
  }
}

/** The least a store can do: keep the latest sample per tag in a Map. */
function mapSetBaseline(): BenchmarkSide {
  const latest = new Map<string, Sample>();
  for (const batch of rounds[0]) for (const sample of batch) latest.set(sample.fullTagId, sample);
  const feed = new BatchFeed();
  return {
    name: `Map<string, Sample>.set loop (${tagCount} keys, batches of ${batchSize})`,
    run(iterations) {
      for (let n = 0; n < iterations; n++) {
        const batch = feed.next();
        for (let i = 0; i < batch.length; i++) {
          const sample = batch[i] as Sample;
          latest.set(sample.fullTagId, sample);
        }
      }
    },
  };
}

/** A store with every tag defined up front, as drivers do before their first poll. */
function definedStore(): TagStore {
  const store = new TagStore();
  store.define(tagIds.map((fullTagId) => ({ fullTagId })));
  return store;
}

function storeSide(store: TagStore, name: string): BenchmarkSide {
  const feed = new BatchFeed();
  return {
    name,
    run(iterations) {
      for (let n = 0; n < iterations; n++) store.write(feed.next());
    },
  };
}

const budget = {
  minRatePerSecond: minUpdatesPerSecond,
  description: 'design doc: at least 5 million sample updates per second on one core',
};

function withoutSubscriber(): BenchmarkCase {
  const store = definedStore();
  return {
    name: 'tag-store: write, no subscriber',
    unit: 'updates',
    unitsPerIteration: batchSize,
    baseline: mapSetBaseline(),
    subject: storeSide(store, `TagStore.write (${tagCount} defined tags, no subscriber)`),
    budget,
    verify() {
      const expected = rounds[1][batchesPerRound - 1]?.[batchSize - 1];
      const stored = store.get(expected?.fullTagId ?? '');
      if (stored?.quality !== 'Good') throw new Error('TagStore.write stored nothing');
    },
  };
}

function withSubscriber(): BenchmarkCase {
  const store = definedStore();
  let updates = 0;
  let changed = 0;
  store.subscribe((batch: readonly TagUpdate[]) => {
    updates += batch.length;
    for (let i = 0; i < batch.length; i++) if ((batch[i] as TagUpdate).changed) changed++;
  });
  return {
    name: 'tag-store: write, 1 subscriber',
    unit: 'updates',
    unitsPerIteration: batchSize,
    baseline: mapSetBaseline(),
    subject: storeSide(store, `TagStore.write (${tagCount} defined tags, 1 subscriber counting)`),
    budget,
    verify() {
      if (updates === 0) throw new Error('the subscriber saw no updates');
      // Rounds alternate values, so every update after the placeholders changes its tag.
      if (changed !== updates) {
        throw new Error(`only ${changed} of ${updates} updates were flagged changed`);
      }
    },
  };
}

/** The cases of this file, each with its own store and baseline map. */
export const cases: BenchmarkCase[] = [withoutSubscriber(), withSubscriber()];
