import test from 'ava';
import type Database from 'better-sqlite3';
import { SqliteCheckpoints } from '../../src/history/sqlite-checkpoints.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** A stand-in connection whose checkpoint statement fails while `failing` is set. */
function fakeDb() {
  const state = { failing: false, checkpoints: 0, pragmas: [] as string[] };
  const db = {
    pragma: (source: string) => state.pragmas.push(source),
    prepare: () => ({
      get: () => {
        state.checkpoints++;
        if (state.failing) throw new Error('disk I/O error');
        return { busy: 0, log: 0, checkpointed: 0 };
      },
    }),
  };
  return { db: db as unknown as Database.Database, state };
}

test('a failed checkpoint is logged once, not thrown (the append it follows is committed)', (t) => {
  const { db, state } = fakeDb();
  const logs = captureLogs();
  const clock = new ManualClock();
  const checkpoints = new SqliteCheckpoints(db, { clock, logger: logs.logger });
  t.deepEqual(state.pragmas, ['wal_autocheckpoint = 16384']);
  state.failing = true;
  t.notThrows(() => checkpoints.afterCommit());
  clock.advance(1_000);
  t.notThrows(() => checkpoints.afterCommit());
  t.is(state.checkpoints, 2);
  t.deepEqual(
    logs.lines.map((line) => line.msg),
    ['sqlite history checkpoint failed; commits stay in the WAL until one succeeds'],
  );
  state.failing = false;
  clock.advance(1_000);
  checkpoints.afterCommit();
  t.is(state.checkpoints, 3);
  t.is(logs.lines.at(-1)?.msg, 'sqlite history checkpoints work again');
});

test('a failed trailing checkpoint is logged, not thrown, and stop cancels the timer', (t) => {
  const { db, state } = fakeDb();
  const logs = captureLogs();
  const clock = new ManualClock();
  const checkpoints = new SqliteCheckpoints(db, { clock, logger: logs.logger, intervalMs: 100 });
  checkpoints.afterCommit();
  checkpoints.afterCommit();
  state.failing = true;
  t.notThrows(() => clock.advance(100));
  t.is(state.checkpoints, 2);
  t.is(logs.lines.length, 1);
  checkpoints.afterCommit();
  t.is(clock.pendingTimers(), 1);
  checkpoints.stop();
  t.is(clock.pendingTimers(), 0);
  checkpoints.afterCommit();
  clock.advance(1_000);
  t.is(state.checkpoints, 2, 'none after stop');
});
