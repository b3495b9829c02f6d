/**
 * Turns a parsed DBC into what {@link DbcSignalCatalog.register} takes: message names with their
 * signals and units.
 */
import type { DbcDatabase } from './model.js';
import type { DbcMessageDefinition } from './signal-catalog.js';

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
