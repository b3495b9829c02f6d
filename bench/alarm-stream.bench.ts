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
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { AlarmJournal } from '../src/alarms/alarm-journal.js';
import { alarmDefinitionSchema } from '../src/alarms/alarm-schema.js';
import { AlarmService } from '../src/alarms/alarm-service.js';
import { systemClock } from '../src/clock.js';
import type { Sample } from '../src/tags/sample.js';
import type { TagUpdate } from '../src/tags/tag-store.js';
import type { CaseResult, MeasuredCase } from './harness.js';
import { seededStore } from './seeded-store.js';
import { type BatchTimes, measureStreamLatency, streamLoad } from './sse-latency.js';

const { tagCount, batchSize } = streamLoad;
const limit = 50;
/** Values of markers above the limit: this plus the batch number. */
const high = 1_000_000;
/** Issue 22: change → alarm event p99 under this many ms. */
const maxP99Ms = 20;

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

/** Notes when each batch number (in `value` of the event's items) arrives. */
function noteArrivals(data: string, at: number, arrivals: BatchTimes): void {
  for (const item of JSON.parse(data) as { value?: unknown }[]) {
    const id = batchOf(item.value);
    if (id !== undefined && !arrivals.has(id)) arrivals.set(id, at);
  }
}

/** The bare SSE loop's data: each batch's marker sample. */
function bareData(updates: readonly TagUpdate[]): string | undefined {
  const markers: Sample[] = [];
  for (const update of updates) {
    const value = update.sample.value;
    if (typeof value === 'number' && (value >= high || value < 0)) markers.push(update.sample);
  }
  return markers.length > 0 ? JSON.stringify(markers) : undefined;
}

/**
 * Every tag once a second, in batches; the batch's first tag is its marker: it crosses its
 * limit, up or back down, with a value that carries the batch number.
 */
function batches(): () => { id: number; batch: Sample[] } {
  let next = 1;
  let offset = 0;
  /** The markers now above their limit. */
  const above = new Set<number>();
  return () => {
    const id = next++;
    const utcTimestamp = new Date().toISOString();
    const batch: Sample[] = [];
    for (let i = 0; i < batchSize; i++) {
      const index = (offset + i) % tagCount;
      let value = i % 2 === 0 ? 10 : 11;
      if (i === 0) {
        if (above.delete(index)) value = -id;
        else {
          above.add(index);
          value = high + id;
        }
      } else if (above.has(index)) value = high - 1;
      batch.push({ fullTagId: tagIds[index] as string, utcTimestamp, quality: 'Good', value });
    }
    offset = (offset + batchSize) % tagCount;
    return { id, batch };
  };
}

async function measure(): Promise<CaseResult> {
  const stateDir = await mkdtemp(join(tmpdir(), 'tagd-bench-alarm-stream-'));
  const store = seededStore(tagIds, () => 0);
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
  try {
    return await measureStreamLatency({
      benchmark: alarmStreamCase,
      store,
      stateDir,
      bare: { name: 'bare node:http SSE loop (marker samples)', dataOf: bareData },
      api: {
        name: 'GET /api/v2/Alerts/Stream (alarms, journal, koa, auth, hub)',
        path: '/api/v2/Alerts/Stream',
        deps: { alarms },
      },
      nextBatch: batches(),
      noteArrivals,
    });
  } finally {
    await alarms.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
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
