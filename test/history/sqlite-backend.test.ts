import { join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import { createSqliteBackend } from '../../src/history/sqlite-backend.js';
import { tempDir } from '../helpers/temp-dir.js';
import { backendContract } from './backend-contract.js';

const logger = pino({ level: 'silent' });

backendContract(test, {
  name: 'sqlite',
  create: async (t) => createSqliteBackend({ file: join(await tempDir(t), 'history.db'), logger }),
});

const t0 = Date.UTC(2026, 0, 1);

test('sqlite: samples, positions and tags survive a close and reopen of the file', async (t) => {
  const file = join(await tempDir(t), 'history.db');
  const first = createSqliteBackend({ file, logger });
  await first.start();
  await first.append([
    { fullTagId: 'P/a', epochMs: t0, quality: 'Good', value: 1 },
    { fullTagId: 'P/b', epochMs: t0, quality: 'Good', value: 'x' },
  ]);
  const seq = await first.lastSeq();
  await first.stop();
  const second = createSqliteBackend({ file, logger, synchronous: 'full' });
  await second.start();
  t.teardown(() => second.stop());
  t.is(await second.lastSeq(), seq);
  t.deepEqual(await second.tagIds('P/*'), ['P/a', 'P/b']);
  await second.append([{ fullTagId: 'P/a', epochMs: t0 + 1, quality: 'Good', value: 2 }]);
  const read = await second.raw({ tagIds: ['P/a'], startMs: t0, stopMs: t0 + 1, limit: 10 });
  t.deepEqual(
    read.map((s) => s.value),
    [1, 2],
  );
});

test('sqlite: positions are never reused, even after retention deleted every sample and a reopen', async (t) => {
  const file = join(await tempDir(t), 'h.db');
  const first = createSqliteBackend({ file, logger });
  await first.start();
  await first.append([
    { fullTagId: 'R/a', epochMs: t0 + 9, quality: 'Good', value: 0 },
    { fullTagId: 'R/a', epochMs: t0, quality: 'Good', value: 1 },
  ]);
  const before = await first.lastSeq();
  t.is(await first.deleteBefore(t0 + 1), 1, 'the newest position held the oldest sample');
  t.is(await first.deleteBefore(t0 + 10), 1);
  t.deepEqual(await first.tagIds('**'), []);
  t.is(await first.lastSeq(), before);
  await first.stop();
  const backend = createSqliteBackend({ file, logger });
  await backend.start();
  t.teardown(() => backend.stop());
  t.is(await backend.lastSeq(), before);
  await backend.append([
    { fullTagId: 'R/a', epochMs: t0 + 5, quality: 'Good', value: 2 },
    { fullTagId: 'R/a', epochMs: t0 + 6, quality: 'Good', value: 3 },
  ]);
  const read = await backend.raw({ tagIds: ['R/a'], startMs: 0, stopMs: t0 * 2, limit: 10 });
  t.deepEqual(
    read.map((s) => BigInt(s.seq) - BigInt(before)),
    [1n, 2n],
  );
});

test('sqlite: a refused append stores nothing, not even the tag it introduced', async (t) => {
  const backend = createSqliteBackend({ file: join(await tempDir(t), 'h.db'), logger });
  await backend.start();
  t.teardown(() => backend.stop());
  const bad = { fullTagId: 'X/bad', epochMs: t0, quality: 'Good', value: {} } as never;
  await t.throwsAsync(() =>
    backend.append([{ fullTagId: 'X/new', epochMs: t0, quality: 'Good', value: 1 }, bad]),
  );
  t.deepEqual(await backend.tagIds('**'), []);
  t.is(await backend.lastSeq(), '0');
  await backend.append([{ fullTagId: 'X/new', epochMs: t0, quality: 'Good', value: 1 }]);
  t.deepEqual(await backend.tagIds('**'), ['X/new']);
});

test('sqlite: the file is in WAL mode (readers never wait for the writer)', async (t) => {
  const file = join(await tempDir(t), 'h.db');
  const backend = createSqliteBackend({ file, logger, synchronous: 'off' });
  await backend.start();
  await backend.stop();
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file, { readonly: true });
  t.is(db.pragma('journal_mode', { simple: true }), 'wal');
  db.close();
});
