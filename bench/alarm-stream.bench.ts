/**
 * `GET /api/v2/Alerts/Stream` latency (issue 22: change → alarm event on the Stream, p99 under
 * 20 ms), against a bare node:http SSE loop in the same run.
 *
 * 10,000 High alarms watch 10,000 tags; a writer changes every tag once a second, in 100
 * batches of 100 every 10 ms. In each batch one marker tag crosses its limit (up, or back down
 * on its next turn), so each batch makes exactly one transition; its value carries the batch's
 * sequence number. The writer notes when it wrote each batch, the client (node:http, same
 * process) when the event holding its number arrives. Baseline: a bare server that subscribes
 * to the store and writes each batch's marker sample as `data: <JSON>` to its one client.
 * Subject: the real API (koa, token authentication, AlertView, the stream hub) over the alarm
 * service (evaluation, the journal commit in a file, the state tags), with a service token.
 * Sides alternate in phases of a few seconds.
 *
 * As in stream.bench.ts each phase's "rate" is 1 / its p99 latency (50 per second = 20 ms);
 * ratio = baseline p99 / subject p99; p50, p99 and max in ms are printed per side.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { AlarmJournal } from '../src/alarms/alarm-journal.js';
import { alarmDefinitionSchema } from '../src/alarms/alarm-schema.js';
import { AlarmService } from '../src/alarms/alarm-service.js';
import { createApp } from '../src/api/app.js';
import { AccountService } from '../src/auth/account-service.js';
import { SignInLimiter } from '../src/auth/sign-in-limiter.js';
import { defaultLifetimes, TokenService } from '../src/auth/token-service.js';
import { UserStore } from '../src/auth/user-store.js';
import { systemClock } from '../src/clock.js';
import { SecretBox } from '../src/profile/secret-box.js';
import type { Sample } from '../src/tags/sample.js';
import { TagStore } from '../src/tags/tag-store.js';
import { type CaseResult, type MeasuredCase, median, sideResult } from './harness.js';

const tagCount = 10_000;
const batchSize = 100;
const batchIntervalMs = 10;
const limit = 50;
/** Values of markers above the limit: this plus the batch number. */
const high = 1_000_000;
/** Issue 22: change → alarm event p99 under this many ms. */
const maxP99Ms = 20;
const phases = 4;
const phaseMs = 3_000;

const silent = pino({ level: 'silent' });
const tagIds = Array.from(
  { length: tagCount },
  (_, i) => `Line${1 + Math.floor(i / 1000)}/plc-${Math.floor(i / 100) % 10}/AI${i % 100}`,
);

/** The batch number a marker value carries. */
function batchOf(value: unknown): number | undefined {
  if (typeof value !== 'number') return undefined;
  return value >= high ? value - high : -value;
}

/** Reads an event stream, noting when each batch number (in `value` of its items) arrives. */
function follow(url: string, headers: Record<string, string>, arrivals: Map<number, number>) {
  return new Promise<{ close(): void }>((resolve, reject) => {
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
          const at = performance.now();
          for (const item of JSON.parse(block.slice(6)) as { value?: unknown }[]) {
            const id = batchOf(item.value);
            if (id !== undefined && !arrivals.has(id)) arrivals.set(id, at);
          }
        }
      });
      resolve({ close: () => req.destroy() });
    });
    req.end();
  });
}

/** The bare SSE loop: each batch's marker sample as one `data:` line. */
function bareServer(store: TagStore): Server {
  return createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
    response.flushHeaders();
    const unsubscribe = store.subscribe((updates) => {
      const markers: Sample[] = [];
      for (const update of updates) {
        const value = update.sample.value;
        if (typeof value === 'number' && (value >= high || value < 0)) markers.push(update.sample);
      }
      if (markers.length > 0) response.write(`data: ${JSON.stringify(markers)}\n\n`);
    });
    response.on('close', unsubscribe);
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What the writer keeps between phases: the next batch number, the markers now above. */
interface WriterState {
  next: number;
  offset: number;
  above: Set<number>;
}

async function writeFor(
  store: TagStore,
  durationMs: number,
  state: WriterState,
  written: Map<number, number>,
): Promise<void> {
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    const id = state.next++;
    const utcTimestamp = new Date().toISOString();
    const batch: Sample[] = [];
    for (let i = 0; i < batchSize; i++) {
      const index = (state.offset + i) % tagCount;
      let value = i % 2 === 0 ? 10 : 11;
      // The batch's first tag is its marker: it crosses its limit, up or back down.
      if (i === 0) {
        if (state.above.delete(index)) value = -id;
        else {
          state.above.add(index);
          value = high + id;
        }
      } else if (state.above.has(index)) value = high - 1;
      batch.push({ fullTagId: tagIds[index] as string, utcTimestamp, quality: 'Good', value });
    }
    state.offset = (state.offset + batchSize) % tagCount;
    written.set(id, performance.now());
    store.write(batch);
    await new Promise((resolve) => setTimeout(resolve, batchIntervalMs));
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

async function measure(): Promise<CaseResult> {
  const stateDir = await mkdtemp(join(tmpdir(), 'tagd-bench-alarm-stream-'));
  const store = new TagStore({ logger: silent });
  store.write(
    tagIds.map((fullTagId) => ({
      fullTagId,
      utcTimestamp: new Date().toISOString(),
      quality: 'Good' as const,
      value: 0,
    })),
  );
  const alarms = new AlarmService({
    store,
    clock: systemClock,
    logger: silent,
    journal: new AlarmJournal({
      file: join(stateDir, 'alarms.db'),
      checkpoints: { clock: systemClock, logger: silent },
    }),
    definitions: tagIds.map((source, i) =>
      alarmDefinitionSchema.parse({ name: `A${i}`, source, condition: 'High', limit }),
    ),
  });
  await alarms.start();
  const users = new UserStore({ stateDir });
  await users.start();
  const tokens = await TokenService.open(stateDir, defaultLifetimes);
  const accounts = new AccountService({
    users,
    tokens,
    limiter: new SignInLimiter(Date.now),
    secretBox: await SecretBox.open(stateDir),
    audit: silent,
    now: Date.now,
  });
  await users.add({ username: 'scada', kind: 'service', roles: ['Viewers'] });
  const token = await accounts.generateServiceToken('scada');
  const app = createApp({
    store,
    logger: silent,
    version: 'bench',
    accounts,
    audit: silent,
    alarms,
  });
  const apiServer = createServer(app.callback());
  const bare = bareServer(store);
  const urls = [
    `${await listen(bare)}/`,
    `${await listen(apiServer)}/api/v2/Alerts/Stream`,
  ] as const;
  const names = [
    'bare node:http SSE loop (marker samples)',
    'GET /api/v2/Alerts/Stream (alarms, journal, koa, auth, hub)',
  ] as const;
  const latencies: [number[], number[]] = [[], []];
  const phaseRates: [number[], number[]] = [[], []];
  const writer: WriterState = { next: 1, offset: 0, above: new Set() };
  try {
    for (let round = 0; round < phases * 2; round++) {
      const side = ((round + Math.floor(round / 2)) % 2) as 0 | 1;
      const arrivals = new Map<number, number>();
      const written = new Map<number, number>();
      const client = await follow(urls[side], { Authorization: `Bearer ${token}` }, arrivals);
      await writeFor(store, phaseMs, writer, written);
      client.close();
      const phase: number[] = [];
      for (const [id, at] of written) {
        const arrived = arrivals.get(id);
        if (arrived === undefined) throw new Error(`${names[side]}: batch ${id} never arrived`);
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
    await alarms.stop();
    await users.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
  for (const [side, values] of latencies.entries()) {
    values.sort((a, b) => a - b);
    process.stdout.write(
      `  ${names[side]}: change → event p50 ${quantile(values, 0.5).toFixed(2)} ms, ` +
        `p99 ${quantile(values, 0.99).toFixed(2)} ms, max ${(values.at(-1) ?? 0).toFixed(2)} ms ` +
        `over ${values.length} batches of ${batchSize}\n`,
    );
  }
  const baseline = sideResult(names[0], tagCount / batchSize, phaseRates[0]);
  const subject = sideResult(names[1], tagCount / batchSize, phaseRates[1]);
  return {
    benchmark: alarmStreamCase,
    baseline,
    subject,
    ratio: subject.medianRate / baseline.medianRate,
    verdict: median(phaseRates[1]) >= 1000 / maxP99Ms ? 'met' : 'NOT met',
  };
}

const alarmStreamCase: MeasuredCase = {
  kind: 'measured',
  name: 'alarms: change → stream event, 10,000 alarms',
  unit: '(1 / p99)',
  budget: {
    minRatePerSecond: 1000 / maxP99Ms,
    description: `issue 22: change → alarm event p99 under ${maxP99Ms} ms on loopback, ${tagCount} alarmed tags changing once a second`,
  },
  measure,
};

/** The cases, for bench/run.ts. */
export const cases: MeasuredCase[] = [alarmStreamCase];
