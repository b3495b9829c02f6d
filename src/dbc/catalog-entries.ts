/**
 * Turns a parsed DBC into what the signal catalog (`src/tags/dbc-signal-catalog.ts`) registers:
 * message names with their signals and units.
 */
import type { DbcDatabase } from './model.js';

/** One signal of a DBC message. */
export interface DbcSignalDefinition {
  /** Signal name as in the DBC (`SG_ <name>`); one tag path segment. */
  name: string;
  /** Engineering unit from the DBC, e.g. `km/h`, `degC`. Empty or absent: no unit. */
  unit?: string;
}

/** One message of a DBC. */
export interface DbcMessageDefinition {
  /** Message name as in the DBC (`BO_ <id> <name>:`); one tag path segment. */
  name: string;
  signals: readonly DbcSignalDefinition[];
}

/**
 * The catalog entries of a database: every message in file order, each with every signal in
 * file order and its unit (left out when the DBC gives none).
 */
export function dbcCatalogEntries(database: DbcDatabase): DbcMessageDefinition[] {
  return database.messages.map((message) => ({
    name: message.name,
    signals: message.signals.map((signal) =>
      signal.unit === '' ? { name: signal.name } : { name: signal.name, unit: signal.unit },
    ),
  }));
}
