/**
 * The error a DBC file is refused with: where (file, line, column) and what the parser expected
 * there, so that an operator can open the file at that spot and fix it.
 */
import { TagdError } from '../errors.js';

/** Longest piece of the offending text quoted in a message. */
const maxQuoted = 40;

/** Where and why a DBC file is refused. */
export interface DbcErrorLocation {
  /** File name as given to the parser. */
  file: string;
  /** 1-based line of the offending token. */
  line: number;
  /** 1-based column (in characters) of the offending token. */
  column: number;
  /**
   * What should have been there, e.g. `':' after the message name` or `a signal that fits the
   * 8-byte message 'Engine'`.
   */
  expected: string;
  /** The text found instead; absent at the end of the file. */
  found?: string;
  /** The message concerned, for errors about a message or its signals. */
  messageName?: string;
  /** The signal concerned, for errors about one signal (e.g. it does not fit its message). */
  signalName?: string;
  /**
   * A sentence that replaces the generic "expected …, found …" in the message, for errors that
   * are about meaning rather than syntax (a signal that does not fit its message).
   */
  problem?: string;
}

/**
 * A DBC file is malformed, or describes something impossible (a signal beyond the end of its
 * message, a message longer than 64 bytes). Code `dbc-invalid`, HTTP status 400.
 *
 * The message reads like `vehicle.dbc:12:5: expected ':' after the message name, found '8'`.
 */
export class DbcParseError extends TagdError {
  /** File name as given to the parser. */
  readonly file: string;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column, in characters. */
  readonly column: number;
  /** What the parser expected. */
  readonly expected: string;
  /** What it found instead; absent at the end of the file. */
  readonly found: string | undefined;
  /** The message concerned, when the error is about a message or one of its signals. */
  readonly messageName: string | undefined;
  /** The signal concerned, when the error is about one signal. */
  readonly signalName: string | undefined;

  constructor(location: DbcErrorLocation) {
    super('dbc-invalid', 400, describe(location));
    this.file = location.file;
    this.line = location.line;
    this.column = location.column;
    this.expected = location.expected;
    this.found = location.found;
    this.messageName = location.messageName;
    this.signalName = location.signalName;
  }
}

function describe(location: DbcErrorLocation): string {
  const where = `${location.file}:${location.line}:${location.column}`;
  if (location.problem !== undefined) return `${where}: ${location.problem}`;
  const found =
    location.found === undefined
      ? 'the end of the file'
      : `'${location.found.length > maxQuoted ? `${location.found.slice(0, maxQuoted)}…` : location.found}'`;
  return `${where}: expected ${location.expected}, found ${found}.`;
}
