/**
 * Helpers of the DBC tests: the shared fixture folder, loading a fixture, and a compact view of a
 * decoded frame that a test can compare with hand-derived expectations in one `deepEqual`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { compileMessageDecoder } from '../../src/dbc/decode.js';
import type { DbcDatabase, DbcMessage } from '../../src/dbc/model.js';
import { parseDbc } from '../../src/dbc/parse-dbc.js';

/**
 * The DBC fixtures: `test/fixtures/dbc/`, copied from the cantools project's test data with its
 * license (see the README there), so the tests pass from a plain clone.
 */
export const dbcFixtures = new URL('../fixtures/dbc/', import.meta.url);

/** File names of every `.dbc` fixture, sorted. */
export function dbcFixtureNames(): string[] {
  return readdirSync(dbcFixtures)
    .filter((name) => name.endsWith('.dbc'))
    .sort();
}

/** The bytes of a fixture file. */
export function readDbcFixture(name: string): Buffer {
  return readFileSync(new URL(name, dbcFixtures));
}

/** Parses a fixture file. */
export function loadDbcFixture(name: string): DbcDatabase {
  return parseDbc(readDbcFixture(name), name);
}

/** A message by name; throws when the database lacks it. */
export function messageNamed(database: DbcDatabase, name: string): DbcMessage {
  const message = database.messages.find((candidate) => candidate.name === name);
  if (message === undefined) throw new Error(`no message ${name} in ${database.file}`);
  return message;
}

/** What a decoded signal looks like to a test: its numbers, or why it has none. */
export type DecodedView =
  | { raw: number | bigint; value: number; valueText?: string; exactValue?: string }
  | 'inactive'
  | 'truncated';

/**
 * Decodes one frame of a message and returns every signal by name: `{ raw, value, valueText?,
 * exactValue? }` when decoded, otherwise its status.
 */
export function decodeView(
  message: DbcMessage,
  bytes: readonly number[],
  length?: number,
): Record<string, DecodedView> {
  const results = compileMessageDecoder(message).decode(Uint8Array.from(bytes), length);
  const view: Record<string, DecodedView> = {};
  for (const result of results) {
    if (result.status !== 'decoded') {
      view[result.signal.name] = result.status;
      continue;
    }
    view[result.signal.name] = {
      raw: result.raw,
      value: result.value,
      ...(result.valueText !== undefined ? { valueText: result.valueText } : {}),
      ...(result.exactValue !== undefined ? { exactValue: result.exactValue } : {}),
    };
  }
  return view;
}
