/**
 * Driver messages as a report shows them: a file named by its name alone. A driver's message
 * quotes the path it could not use (`Cannot read the DBC file /etc/tagd/can/bus.dbc.`), which
 * is configuration: where the profile keeps its files, a user's home, the state directory.
 * `DriverView` callers (Operators) see the report, not the configuration, so the folders are
 * cut; the name is enough to say which file, and the log keeps the whole path.
 */

// An absolute path's folders: `/` not glued to a word, `:` or `/` (so not a URL's `//host` or
// `host:port/path`), then segments each ending in `/`, up to a last segment that is kept.
const folders = /(?<![\p{L}\p{N}_.:/~-])\/(?:[^\s'"`/]+\/)+(?=[^\s'"`/])/gu;

/**
 * Returns `text` with every absolute path cut to its last segment:
 * `Cannot read /etc/tagd/bus.dbc: …` becomes `Cannot read bus.dbc: …`, `/dev/ttyUSB0` becomes
 * `ttyUSB0`. URLs (`opc.tcp://plc:4840/UA/Server`) are left whole.
 */
export function withoutFolders(text: string): string {
  return text.replace(folders, '');
}
