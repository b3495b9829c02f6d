/**
 * Webhook publisher budgets (docs/architecture.md, "Budgets"): a 10,000-tag Snapshot batch built, serialized and
 * delivered to a loopback receiver in under 50 ms; 100,000 updates per second through Everything
 * mode without growing memory.
 *
 * 1. `webhook: Snapshot 10,000 tags delivered` is a load case (bench/load-harness.ts), because a
 *    delivery is asynchronous. Each request to the subject's trigger server runs one real tick
 *    of a real WebhookPublisher (Snapshot, ManualClock moved by one interval): members re-read
 *    from the collection, 10,000 samples selected, the entry array built, serialized once and
 *    POSTed with got to a node:http receiver on 127.0.0.1 that reads the whole body; the answer
 *    goes out when the delivery has ended. Triggers are queued so that one delivery is in flight
 *    at a time, as in the publisher, so the subject's rate is 1 / (time per batch) and the
 *    budget "under 50 ms per batch" is "at least 20 batches/s". The baseline trigger server
 *    does JSON.stringify of the same 10,000-entry array alone per request, so the ratio is the
 *    cost of the whole delivery against serializing alone. (The load tool's latency lines show
 *    the queueing of its 20 connections, not the time of one batch; `verify` prints that time,
 *    measured one batch after another.)
 * 2. `webhook: Everything mode` writes batches of 100 samples into a TagStore of 10,000 tags
 *    that a running Everything publisher follows (the clock never ticks, so its ring of 100,000
 *    fills, then drops the oldest); the baseline is the same store with one subscriber that only
 *    counts. The heap, after a forced GC, is printed before and after the measurement.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { buildPayload } from '../src/publishers/trigger/payload.js';
import { type WebhookConfig, webhookConfigSchema } from '../src/publishers/webhook/schema.js';
import { WebhookPublisher } from '../src/publishers/webhook/webhook-publisher.js';
import { Collections } from '../src/tags/collections.js';
import type { Sample } from '../src/tags/sample.js';
import { TagStore, type TagUpdate } from '../src/tags/tag-store.js';
import { ManualClock } from '../test/helpers/manual-clock.js';
import type { BenchmarkCase, BenchmarkSide } from './harness.js';
import type { LoadCase, LoadSide } from './load-harness.js';
import { listen } from './loopback.js';

/** Tags in the published collection. */
const tagCount = 10_000;
/** Design budget: time per Snapshot batch, ms. */
const maxBatchMs = 50;
/** Design budget: Everything-mode updates per second. */
const minEverythingRate = 100_000;
/** Samples per store write in the Everything case, like one driver poll. */
const writeBatchSize = 100;

const silent = pino({ level: 'silent' });
const tagIds = Array.from(
  { length: tagCount },
  (_, i) =>
    `Line${1 + Math.floor(i / 1000)}/plc-${Math.floor(i / 100) % 10}/HR${40001 + (i % 100)}`,
);

/** A store holding every tag with a Good value, and a collection `plant` of them all. */
function plant(clock: ManualClock, phase = 0): { store: TagStore; collections: Collections } {
  const store = new TagStore({ clock, logger: silent });
  const utcTimestamp = new Date(clock.now()).toISOString();
  store.write(
    tagIds.map((fullTagId, i) => ({
      fullTagId,
      utcTimestamp,
      quality: 'Good',
      value: i * 0.5 + phase,
    })),
  );
  const collections = new Collections(store, [{ name: 'plant', members: ['**'] }], silent);
  return { store, collections };
}

function publisherConfig(
  destinationUrl: string,
  extra: Partial<WebhookConfig> = {},
): WebhookConfig {
  return webhookConfigSchema.parse({
    name: 'bench',
    destinationUrl,
    collections: ['plant'],
    updateIntervalSeconds: 1,
    ...extra,
  });
}

async function close(server: Server | undefined): Promise<void> {
  if (server === undefined) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A trigger server answering 204 once `work` has run, one request's work at a time. */
function triggerServer(work: () => Promise<void> | void): Server {
  let queue: Promise<void> = Promise.resolve();
  return createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    queue = queue.then(work).then(
      () => {
        response.writeHead(204).end();
      },
      (error: unknown) => {
        response.writeHead(500).end(String(error));
      },
    );
  });
}

/** The receiver: reads every body to its end, answers 200, keeps the last body. */
function receiverServer(last: { body?: Buffer; count: number }): Server {
  return createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      last.body = Buffer.concat(chunks);
      last.count++;
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
}

/** The same 10,000 entries the subject sends, built once, outside the timed work. */
function referenceEntries(): ReturnType<typeof buildPayload> {
  const { store } = plant(new ManualClock());
  return buildPayload(tagIds.map((id) => store.get(id) as Sample));
}

function snapshotCase(): LoadCase {
  const entries = referenceEntries();
  const received: { body?: Buffer; count: number } = { count: 0 };
  let sink = 0;
  let baselineServer: Server | undefined;
  let subject: { trigger: Server; receiver: Server; publisher: WebhookPublisher } | undefined;
  let runBatch: (() => Promise<void>) | undefined;

  const baseline: LoadSide = {
    name: `JSON.stringify of the same ${tagCount}-entry array alone`,
    async start() {
      baselineServer = triggerServer(() => {
        sink += JSON.stringify(entries).length;
      });
      return listen(baselineServer);
    },
    async stop() {
      await close(baselineServer);
    },
  };

  const subjectSide: LoadSide = {
    name: `WebhookPublisher Snapshot tick: select ${tagCount} + build + stringify + got POST`,
    async start() {
      const clock = new ManualClock();
      const { store, collections } = plant(clock);
      const receiver = receiverServer(received);
      const destination = await listen(receiver);
      const publisher = new WebhookPublisher(publisherConfig(`${destination}/hook`), {
        store,
        collections,
        clock,
        logger: silent,
        version: 'bench',
      });
      await publisher.start();
      runBatch = async () => {
        const before = received.count;
        clock.advance(1_000);
        await publisher.idle();
        if (received.count !== before + 1) throw new Error('the tick delivered no batch');
      };
      const trigger = triggerServer(() => (runBatch as () => Promise<void>)());
      subject = { trigger, receiver, publisher };
      return listen(trigger);
    },
    async stop() {
      if (subject === undefined) return;
      await subject.publisher.stop();
      await close(subject.trigger);
      await close(subject.receiver);
    },
  };

  return {
    kind: 'load',
    name: 'webhook: Snapshot 10,000 tags delivered',
    unit: 'batches',
    path: '/batch',
    baseline,
    subject: subjectSide,
    budget: {
      minRatePerSecond: 1_000 / maxBatchMs,
      description: `design doc: a ${tagCount}-tag Snapshot batch built, serialized and delivered in under ${maxBatchMs} ms`,
    },
    async verify(baselineUrl, subjectUrl) {
      const [bare, real] = await Promise.all(
        [baselineUrl, subjectUrl].map((url) => fetch(url, { method: 'POST' })),
      );
      if (bare?.status !== 204 || real?.status !== 204) {
        throw new Error(`trigger status ${bare?.status} / ${real?.status}`);
      }
      if (sink === 0) throw new Error('the baseline serialized nothing');
      if (received.body?.toString('utf8') !== JSON.stringify(entries)) {
        throw new Error('the receiver did not get the same 10,000-entry array');
      }
      // One batch after another, no load tool: the time of one batch.
      const times: number[] = [];
      for (let i = 0; i < 60; i++) {
        const start = performance.now();
        await (runBatch as () => Promise<void>)();
        if (i >= 10) times.push(performance.now() - start);
      }
      times.sort((a, b) => a - b);
      const at = (q: number) => (times[Math.floor(q * (times.length - 1))] as number).toFixed(2);
      process.stdout.write(
        `  one batch at a time: ${received.body.length} bytes, median ${at(0.5)} ms, ` +
          `p90 ${at(0.9)} ms, max ${at(1)} ms per batch (budget ${maxBatchMs} ms)\n`,
      );
    },
  };
}

/** A forced full GC, when V8 lets us have one. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('typeof gc === "function" ? gc : undefined') as
    | (() => void)
    | undefined;
  gc?.();
}

function heapMb(): string {
  collectGarbage();
  return (process.memoryUsage().heapUsed / 2 ** 20).toFixed(1);
}

/** Two rounds of every tag with alternating values, in batches of {@link writeBatchSize}. */
function rounds(): Sample[][] {
  const batches: Sample[][] = [];
  for (let phase = 1; phase <= 2; phase++) {
    const utcTimestamp = new Date(Date.UTC(2026, 0, 1, 0, 0, phase)).toISOString();
    for (let start = 0; start < tagCount; start += writeBatchSize) {
      const batch: Sample[] = [];
      for (let i = start; i < start + writeBatchSize; i++) {
        batch.push({
          fullTagId: tagIds[i] as string,
          utcTimestamp,
          quality: 'Good',
          value: i + phase,
        });
      }
      batches.push(batch);
    }
  }
  return batches;
}

function writer(store: TagStore, batches: Sample[][], name: string): BenchmarkSide {
  let next = 0;
  return {
    name,
    run(iterations) {
      for (let n = 0; n < iterations; n++) {
        store.write(batches[next] as Sample[]);
        next = next + 1 === batches.length ? 0 : next + 1;
      }
    },
  };
}

function everythingCase(): BenchmarkCase {
  const batches = rounds();
  const bufferSize = 100_000;

  const baselineStore = plant(new ManualClock()).store;
  let counted = 0;
  baselineStore.subscribe((updates: readonly TagUpdate[]) => {
    counted += updates.length;
  });

  const clock = new ManualClock();
  const { store, collections } = plant(clock);
  const publisher = new WebhookPublisher(
    publisherConfig('http://127.0.0.1:9/never', {
      loggingMode: 'Everything',
      everythingBufferSize: bufferSize,
    }),
    { store, collections, clock, logger: silent, version: 'bench' },
  );
  let heapBefore = '';
  const subject = writer(
    store,
    batches,
    `TagStore.write + Everything publisher (membership, ring of ${bufferSize})`,
  );
  let started = false;

  return {
    name: 'webhook: Everything mode, store updates into the buffer',
    unit: 'updates',
    unitsPerIteration: writeBatchSize,
    baseline: writer(baselineStore, batches, 'TagStore.write + 1 subscriber counting'),
    subject: {
      name: subject.name,
      run(iterations) {
        if (!started) {
          started = true;
          // start() subscribes synchronously before its first await (no caFile to read).
          void collections.start();
          void publisher.start();
          heapBefore = heapMb();
        }
        subject.run(iterations);
      },
    },
    budget: {
      minRatePerSecond: minEverythingRate,
      description: 'design doc: 100,000 updates per second through Everything mode',
    },
    verify() {
      const state = publisher.state();
      if (counted === 0) throw new Error('the baseline subscriber saw no updates');
      if (state.counters.droppedSamples === 0) throw new Error('the ring never filled');
      process.stdout.write(
        `  Everything: heap ${heapBefore} MB before, ${heapMb()} MB after (after GC); ` +
          `ring of ${bufferSize} full, ${state.counters.droppedSamples} oldest updates dropped\n`,
      );
      void publisher.stop();
    },
  };
}

/** The cases of this file. Servers start only when a case runs. */
export const cases: (BenchmarkCase | LoadCase)[] = [snapshotCase(), everythingCase()];
