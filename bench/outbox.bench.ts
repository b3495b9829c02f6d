/**
 * The durable outbox (issue 13 "Budgets"): append and drain at least 20,000 messages/s.
 *
 * 1. `outbox: append` — batches of 100 json-per-tag sized messages (~120 bytes) appended in one
 *    transaction each, as a publisher tick hands them over. Baseline: the naive way, one INSERT
 *    per message in autocommit mode, in a table of the same shape and the same pragmas.
 * 2. `outbox: drain` — the oldest 1,000 messages read and removed by id in one transaction, as
 *    the MQTT publisher does once they are acknowledged. Both sides refill their table with
 *    20,000 rows in one transaction when it runs low, inside the timed work (so the drain
 *    figures are conservative). Baseline: the same rows read, then one autocommit DELETE each.
 *
 * Files live in a temporary folder removed at exit.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Outbox, type OutboxEntry } from '../src/outbox/outbox.js';
import type { BenchmarkCase } from './harness.js';

const folder = mkdtempSync(join(tmpdir(), 'tagd-bench-outbox-'));
process.on('exit', () => rmSync(folder, { recursive: true, force: true }));

/** Design budget: messages per second appended, and drained. */
const minRate = 20_000;
const appendBatch = 100;
const drainChunk = 1_000;

let serial = 0;
function batch(size: number): OutboxEntry[] {
  return Array.from({ length: size }, () => {
    serial++;
    return {
      topic: `tagd/gw1/Line1/plc-${serial % 10}/HR${40001 + (serial % 100)}`,
      payload: JSON.stringify({
        fullTagId: `Line1/plc-${serial % 10}/HR${40001 + (serial % 100)}`,
        utcTimestamp: '2026-01-01T00:00:00.000Z',
        quality: 'Good',
        value: serial * 0.5,
      }),
    };
  });
}

/** A bare table like the outbox's, opened with the same pragmas. */
function bareTable(file: string): Database.Database {
  const db = new Database(join(folder, file));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(
    'CREATE TABLE messages (id INTEGER PRIMARY KEY, topic TEXT NOT NULL, payload BLOB NOT NULL, size INTEGER NOT NULL, t INTEGER NOT NULL)',
  );
  return db;
}

const limitBytes = 4096 * 1024 * 1024;

function appendCase(): BenchmarkCase {
  const outbox = new Outbox({ file: join(folder, 'append.db'), limitBytes });
  outbox.open();
  const bare = bareTable('append-bare.db');
  const insert = bare.prepare('INSERT INTO messages (topic, payload, size, t) VALUES (?, ?, ?, ?)');
  const prepared = batch(appendBatch);
  let appended = 0;
  return {
    name: 'outbox: append',
    unit: 'messages',
    unitsPerIteration: appendBatch,
    baseline: {
      name: 'one autocommit INSERT per message',
      run(iterations) {
        for (let i = 0; i < iterations; i++) {
          for (const entry of prepared) {
            const payload = Buffer.from(entry.payload as string);
            insert.run(entry.topic, payload, payload.length, Date.now());
          }
        }
      },
    },
    subject: {
      name: `Outbox.append of ${appendBatch} (one transaction)`,
      run(iterations) {
        for (let i = 0; i < iterations; i++) {
          outbox.append(prepared);
          appended += appendBatch;
        }
      },
    },
    budget: { minRatePerSecond: minRate, description: '≥ 20,000 messages/s (issue 13)' },
    verify() {
      if (outbox.depth !== appended) {
        throw new Error(`the outbox holds ${outbox.depth} messages, ${appended} were appended`);
      }
    },
  };
}

function drainCase(): BenchmarkCase {
  const outbox = new Outbox({ file: join(folder, 'drain.db'), limitBytes });
  outbox.open();
  const bare = bareTable('drain-bare.db');
  const insert = bare.prepare('INSERT INTO messages (topic, payload, size, t) VALUES (?, ?, ?, ?)');
  const read = bare.prepare('SELECT id, topic, payload FROM messages ORDER BY id LIMIT ?');
  const remove = bare.prepare('DELETE FROM messages WHERE id = ?');
  const refillBare = () =>
    bare.transaction(() => {
      for (const entry of batch(drainChunk * 20)) {
        const payload = Buffer.from(entry.payload as string);
        insert.run(entry.topic, payload, payload.length, 0);
      }
    })();
  let bareDepth = 0;
  return {
    name: 'outbox: drain',
    unit: 'messages',
    unitsPerIteration: drainChunk,
    baseline: {
      name: 'read, then one autocommit DELETE per message',
      run(iterations) {
        for (let i = 0; i < iterations; i++) {
          if (bareDepth < drainChunk) {
            refillBare();
            bareDepth += drainChunk * 20;
          }
          const rows = read.all(drainChunk) as { id: number }[];
          for (const row of rows) remove.run(row.id);
          bareDepth -= rows.length;
        }
      },
    },
    subject: {
      name: `Outbox.peek(${drainChunk}) + remove (one transaction)`,
      run(iterations) {
        for (let i = 0; i < iterations; i++) {
          if (outbox.depth < drainChunk) outbox.append(batch(drainChunk * 20));
          const chunk = outbox.peek(drainChunk);
          outbox.remove(chunk.map((message) => message.id));
        }
      },
    },
    budget: { minRatePerSecond: minRate, description: '≥ 20,000 messages/s (issue 13)' },
  };
}

/** The cases, for bench/run.ts. */
export const cases: BenchmarkCase[] = [appendCase(), drainCase()];
