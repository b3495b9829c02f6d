/**
 * Alarms (issue 22 budgets).
 *
 * `alarms: evaluation`: 100,000 High alarms, each on its own source tag, fed batches of 100
 * source changes (as a driver poll hands them over) through the listener the alarm service
 * subscribes to the tag store, so the store's own cost is not counted. Values alternate between
 * two readings below the limit: every update changes its tag, none trips its alarm (evaluation,
 * not journaling, is measured). Baseline: a bare loop finding each tag's limit in a Map and
 * comparing the value with it. Budget: 100,000 changes per second under 50 % of one core, that
 * is at least 200,000 changes per second on one core.
 *
 * `alarms: journal append`: AlarmJournal.append of automatic transitions (WAL, synchronous=NORMAL,
 * a checkpoint at most 1 s after each commit, as the daemon runs it) in batches of 1,000
 * transitions with the 1,000 states they led to, as a flood hands them over. Baseline: the same
 * rows inserted into an unindexed table with synchronous=OFF, in the same transactions. Budget:
 * at least 50,000 transitions per second.
 *
 * `alarms: journal append, fsynced`: an operator's action, one transition and its state with
 * synchronous=FULL (fsynced before the API answers), against the same single row inserted with
 * synchronous=OFF. No budget: it tells how many acknowledgements per second the disk allows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { AlarmJournal } from '../src/alarms/alarm-journal.js';
import { alarmDefinitionSchema } from '../src/alarms/alarm-schema.js';
import { AlarmService } from '../src/alarms/alarm-service.js';
import type { AlarmSnapshot, AlarmTransition } from '../src/alarms/alarm-state.js';
import { systemClock } from '../src/clock.js';
import type { Sample } from '../src/tags/sample.js';
import { TagStore, type TagUpdate, type UpdateListener } from '../src/tags/tag-store.js';
import { type BenchmarkCase, type BenchmarkSide, type MeasuredCase, runCase } from './harness.js';

const alarmCount = 100_000;
const batchSize = 100;
const journalBatch = 1000;
const limit = 100;
const silent = pino({ level: 'silent' });
const evaluationBudget = {
  minRatePerSecond: 200_000,
  description: 'issue 22: 100,000 changes/s under 50 % of one core',
};
const journalBudget = {
  minRatePerSecond: 50_000,
  description: 'issue 22: at least 50,000 transitions per second (SQLite)',
};

const sources = Array.from(
  { length: alarmCount },
  (_, i) => `Plant/Unit${Math.floor(i / 1000)}/Tag${i % 1000}`,
);

/** Two rounds of updates for every source, values 50 and 51, as batches. */
function buildRounds(): TagUpdate[][][] {
  const utcTimestamp = new Date(Date.UTC(2026, 0, 1)).toISOString();
  const samples = [50, 51].map((value) =>
    sources.map((fullTagId): Sample => ({ fullTagId, utcTimestamp, quality: 'Good', value })),
  );
  return [0, 1].map((round) => {
    const batches: TagUpdate[][] = [];
    for (let start = 0; start < alarmCount; start += batchSize) {
      const batch: TagUpdate[] = [];
      for (let i = start; i < start + batchSize; i++) {
        batch.push({
          sample: samples[round]?.[i] as Sample,
          previous: samples[1 - round]?.[i] as Sample,
          changed: true,
        });
      }
      batches.push(batch);
    }
    return batches;
  });
}

const batchesPerRound = alarmCount / batchSize;

/** Hands out the batches of alternating rounds, one per call, endlessly. */
class BatchFeed {
  private round = 0;
  private batch = 0;

  constructor(private readonly rounds: TagUpdate[][][]) {}

  next(): readonly TagUpdate[] {
    const batch = this.rounds[this.round]?.[this.batch] as TagUpdate[];
    if (++this.batch === batchesPerRound) {
      this.batch = 0;
      this.round ^= 1;
    }
    return batch;
  }
}

function bareLoop(rounds: TagUpdate[][][]): BenchmarkSide & { exceeded: () => number } {
  const limits = new Map(sources.map((source) => [source, limit]));
  const feed = new BatchFeed(rounds);
  let exceeded = 0;
  return {
    name: `Map lookup + value > limit loop (${alarmCount} tags, batches of ${batchSize})`,
    run(iterations) {
      for (let n = 0; n < iterations; n++) {
        const batch = feed.next();
        for (let i = 0; i < batch.length; i++) {
          const sample = (batch[i] as TagUpdate).sample;
          const bound = limits.get(sample.fullTagId);
          if (bound !== undefined && (sample.value as number) > bound) exceeded++;
        }
      }
    },
    exceeded: () => exceeded,
  };
}

async function evaluation(): Promise<BenchmarkCase> {
  const rounds = buildRounds();
  const store = new TagStore();
  store.write(rounds[1]?.flat().map((update) => update.sample) ?? []);
  // The listener the service hands the store: called directly, so only evaluation is timed.
  let listener: UpdateListener | undefined;
  const subscribe = store.subscribe.bind(store);
  store.subscribe = (given) => {
    listener ??= given;
    return subscribe(given);
  };
  const folder = mkdtempSync(join(tmpdir(), 'tagd-bench-alarms-'));
  const journal = new AlarmJournal({ file: join(folder, 'alarms.db') });
  const service = new AlarmService({
    store,
    clock: systemClock,
    logger: silent,
    journal,
    definitions: sources.map((source, i) =>
      alarmDefinitionSchema.parse({ name: `A${i}`, source, condition: 'High', limit }),
    ),
  });
  await service.start();
  const evaluate = listener as UpdateListener;
  const feed = new BatchFeed(rounds);
  const baseline = bareLoop(rounds);
  return {
    name: 'alarms: evaluation',
    unit: 'changes',
    unitsPerIteration: batchSize,
    baseline,
    subject: {
      name: `AlarmService store listener (${alarmCount} High alarms, batches of ${batchSize})`,
      run(iterations) {
        for (let n = 0; n < iterations; n++) evaluate(feed.next());
      },
    },
    budget: evaluationBudget,
    verify() {
      const alarms = service.list();
      const checked = alarms.filter((alarm) => alarm.quality === 'Good').length;
      void service.stop();
      rmSync(folder, { recursive: true, force: true });
      if (alarms.length !== alarmCount || checked !== alarmCount) {
        throw new Error(`${checked} of ${alarms.length} alarms were evaluated on Good data`);
      }
      if (alarms.some((alarm) => alarm.state !== 'Normal') || baseline.exceeded() !== 0) {
        throw new Error('a value crossed its limit: the case measures journaling too');
      }
    },
  };
}

function transitionsBatch(): { transitions: AlarmTransition[]; states: [string, AlarmSnapshot][] } {
  const transitions: AlarmTransition[] = [];
  const states: [string, AlarmSnapshot][] = [];
  for (let i = 0; i < journalBatch; i++) {
    transitions.push({
      time: Date.UTC(2026, 0, 1) + i,
      name: `A${i}`,
      event: 'Activated',
      from: 'Normal',
      to: 'Unacknowledged',
      active: true,
      acknowledged: false,
      value: 101.5,
      limit: 100,
      priority: 'High',
      severity: 750,
      area: 'Hall2/Ovens',
      message: `A${i}: 101.5 °C is above the high limit 100 °C.`,
    });
    states.push([
      `A${i}`,
      {
        conditionActive: true,
        active: true,
        acknowledged: false,
        suppressed: false,
        outOfService: false,
        value: 101.5,
        limit: 100,
        activeSince: Date.UTC(2026, 0, 1) + i,
        changedAt: Date.UTC(2026, 0, 1) + i,
      },
    ]);
  }
  return { transitions, states };
}

function journalAppend(batch: number, fsync: boolean): BenchmarkCase {
  const folder = mkdtempSync(join(tmpdir(), 'tagd-bench-journal-'));
  const journal = new AlarmJournal({
    file: join(folder, 'journal.db'),
    checkpoints: { clock: systemClock, logger: silent },
  });
  journal.open();
  const all = transitionsBatch();
  const transitions = all.transitions.slice(0, batch);
  const states = all.states.slice(0, batch);
  const plain = new Database(join(folder, 'plain.db'));
  plain.pragma('journal_mode = WAL');
  plain.pragma('synchronous = OFF');
  plain.exec(
    'CREATE TABLE t (t INTEGER, name TEXT, event TEXT, f TEXT, o TEXT, a INTEGER, k INTEGER, ' +
      'v TEXT, l TEXT, p TEXT, s INTEGER, area TEXT, m TEXT)',
  );
  const insert = plain.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const insertAll = plain.transaction((rows: readonly AlarmTransition[]) => {
    for (const x of rows) {
      insert.run(
        x.time,
        x.name,
        x.event,
        x.from,
        x.to,
        x.active ? 1 : 0,
        x.acknowledged ? 1 : 0,
        JSON.stringify(x.value),
        JSON.stringify(x.limit),
        x.priority,
        x.severity,
        x.area,
        x.message,
      );
    }
  });
  let appended = 0;
  return {
    name: fsync ? 'alarms: journal append, fsynced' : 'alarms: journal append',
    unit: 'transitions',
    unitsPerIteration: batch,
    baseline: {
      name: `INSERT of the same rows, no index, synchronous=OFF (batches of ${batch})`,
      run(iterations) {
        for (let n = 0; n < iterations; n++) insertAll(transitions);
      },
    },
    subject: {
      name: `AlarmJournal.append, synchronous=${fsync ? 'FULL' : 'NORMAL + checkpoints'}, with states (batches of ${batch})`,
      run(iterations) {
        for (let n = 0; n < iterations; n++) {
          appended += journal.append(transitions, states, { fsync }).length;
        }
      },
    },
    ...(fsync ? {} : { budget: journalBudget }),
    verify() {
      const newest = journal.query({ fromMs: 0, toMs: Number.MAX_SAFE_INTEGER, limit: 1 });
      journal.close();
      plain.close();
      rmSync(folder, { recursive: true, force: true });
      if (appended === 0 || newest.length !== 1) throw new Error('the journal kept nothing');
    },
  };
}

/** Set up only when selected: 100,000 alarms take a few seconds and some memory to build. */
function deferred(
  info: Pick<BenchmarkCase, 'name' | 'unit' | 'unitsPerIteration'> & {
    budget?: BenchmarkCase['budget'];
  },
  build: () => BenchmarkCase | Promise<BenchmarkCase>,
): MeasuredCase {
  return { kind: 'measured', ...info, measure: async () => runCase(await build()) };
}

export const cases: MeasuredCase[] = [
  deferred(
    {
      name: 'alarms: evaluation',
      unit: 'changes',
      unitsPerIteration: batchSize,
      budget: evaluationBudget,
    },
    evaluation,
  ),
  deferred(
    {
      name: 'alarms: journal append',
      unit: 'transitions',
      unitsPerIteration: journalBatch,
      budget: journalBudget,
    },
    () => journalAppend(journalBatch, false),
  ),
  deferred(
    { name: 'alarms: journal append, fsynced', unit: 'transitions', unitsPerIteration: 1 },
    () => journalAppend(1, true),
  ),
];
