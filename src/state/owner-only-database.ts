/**
 * The SQLite files of the state directory that hold plant data (the outbox, the alarm journal):
 * readable by the owner only, in WAL mode.
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/**
 * Opens (or creates) `file` and its folder: the folder 0700, the file 0600 when new (SQLite
 * gives the -wal and -shm files the main file's mode, so they are the owner's too), journal
 * mode WAL with synchronous NORMAL. `setUp` creates the tables and reads what it needs; when it
 * throws, the database is closed and the error passed on.
 * @throws what creating the folder, the file or the database throws, or what `setUp` throws
 */
export function openOwnerOnlyDatabase(
  file: string,
  setUp: (db: Database.Database) => void,
): Database.Database {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    setUp(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
