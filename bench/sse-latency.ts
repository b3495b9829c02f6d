/**
 * Change → event latency of a server-sent event stream over loopback, for bench/stream.bench.ts
 * and bench/alarm-stream.bench.ts: a writer puts numbered batches of samples into a TagStore at
 * a steady pace, a node:http client in this process notes when the event holding each batch
 * number arrives, and two servers (a bare node:http SSE loop and the real API) are followed in
 * turn, in phases of a few seconds.
 *
 * The harness compares rates, so each phase's "rate" is 1 / its p99 latency (per second: 50
 * means 20 ms) and a budget "p99 under X ms" is a minimum rate of 1000 / X; the ratio is
 * baseline p99 / subject p99. p50, p99 and max in ms are printed per side, over all phases.
 */
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import type { ApiDeps } from '../src/api/api-deps.js';
import { createApp } from '../src/api/app.js';
import type { Sample } from '../src/tags/sample.js';
import type { TagStore, TagUpdate } from '../src/tags/tag-store.js';
import { type CaseInfo, type CaseResult, caseResult, sideResult } from './harness.js';
import { listen } from './loopback.js';
import { serviceAccount } from './service-account.js';

/**
 * The load both benchmarks write: 10,000 tags, all changed once a second in 100 batches of 100
 * every 10 ms (as polling drivers write a block at a time), in 4 phases of 3 s per side.
 */
export const streamLoad = {
  tagCount: 10_000,
  batchSize: 100,
  /** Pause after each batch written, ms. */
  batchIntervalMs: 10,
  /** Phases per side, taken alternately. */
  phases: 4,
  /** Length of one phase's writing, ms (then 200 ms for the last events to arrive). */
  phaseMs: 3_000,
} as const;

const silent = pino({ level: 'silent' });

/** Arrival (or write) times of batch numbers, `performance.now()` ms. */
export type BatchTimes = Map<number, number>;

/**
 * Reads an event stream, handing the text of each `data:` event and the time it arrived
 * (`performance.now()`, taken before parsing) to `onData`.
 */
function follow(
  url: string,
  headers: Record<string, string>,
  onData: (data: string, at: number) => void,
): Promise<{ close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers });
    req.on('error', reject);
    req.on('response', (response: IncomingMessage) => {
      if (response.statusCode !== 200) {
        reject(new Error(`stream answered ${response.statusCode}`));
        return;
      }
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
          if (!block.startsWith('data: ')) continue;
          onData(block.slice(6), performance.now());
        }
      });
      resolve({ close: () => req.destroy() });
    });
    req.end();
  });
}

/**
 * The bare SSE loop of a baseline: subscribes each client to `store` and writes what `dataOf`
 * makes of each batch of updates as one `data:` line (nothing when it returns undefined).
 */
function bareSseServer(
  store: TagStore,
  dataOf: (updates: readonly TagUpdate[]) => string | undefined,
): Server {
  return createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
    response.flushHeaders();
    const unsubscribe = store.subscribe((updates) => {
      const data = dataOf(updates);
      if (data !== undefined) response.write(`data: ${data}\n\n`);
    });
    response.on('close', unsubscribe);
  });
}

/** A stream latency measurement: the two servers, the writer and how to read the events. */
export interface StreamLatency {
  /** The case, for the result. Its budget should be a `minRatePerSecond` of 1000 / p99 ms. */
  benchmark: CaseInfo;
  /** The store the writer writes to and both servers follow. */
  store: TagStore;
  /** A fresh folder for the API's accounts. */
  stateDir: string;
  /** The baseline: a bare node:http SSE loop writing what `dataOf` makes of each store batch. */
  bare: { name: string; dataOf(updates: readonly TagUpdate[]): string | undefined };
  /**
   * The subject: the real API (`createApp` on the store, with a service account whose token
   * the client sends, and `deps`), its stream at `path`.
   */
  api: { name: string; path: string; deps?: Partial<ApiDeps> };
  /** The next batch to write and its number (which the events will carry). */
  nextBatch(): { id: number; batch: Sample[] };
  /** Notes in `arrivals` the batch numbers an event's data holds, arrived at `at`, if not yet noted. */
  noteArrivals(data: string, at: number, arrivals: BatchTimes): void;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

/** Writes batches for `durationMs`, noting in `written` when each was written. */
async function writeFor(run: StreamLatency, durationMs: number, written: BatchTimes) {
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    const { id, batch } = run.nextBatch();
    written.set(id, performance.now());
    run.store.write(batch);
    await new Promise((resolve) => setTimeout(resolve, streamLoad.batchIntervalMs));
  }
  // Let the last events arrive.
  await new Promise((resolve) => setTimeout(resolve, 200));
}

/**
 * Starts both servers, follows each in turn (order 0 1 1 0 0 1 1 0…, fair to both) while the
 * writer writes, prints p50, p99 and max per side, stops the servers and returns the case's
 * result. Throws when a batch written during a side's phase never arrived at its client.
 */
export async function measureStreamLatency(run: StreamLatency): Promise<CaseResult> {
  const { batchSize, tagCount } = streamLoad;
  const account = await serviceAccount(run.stateDir, silent);
  const app = createApp({
    store: run.store,
    logger: silent,
    version: 'bench',
    accounts: account.accounts,
    audit: silent,
    ...run.api.deps,
  });
  const apiServer = createServer(app.callback());
  const bare = bareSseServer(run.store, run.bare.dataOf);
  const headers = { Authorization: `Bearer ${account.token}` };
  const latencies: [number[], number[]] = [[], []];
  const phaseRates: [number[], number[]] = [[], []];
  try {
    const sides = [
      { name: run.bare.name, url: `${await listen(bare)}/` },
      { name: run.api.name, url: `${await listen(apiServer)}${run.api.path}` },
    ] as const;
    for (let round = 0; round < streamLoad.phases * 2; round++) {
      const side = ((round + Math.floor(round / 2)) % 2) as 0 | 1;
      const arrivals: BatchTimes = new Map();
      const written: BatchTimes = new Map();
      const client = await follow(sides[side].url, headers, (data, at) =>
        run.noteArrivals(data, at, arrivals),
      );
      await writeFor(run, streamLoad.phaseMs, written);
      client.close();
      const phase: number[] = [];
      for (const [id, at] of written) {
        const arrived = arrivals.get(id);
        if (arrived === undefined)
          throw new Error(`${sides[side].name}: batch ${id} never arrived`);
        phase.push(arrived - at);
      }
      phase.sort((a, b) => a - b);
      latencies[side].push(...phase);
      phaseRates[side].push(1000 / Math.max(0.001, quantile(phase, 0.99)));
    }
  } finally {
    apiServer.closeAllConnections();
    bare.closeAllConnections();
    await Promise.all([apiServer, bare].map((server) => new Promise((r) => server.close(r))));
    await account.stop();
  }
  const names = [run.bare.name, run.api.name] as const;
  for (const [side, values] of latencies.entries()) {
    values.sort((a, b) => a - b);
    process.stdout.write(
      `  ${names[side]}: change → event p50 ${quantile(values, 0.5).toFixed(2)} ms, ` +
        `p99 ${quantile(values, 0.99).toFixed(2)} ms, max ${(values.at(-1) ?? 0).toFixed(2)} ms ` +
        `over ${values.length} batches of ${batchSize}\n`,
    );
  }
  return caseResult(
    run.benchmark,
    sideResult(names[0], tagCount / batchSize, phaseRates[0]),
    sideResult(names[1], tagCount / batchSize, phaseRates[1]),
  );
}
