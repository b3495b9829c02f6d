/**
 * The tokenizer of the DBC parser: splits decoded DBC text into identifiers, numbers, strings and
 * punctuation, each with its 1-based line and column. Never throws except for an unterminated
 * string, which it reports as a {@link DbcParseError}; any character it does not know becomes a
 * one-character `punct` token so that the parser can report it where it matters, and skip it
 * inside sections it ignores.
 */
import { DbcParseError } from './dbc-error.js';

/** Kind of a token. */
export type DbcTokenKind = 'ident' | 'number' | 'string' | 'punct' | 'eof';

/** One token. */
export interface DbcToken {
  readonly kind: DbcTokenKind;
  /**
   * The token's text: the identifier, the number as written, the punctuation character, or the
   * string's content without quotes (`\"` unescaped, CRLF turned into LF). '' at the end.
   */
  readonly text: string;
  /** 1-based line of the token's first character. */
  readonly line: number;
  /** 1-based column of the token's first character. */
  readonly column: number;
  /** True when no other token precedes this one on its line. */
  readonly startsLine: boolean;
}

const CR = 13;
const LF = 10;
const QUOTE = 34;
const BACKSLASH = 92;
const SLASH = 47;
const DOT = 46;

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isIdentStart(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

function isIdentPart(code: number): boolean {
  return isIdentStart(code) || isDigit(code);
}

function isSpace(code: number): boolean {
  // Space, tab, vertical tab, form feed, CR, and the no-break space some editors leave behind.
  return code === 32 || code === 9 || code === 11 || code === 12 || code === CR || code === 160;
}

/**
 * Splits DBC text into tokens. The last token is always `eof`.
 * @param file the file name for errors.
 * @throws DbcParseError for a string that is not closed before the end of the file.
 */
export function tokenizeDbc(text: string, file: string): DbcToken[] {
  const tokens: DbcToken[] = [];
  const length = text.length;
  let pos = 0;
  let line = 1;
  let lineStart = 0;
  let tokenOnLine = false;

  const push = (kind: DbcTokenKind, value: string, startLine: number, column: number) => {
    tokens.push({ kind, text: value, line: startLine, column, startsLine: !tokenOnLine });
    tokenOnLine = true;
  };

  while (pos < length) {
    const code = text.charCodeAt(pos);
    if (code === LF) {
      pos++;
      line++;
      lineStart = pos;
      tokenOnLine = false;
      continue;
    }
    if (isSpace(code)) {
      pos++;
      continue;
    }
    const column = pos - lineStart + 1;
    if (code === SLASH && text.charCodeAt(pos + 1) === SLASH) {
      // A `//` comment runs to the end of the line (socialledge.dbc has them).
      while (pos < length && text.charCodeAt(pos) !== LF) pos++;
      continue;
    }
    if (isIdentStart(code)) {
      const start = pos;
      while (pos < length && isIdentPart(text.charCodeAt(pos))) pos++;
      push('ident', text.slice(start, pos), line, column);
      continue;
    }
    if (isDigit(code) || (code === DOT && isDigit(text.charCodeAt(pos + 1)))) {
      const start = pos;
      while (pos < length && isDigit(text.charCodeAt(pos))) pos++;
      if (text.charCodeAt(pos) === DOT) {
        pos++;
        while (pos < length && isDigit(text.charCodeAt(pos))) pos++;
      }
      const e = text.charCodeAt(pos);
      if (e === 69 || e === 101) {
        // An exponent only when digits follow (`1E+018`); otherwise `E` starts an identifier.
        let probe = pos + 1;
        const sign = text.charCodeAt(probe);
        if (sign === 43 || sign === 45) probe++;
        if (isDigit(text.charCodeAt(probe))) {
          pos = probe;
          while (pos < length && isDigit(text.charCodeAt(pos))) pos++;
        }
      }
      push('number', text.slice(start, pos), line, column);
      continue;
    }
    if (code === QUOTE) {
      const startLine = line;
      pos++;
      let value = '';
      let chunkStart = pos;
      for (;;) {
        if (pos >= length) {
          throw new DbcParseError({
            file,
            line: startLine,
            column,
            expected: "a closing '\"' for the string that starts here",
          });
        }
        const c = text.charCodeAt(pos);
        if (c === QUOTE) break;
        if (c === BACKSLASH && text.charCodeAt(pos + 1) === QUOTE) {
          value += `${text.slice(chunkStart, pos)}"`;
          pos += 2;
          chunkStart = pos;
          continue;
        }
        if (c === CR && text.charCodeAt(pos + 1) === LF) {
          // Keep multi-line comments with LF line ends whatever the file uses.
          value += text.slice(chunkStart, pos);
          pos++;
          chunkStart = pos;
          continue;
        }
        if (c === LF) {
          line++;
          lineStart = pos + 1;
        }
        pos++;
      }
      value += text.slice(chunkStart, pos);
      pos++;
      push('string', value, startLine, column);
      continue;
    }
    push('punct', text[pos] as string, line, column);
    pos++;
  }
  tokens.push({
    kind: 'eof',
    text: '',
    line,
    column: pos - lineStart + 1,
    startsLine: !tokenOnLine,
  });
  return tokens;
}
