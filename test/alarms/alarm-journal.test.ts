import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import { AlarmJournal } from '../../src/alarms/alarm-journal.js';
import type { AlarmTransition } from '../../src/alarms/alarm-state.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { tempDir } from '../helpers/temp-dir.js';

function transition(overrides: Partial<AlarmTransition>): AlarmTransition {
  return {
    time: 1000,
    name: 'A',
    event: 'Activated',
    from: 'Normal',
    to: 'Unacknowledged',
    active: true,
    acknowledged: false,
    priority: 'Medium',
    severity: 500,
    message: 'A is active.',
    ...overrides,
  };
}

async function open(t: import('ava').ExecutionContext, deleteChunkRows?: number) {
  const dir = await tempDir(t);
  const file = join(dir, 'sub', 'alarms.db');
  const journal = new AlarmJournal({ file, ...(deleteChunkRows ? { deleteChunkRows } : {}) });
  journal.open();
  t.teardown(() => journal.close());
  return { journal, file };
}

const all = { fromMs: 0, toMs: Number.MAX_SAFE_INTEGER, limit: 1000 };

test('transitions come back as written: values keep their type, absent fields stay absent', async (t) => {
  const { journal, file } = await open(t);
  const written = [
    transition({ value: 95.5, limit: 90, area: 'Hall2/Ovens' }),
    transition({
      time: 2000,
      event: 'Acknowledged',
      value: true,
      limit: true,
      account: 'olga',
      comment: 'ok',
    }),
    transition({ time: 3000, event: 'Cleared', value: 'Bad' }),
    transition({ time: 4000, event: 'ReAlarm' }),
  ];
  journal.append(written, [
    [
      'A',
      {
        conditionActive: true,
        active: true,
        acknowledged: false,
        suppressed: false,
        outOfService: false,
      },
    ],
  ]);
  const read = journal.query({ ...all, order: 'asc' });
  t.deepEqual(
    read.map(({ seq: _seq, ...rest }) => rest),
    written,
  );
  t.true(read.every((entry, index) => index === 0 || entry.seq > (read[index - 1]?.seq ?? 0)));
  t.like(journal.states().get('A'), { active: true, acknowledged: false });
  t.is((await stat(file)).mode & 0o777, 0o600, 'plant data: the owner only');
});

test('queries filter by time range, name, area (and below), priority, state and event', async (t) => {
  const { journal } = await open(t);
  journal.append([
    transition({ time: 1000, name: 'A', area: 'Hall2/Ovens', priority: 'High' }),
    transition({ time: 2000, name: 'B', area: 'Hall2', priority: 'Low' }),
    transition({
      time: 3000,
      name: 'C',
      area: 'Hall20',
      priority: 'Urgent',
      to: 'Acknowledged',
      event: 'Acknowledged',
    }),
    transition({
      time: 4000,
      name: 'A',
      area: 'Hall2/Ovens',
      priority: 'High',
      to: 'Normal',
      event: 'Cleared',
    }),
  ]);
  const names = (query: Partial<Parameters<AlarmJournal['query']>[0]>) =>
    journal.query({ ...all, ...query }).map((entry) => `${entry.name}@${entry.time}`);
  t.deepEqual(names({}), ['A@4000', 'C@3000', 'B@2000', 'A@1000'], 'newest first');
  t.deepEqual(names({ order: 'asc', limit: 2 }), ['A@1000', 'B@2000']);
  t.deepEqual(names({ fromMs: 2000, toMs: 3000 }), ['C@3000', 'B@2000'], 'inclusive bounds');
  t.deepEqual(names({ names: ['A'] }), ['A@4000', 'A@1000']);
  t.deepEqual(
    names({ areas: ['Hall2'] }),
    ['A@4000', 'B@2000', 'A@1000'],
    'Hall20 is not below Hall2',
  );
  t.deepEqual(names({ areas: ['Hall2/Ovens', 'Hall20'] }), ['A@4000', 'C@3000', 'A@1000']);
  t.deepEqual(names({ priorities: ['Urgent', 'Low'] }), ['C@3000', 'B@2000']);
  t.deepEqual(names({ states: ['Unacknowledged'] }), ['B@2000', 'A@1000']);
  t.deepEqual(names({ events: ['Cleared', 'Acknowledged'] }), ['A@4000', 'C@3000']);
  const first = journal.query({ ...all, limit: 2 });
  t.deepEqual(
    names({ afterSeq: first.at(-1)?.seq as number }),
    ['B@2000', 'A@1000'],
    'the next page',
  );
  t.deepEqual(names({ areas: ['Hall%'] }), [], 'no LIKE wildcards');
  // count() applies the same filters without reading a row (the statistics' 413 comes first).
  const counted = (query: Partial<Parameters<AlarmJournal['query']>[0]>) =>
    journal.count({ ...all, ...query });
  for (const query of [
    {},
    { fromMs: 2000, toMs: 3000 },
    { names: ['A'] },
    { areas: ['Hall2'] },
    { priorities: ['Urgent' as const, 'Low' as const] },
    { events: ['Cleared' as const, 'Acknowledged' as const] },
  ]) {
    t.is(counted(query), names(query).length, JSON.stringify(query));
  }
});

test('retention deletes in slices the entries older than the bound; states stay', async (t) => {
  const { journal } = await open(t, 3);
  journal.append(
    Array.from({ length: 10 }, (_, index) => transition({ time: index * 1000 })),
    [
      [
        'A',
        {
          conditionActive: false,
          active: false,
          acknowledged: true,
          suppressed: false,
          outOfService: false,
        },
      ],
    ],
  );
  t.is(await journal.deleteBefore(7000), 7);
  t.deepEqual(
    journal.query({ ...all, order: 'asc' }).map((entry) => entry.time),
    [7000, 8000, 9000],
  );
  t.true(journal.states().has('A'));
  journal.removeStates(['A', 'unknown']);
  t.false(journal.states().has('A'));
});

test('a closed journal refuses appends; open is idempotent and keeps what was written', async (t) => {
  const { journal } = await open(t);
  journal.append([transition({})]);
  journal.open();
  journal.close();
  t.throws(() => journal.append([transition({})]), { message: /not open/ });
  journal.open();
  t.is(journal.query(all).length, 1);
});

test('automatic appends are fsynced by a checkpoint at most intervalMs later; close stops it', async (t) => {
  const dir = await tempDir(t);
  const clock = new ManualClock();
  const journal = new AlarmJournal({
    file: join(dir, 'alarms.db'),
    checkpoints: { clock, logger: pino({ level: 'silent' }), intervalMs: 1000 },
  });
  journal.open();
  journal.append([transition({})]);
  t.is(clock.pendingTimers(), 0, 'the first commit is checkpointed at once');
  clock.advance(10);
  journal.append([transition({ time: 2000 })]);
  t.is(clock.pendingTimers(), 1, 'a later one within the interval gets a trailing checkpoint');
  clock.advance(990);
  t.is(clock.pendingTimers(), 0);
  journal.append([transition({ time: 3000 })], [], { fsync: true });
  t.is(clock.pendingTimers(), 0, 'an fsynced append needs none');
  journal.append([transition({ time: 4000 })]);
  journal.close();
  t.is(clock.pendingTimers(), 0);
  journal.open();
  t.is(journal.query(all).length, 4);
  journal.close();
});
