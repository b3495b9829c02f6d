import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { openOwnerOnlyDatabase } from '../../src/state/owner-only-database.js';
import { tempDir } from '../helpers/temp-dir.js';

test('creates the folder 0700 and the file 0600, in WAL mode, set up by the caller', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'outbox', 'mqtt-line1.db');
  const db = openOwnerOnlyDatabase(file, (created) => {
    created.exec('CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY)');
  });
  t.teardown(() => db.close());
  t.is((await stat(join(dir, 'outbox'))).mode & 0o777, 0o700);
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.is(db.pragma('journal_mode', { simple: true }), 'wal');
  t.is(db.pragma('synchronous', { simple: true }), 1); // NORMAL
  db.prepare('INSERT INTO messages (id) VALUES (1)').run();
  t.is((await stat(`${file}-wal`)).mode & 0o777, 0o600);
});

test('a set-up that throws: the database is closed and the error passed on', async (t) => {
  const dir = await tempDir(t);
  let opened: { open: boolean } | undefined;
  const error = t.throws(() =>
    openOwnerOnlyDatabase(join(dir, 'journal.db'), (db) => {
      opened = db;
      throw new Error('no such table');
    }),
  );
  t.is(error?.message, 'no such table');
  t.false(opened?.open);
});

test('a file that is no database: the error of SQLite', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'alarms.db');
  await writeFile(file, 'not a database, but long enough to be read as a header by SQLite');
  t.throws(
    () =>
      openOwnerOnlyDatabase(file, (db) => {
        db.exec('CREATE TABLE IF NOT EXISTS states (name TEXT)');
      }),
    { any: true, message: /not a database/ },
  );
});
