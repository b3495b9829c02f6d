/**
 * The DBC parser: bytes of a `.dbc` file in, a {@link DbcDatabase} out. Pure and synchronous.
 *
 * Two phases. The first reads the statements in file order into drafts (messages with their
 * signals) and lists of references (CM_, BA_, VAL_, SIG_VALTYPE_, SG_MUL_VAL_, BO_TX_BU_), so
 * that a statement may refer to a message defined further down. The second applies the
 * references and checks what only the whole file can tell: that every signal fits its message,
 * that multiplexers exist and do not form cycles, that float signals have a float's length.
 */
import { type DbcErrorLocation, DbcParseError } from './dbc-error.js';
import { type DbcToken, tokenizeDbc } from './dbc-lexer.js';
import { decimalInteger } from './decimal-integer.js';
import type {
  AttributeObjectType,
  AttributeValue,
  ByteOrder,
  DbcAttributeDefinition,
  DbcDatabase,
  DbcMessage,
  DbcMultiplexCondition,
  DbcNode,
  DbcSignal,
  SignalValueType,
} from './model.js';
import { decodeWindows1252 } from './windows-1252.js';

/** 2^53 − 1: the largest integer every double below it can name; beyond it, BigInt label keys. */
const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Parses a DBC file. The bytes are decoded as Windows-1252 (the encoding CANdb++ writes).
 * Sections the database model does not use (NS_ contents, BS_, SIG_GROUP_, EV_, CAT_, …) are
 * skipped; so is any statement that starts with an unknown keyword (up to its `;`, or up to the
 * next line that starts with a DBC keyword). The pseudo-message `VECTOR__INDEPENDENT_SIG_MSG`,
 * where CANdb++ parks signals that belong to no message, is left out.
 * @param bytes the file's contents.
 * @param file the file name used in error messages and kept as {@link DbcDatabase.file}.
 * @throws DbcParseError (code `dbc-invalid`) naming file, line, column and what was expected,
 *   for a malformed file, a message over 64 bytes, an identifier out of range, duplicate message
 *   or signal names, a signal that does not fit its message (named in the error), or a file
 *   that defines no message (at its end). Never throws anything else, never hangs, whatever
 *   the input.
 */
export function parseDbc(bytes: Uint8Array, file: string): DbcDatabase {
  return parseDbcText(decodeWindows1252(bytes), file);
}

/**
 * Parses DBC text that is already decoded (tests, generated databases).
 * @throws DbcParseError as {@link parseDbc}.
 */
export function parseDbcText(text: string, file: string): DbcDatabase {
  const parser = new DbcParser(tokenizeDbc(text, file), file);
  parser.parseStatements();
  return parser.build();
}

/** Longest CAN FD payload, bytes. */
const maxMessageLength = 64;
/** Longest signal, bits. */
const maxSignalLength = 64;
/** Bit 31 of a DBC message id: the frame uses a 29-bit identifier. */
const extendedFlag = 0x8000_0000;
const maxExtendedId = 0x1fff_ffff;
const maxStandardId = 0x7ff;
/** Id and name CANdb++ gives the pseudo-message holding signals of no message. */
const independentSignalsName = 'VECTOR__INDEPENDENT_SIG_MSG';
/** A receiver or sender written as this means "none". */
const noNode = 'Vector__XXX';

/** Statements this parser reads. */
const handledKeywords = new Set([
  'VERSION',
  'NS_',
  'BS_',
  'BU_',
  'BO_',
  'SG_',
  'CM_',
  'BA_DEF_',
  'BA_DEF_DEF_',
  'BA_',
  'VAL_',
  'VAL_TABLE_',
  'SIG_VALTYPE_',
  'SG_MUL_VAL_',
  'BO_TX_BU_',
]);

/**
 * Every keyword that can start a DBC statement (handled or skipped). A line starting with one
 * ends a skipped statement that lacked its `;`, and ends the BU_ node list.
 */
const statementKeywords = new Set([
  ...handledKeywords,
  'NS_DESC_',
  'CAT_DEF_',
  'CAT_',
  'FILTER',
  'EV_',
  'EV_DATA_',
  'ENVVAR_DATA_',
  'SGTYPE_',
  'SGTYPE_VAL_',
  'BA_DEF_SGTYPE_',
  'BA_SGTYPE_',
  'SIG_TYPE_REF_',
  'SIG_GROUP_',
  'SIGTYPE_VALTYPE_',
  'BA_DEF_REL_',
  'BA_REL_',
  'BA_DEF_DEF_REL_',
  'BU_SG_REL_',
  'BU_EV_REL_',
  'BU_BO_REL_',
]);

/** Where a statement or name was written, for errors found in the second phase. */
interface Place {
  line: number;
  column: number;
}

interface SignalDraft {
  name: string;
  place: Place;
  startBit: number;
  length: number;
  byteOrder: ByteOrder;
  signed: boolean;
  valueType: SignalValueType;
  factor: number;
  offset: number;
  /** Factor and offset as exact integers, when both are. */
  integerScale: [bigint, bigint] | undefined;
  minimum: number;
  maximum: number;
  unit: string;
  receivers: string[];
  /** `M` or `mNM`. */
  isMultiplexer: boolean;
  /** N of `mN` / `mNM`; undefined for a plain signal or `M`. */
  multiplexValue: number | undefined;
  /** From SG_MUL_VAL_, which overrides `mN`. */
  extendedMux: { switchName: string; switchPlace: Place; ranges: [number, number][] } | undefined;
  comment: string | undefined;
  valueLabels: Map<number | bigint, string> | undefined;
  attributes: Map<string, AttributeValue>;
}

interface MessageDraft {
  id: number;
  extended: boolean;
  name: string;
  place: Place;
  length: number;
  sender: string;
  transmitters: string[];
  signals: SignalDraft[];
  signalsByName: Map<string, SignalDraft>;
  comment: string | undefined;
  attributes: Map<string, AttributeValue>;
}

interface NodeDraft {
  name: string;
  comment: string | undefined;
  attributes: Map<string, AttributeValue>;
}

/** A BA_ or BA_DEF_DEF_ value as written, resolved against its definition at the end. */
type RawValue = { kind: 'number'; value: number } | { kind: 'string'; value: string };

interface AttributeDefinitionDraft {
  name: string;
  objectType: AttributeObjectType;
  valueType: DbcAttributeDefinition['valueType'];
  minimum: number | undefined;
  maximum: number | undefined;
  enumValues: string[];
  defaultValue: RawValue | undefined;
}

/** A BA_ statement: the target is resolved once every message is known. */
type AttributeAssignment =
  | { target: 'network'; name: string; value: RawValue }
  | { target: 'node'; name: string; node: string; value: RawValue }
  | { target: 'message'; name: string; rawId: number; value: RawValue }
  | { target: 'signal'; name: string; rawId: number; signal: string; value: RawValue };

type CommentAssignment =
  | { target: 'network'; text: string }
  | { target: 'node'; node: string; text: string }
  | { target: 'message'; rawId: number; text: string }
  | { target: 'signal'; rawId: number; signal: string; text: string };

interface SignalReference {
  rawId: number;
  signal: string;
  place: Place;
}

class DbcParser {
  private pos = 0;
  private version = '';
  private readonly nodes: NodeDraft[] = [];
  private readonly nodesByName = new Map<string, NodeDraft>();
  private readonly messages: MessageDraft[] = [];
  private readonly messagesByName = new Map<string, MessageDraft>();
  /** By the id as written in the DBC (bit 31 included): how the other statements refer to them. */
  private readonly messagesByRawId = new Map<number, MessageDraft>();
  private readonly valueTables = new Map<string, Map<number | bigint, string>>();
  private readonly definitions = new Map<string, AttributeDefinitionDraft>();
  private readonly defaults: { name: string; value: RawValue }[] = [];
  private readonly assignments: AttributeAssignment[] = [];
  private readonly comments: CommentAssignment[] = [];
  private readonly labels: (SignalReference & { labels: Map<number | bigint, string> })[] = [];
  private readonly valueTypes: (SignalReference & { code: number })[] = [];
  private readonly muxValues: (SignalReference & {
    switchName: string;
    switchPlace: Place;
    ranges: [number, number][];
  })[] = [];
  private readonly transmitters: { rawId: number; nodes: string[] }[] = [];

  constructor(
    private readonly tokens: readonly DbcToken[],
    private readonly file: string,
  ) {}

  // ---------------------------------------------------------------- token helpers

  private peek(offset = 0): DbcToken {
    const index = Math.min(this.pos + offset, this.tokens.length - 1);
    return this.tokens[index] as DbcToken;
  }

  private next(): DbcToken {
    const token = this.peek();
    if (this.pos < this.tokens.length - 1) this.pos++;
    return token;
  }

  private fail(token: DbcToken, expected: string): never {
    throw new DbcParseError({
      file: this.file,
      line: token.line,
      column: token.column,
      expected,
      ...(token.kind === 'eof'
        ? {}
        : { found: token.kind === 'string' ? `"${token.text}"` : token.text }),
    });
  }

  private isPunct(token: DbcToken, text: string): boolean {
    return token.kind === 'punct' && token.text === text;
  }

  private acceptPunct(text: string): boolean {
    if (!this.isPunct(this.peek(), text)) return false;
    this.next();
    return true;
  }

  private expectPunct(text: string, what: string): DbcToken {
    const token = this.peek();
    if (!this.isPunct(token, text)) this.fail(token, `'${text}' ${what}`);
    return this.next();
  }

  private expectIdent(what: string): DbcToken {
    const token = this.peek();
    if (token.kind !== 'ident') this.fail(token, what);
    return this.next();
  }

  private expectString(what: string): string {
    const token = this.peek();
    if (token.kind !== 'string') this.fail(token, what);
    return this.next().text;
  }

  /** An unsigned decimal integer no greater than `max`. */
  private expectInteger(what: string, max: number): number {
    const token = this.peek();
    if (token.kind !== 'number' || !/^[0-9]+$/.test(token.text)) this.fail(token, what);
    const value = Number(token.text);
    if (value > max) this.fail(token, `${what} (at most ${max})`);
    this.next();
    return value;
  }

  private startsNumber(token: DbcToken): boolean {
    if (token.kind === 'number') return true;
    return (this.isPunct(token, '-') || this.isPunct(token, '+')) && this.peek(1).kind === 'number';
  }

  /** A finite decimal number with optional sign, fraction and exponent. */
  private expectNumber(what: string): number {
    return this.expectExactNumber(what).value;
  }

  /**
   * A finite decimal number (as {@link expectNumber}), with the integer it names exactly when it
   * names one (see decimal-integer.ts).
   */
  private expectExactNumber(what: string): { value: number; integer: bigint | undefined } {
    const first = this.peek();
    let negative = false;
    if (this.isPunct(first, '-') || this.isPunct(first, '+')) {
      negative = first.text === '-';
      if (this.peek(1).kind !== 'number') this.fail(this.peek(1), what);
      this.next();
    } else if (first.kind !== 'number') {
      this.fail(first, what);
    }
    const token = this.next();
    const value = Number(token.text);
    if (!Number.isFinite(value)) this.fail(token, `${what} (a finite number)`);
    return { value: negative ? -value : value, integer: decimalInteger(token.text, negative) };
  }

  private place(token: DbcToken): Place {
    return { line: token.line, column: token.column };
  }

  private failAt(
    place: Place,
    expected: string,
    extra: Pick<DbcErrorLocation, 'found' | 'messageName' | 'signalName' | 'problem'> = {},
  ): never {
    throw new DbcParseError({ file: this.file, ...place, expected, ...extra });
  }

  // ---------------------------------------------------------------- phase 1: statements

  parseStatements(): void {
    for (;;) {
      const token = this.peek();
      if (token.kind === 'eof') return;
      if (this.isPunct(token, ';')) {
        this.next();
        continue;
      }
      if (token.kind !== 'ident') {
        this.fail(token, 'a keyword (such as BO_, CM_, BA_ or VAL_) at the start of a statement');
      }
      switch (token.text) {
        case 'VERSION':
          this.next();
          this.version = this.expectString('the version string after VERSION');
          break;
        case 'NS_':
          this.parseNewSymbols();
          break;
        case 'BS_':
          this.parseBitTiming();
          break;
        case 'BU_':
          this.parseNodes();
          break;
        case 'BO_':
          this.parseMessage();
          break;
        case 'SG_':
          this.fail(token, 'a BO_ message before its SG_ signals');
          break;
        case 'CM_':
          this.parseComment();
          break;
        case 'BA_DEF_':
          this.parseAttributeDefinition();
          break;
        case 'BA_DEF_DEF_':
          this.parseAttributeDefault();
          break;
        case 'BA_':
          this.parseAttribute();
          break;
        case 'VAL_':
          this.parseValueLabels();
          break;
        case 'VAL_TABLE_':
          this.parseValueTable();
          break;
        case 'SIG_VALTYPE_':
          this.parseSignalValueType();
          break;
        case 'SG_MUL_VAL_':
          this.parseMultiplexValues();
          break;
        case 'BO_TX_BU_':
          this.parseTransmitters();
          break;
        default:
          this.skipStatement();
      }
    }
  }

  /** Skips an unknown or unused statement: up to its `;`, or to a line starting a statement. */
  private skipStatement(): void {
    this.next();
    for (;;) {
      const token = this.peek();
      if (token.kind === 'eof') return;
      if (this.isPunct(token, ';')) {
        this.next();
        return;
      }
      if (token.startsLine && token.kind === 'ident' && statementKeywords.has(token.text)) return;
      this.next();
    }
  }

  /**
   * `NS_ :` followed by the names of the new symbols, which are themselves keywords, so the end
   * of the list is a guess: BS_ (which should follow), or a name followed by what only a
   * statement has after its keyword (a number, a string, a punctuation, or on the same line a
   * name that is not a keyword, as in `VAL_TABLE_ Gears 0 "N";`).
   */
  private parseNewSymbols(): void {
    this.next();
    this.expectPunct(':', 'after NS_');
    for (;;) {
      const token = this.peek();
      if (token.kind !== 'ident') return;
      if (token.text === 'BS_' || token.text === 'BU_' || token.text === 'BO_') return;
      const following = this.peek(1);
      if (following.kind !== 'ident' && following.kind !== 'eof') return;
      if (
        following.kind === 'ident' &&
        !following.startsLine &&
        !statementKeywords.has(following.text)
      ) {
        return;
      }
      this.next();
    }
  }

  /** `BS_: [baudrate : btr1 , btr2]`: obsolete, read and dropped. */
  private parseBitTiming(): void {
    this.next();
    this.expectPunct(':', 'after BS_');
    if (this.peek().kind !== 'number') return;
    this.expectInteger('the baud rate', Number.MAX_SAFE_INTEGER);
    if (this.acceptPunct(':')) {
      this.expectInteger('BTR1', Number.MAX_SAFE_INTEGER);
      this.expectPunct(',', 'between BTR1 and BTR2');
      this.expectInteger('BTR2', Number.MAX_SAFE_INTEGER);
    }
  }

  /**
   * `BU_: node node …`, up to the next statement keyword, or up to a line that starts with a
   * name followed by something other than a name (an unknown statement).
   */
  private parseNodes(): void {
    this.next();
    this.expectPunct(':', 'after BU_');
    for (;;) {
      const token = this.peek();
      if (token.kind !== 'ident' || statementKeywords.has(token.text)) return;
      const following = this.peek(1);
      if (
        token.startsLine &&
        !following.startsLine &&
        following.kind !== 'ident' &&
        following.kind !== 'eof'
      ) {
        return;
      }
      this.next();
      if (this.nodesByName.has(token.text)) continue;
      const node: NodeDraft = { name: token.text, comment: undefined, attributes: new Map() };
      this.nodes.push(node);
      this.nodesByName.set(node.name, node);
    }
  }

  /** `BO_ <id> <name>: <length> <sender>` and its SG_ lines. */
  private parseMessage(): void {
    this.next();
    const idToken = this.peek();
    const rawId = this.expectInteger('the message identifier', 0xffff_ffff);
    const nameToken = this.expectIdent('the message name');
    this.expectPunct(':', 'after the message name');
    const lengthToken = this.peek();
    const length = this.expectInteger('the message length in bytes', Number.MAX_SAFE_INTEGER);
    const senderToken = this.peek();
    const sender =
      senderToken.kind === 'ident' && !senderToken.startsLine ? this.next().text : noNode;
    const name = nameToken.text;
    const independent = name === independentSignalsName;

    const extended = rawId >= extendedFlag;
    const id = extended ? rawId - extendedFlag : rawId;
    if (!independent) {
      if (extended && id > maxExtendedId) {
        this.fail(idToken, 'an extended identifier (bit 31 set) of at most 29 bits');
      }
      if (!extended && id > maxStandardId) {
        this.fail(
          idToken,
          'a standard identifier of at most 0x7FF (2047), or bit 31 set for an extended one',
        );
      }
      if (length > maxMessageLength) {
        this.fail(lengthToken, `a message length of at most ${maxMessageLength} bytes`);
      }
      const sameName = this.messagesByName.get(name);
      if (sameName !== undefined) {
        this.fail(nameToken, `a message name not used before (line ${sameName.place.line})`);
      }
      const sameId = this.messagesByRawId.get(rawId);
      if (sameId !== undefined) {
        this.fail(idToken, `an identifier not used by message '${sameId.name}'`);
      }
    }
    const message: MessageDraft = {
      id,
      extended,
      name,
      place: this.place(nameToken),
      length,
      sender: sender === noNode ? '' : sender,
      transmitters: [],
      signals: [],
      signalsByName: new Map(),
      comment: undefined,
      attributes: new Map(),
    };
    while (this.peek().kind === 'ident' && this.peek().text === 'SG_') {
      const signal = this.parseSignal();
      const same = message.signalsByName.get(signal.name);
      if (same !== undefined) {
        this.failAt(signal.place, `a signal name not used before in message '${name}'`, {
          found: signal.name,
          messageName: name,
          signalName: signal.name,
        });
      }
      message.signals.push(signal);
      message.signalsByName.set(signal.name, signal);
    }
    if (independent) return;
    this.messages.push(message);
    this.messagesByName.set(name, message);
    this.messagesByRawId.set(rawId, message);
  }

  /**
   * `SG_ <name> [M|mN|mNM] : <start>|<length>@<order><sign> (<factor>,<offset>) [<min>|<max>]
   * "<unit>" <receivers>`.
   */
  private parseSignal(): SignalDraft {
    this.next();
    const nameToken = this.expectIdent('the signal name after SG_');
    let isMultiplexer = false;
    let multiplexValue: number | undefined;
    const muxToken = this.peek();
    if (muxToken.kind === 'ident') {
      const match = /^(?:(M)|m([0-9]+)(M?))$/.exec(muxToken.text);
      if (match === null) {
        this.fail(muxToken, "a multiplexer indicator ('M', 'm<n>' or 'm<n>M') or ':'");
      }
      this.next();
      if (match[1] === 'M') {
        isMultiplexer = true;
      } else {
        multiplexValue = Number(match[2]);
        if (!Number.isSafeInteger(multiplexValue)) {
          this.fail(muxToken, 'a multiplexer value of at most 2^53 - 1');
        }
        isMultiplexer = match[3] === 'M';
      }
    }
    this.expectPunct(':', 'after the signal name');
    const startBit = this.expectInteger('the start bit', 0xffff);
    this.expectPunct('|', 'between start bit and length');
    const lengthToken = this.peek();
    const length = this.expectInteger('the signal length in bits', 0xffff);
    if (length < 1 || length > maxSignalLength) {
      this.fail(lengthToken, `a signal length from 1 to ${maxSignalLength} bits`);
    }
    this.expectPunct('@', 'after the signal length');
    const orderToken = this.peek();
    if (orderToken.kind !== 'number' || (orderToken.text !== '0' && orderToken.text !== '1')) {
      this.fail(orderToken, "the byte order '1' (Intel) or '0' (Motorola) after '@'");
    }
    this.next();
    const signToken = this.peek();
    if (!this.isPunct(signToken, '+') && !this.isPunct(signToken, '-')) {
      this.fail(signToken, "the sign '+' (unsigned) or '-' (signed) after the byte order");
    }
    this.next();
    this.expectPunct('(', 'before the factor');
    const factor = this.expectExactNumber('the factor');
    this.expectPunct(',', 'between factor and offset');
    const offset = this.expectExactNumber('the offset');
    this.expectPunct(')', 'after the offset');
    this.expectPunct('[', 'before the minimum');
    const minimum = this.expectNumber('the minimum');
    this.expectPunct('|', 'between minimum and maximum');
    const maximum = this.expectNumber('the maximum');
    this.expectPunct(']', 'after the maximum');
    const unit = this.expectString('the unit string');
    const receivers: string[] = [];
    for (;;) {
      const token = this.peek();
      if (this.isPunct(token, ',') && receivers.length > 0) {
        this.next();
        receivers.push(this.expectIdent('a receiver after the comma').text);
        continue;
      }
      if (token.kind !== 'ident' || token.startsLine || statementKeywords.has(token.text)) break;
      receivers.push(this.next().text);
    }
    return {
      name: nameToken.text,
      place: this.place(nameToken),
      startBit,
      length,
      byteOrder: orderToken.text === '1' ? 'little_endian' : 'big_endian',
      signed: signToken.text === '-',
      valueType: 'integer',
      factor: factor.value,
      offset: offset.value,
      integerScale:
        factor.integer !== undefined && offset.integer !== undefined
          ? [factor.integer, offset.integer]
          : undefined,
      minimum,
      maximum,
      unit,
      receivers: receivers.filter((receiver) => receiver !== noNode),
      isMultiplexer,
      multiplexValue,
      extendedMux: undefined,
      comment: undefined,
      valueLabels: undefined,
      attributes: new Map(),
    };
  }

  /** `CM_ [BU_ <node> | BO_ <id> | SG_ <id> <signal> | EV_ <name>] "<text>";` */
  private parseComment(): void {
    this.next();
    const token = this.peek();
    if (token.kind === 'string') {
      this.comments.push({ target: 'network', text: this.next().text });
    } else if (token.kind === 'ident' && token.text === 'BU_') {
      this.next();
      const node = this.expectIdent('the node name').text;
      this.comments.push({ target: 'node', node, text: this.expectString('the comment string') });
    } else if (token.kind === 'ident' && token.text === 'BO_') {
      this.next();
      const rawId = this.expectInteger('the message identifier', 0xffff_ffff);
      this.comments.push({
        target: 'message',
        rawId,
        text: this.expectString('the comment string'),
      });
    } else if (token.kind === 'ident' && token.text === 'SG_') {
      this.next();
      const rawId = this.expectInteger('the message identifier', 0xffff_ffff);
      const signal = this.expectIdent('the signal name').text;
      const text = this.expectString('the comment string');
      this.comments.push({ target: 'signal', rawId, signal, text });
    } else if (token.kind === 'ident' && token.text === 'EV_') {
      this.next();
      this.expectIdent('the environment variable name');
      this.expectString('the comment string');
    } else {
      this.fail(token, 'a comment string, or BU_, BO_, SG_ or EV_ after CM_');
    }
    this.expectPunct(';', 'at the end of the comment');
  }

  /** `BA_DEF_ [BU_|BO_|SG_|EV_] "<name>" INT|HEX|FLOAT <min> <max> | STRING | ENUM "a","b"…;` */
  private parseAttributeDefinition(): void {
    this.next();
    let objectType: AttributeObjectType = '';
    const first = this.peek();
    if (first.kind === 'ident') {
      if (
        first.text !== 'BU_' &&
        first.text !== 'BO_' &&
        first.text !== 'SG_' &&
        first.text !== 'EV_'
      ) {
        this.fail(first, 'the attribute name string, or BU_, BO_, SG_ or EV_ before it');
      }
      objectType = first.text;
      this.next();
    }
    const name = this.expectString('the attribute name string');
    const typeToken = this.expectIdent('the attribute type (INT, HEX, FLOAT, STRING or ENUM)');
    const valueType = typeToken.text;
    let minimum: number | undefined;
    let maximum: number | undefined;
    const enumValues: string[] = [];
    switch (valueType) {
      case 'INT':
      case 'HEX':
      case 'FLOAT':
        if (this.startsNumber(this.peek())) {
          minimum = this.expectNumber('the least value');
          maximum = this.expectNumber('the greatest value');
        }
        break;
      case 'STRING':
        break;
      case 'ENUM':
        while (this.peek().kind === 'string') {
          enumValues.push(this.next().text);
          if (!this.acceptPunct(',')) break;
        }
        break;
      default:
        this.fail(typeToken, 'the attribute type (INT, HEX, FLOAT, STRING or ENUM)');
    }
    this.expectPunct(';', 'at the end of the attribute definition');
    this.definitions.set(name, {
      name,
      objectType,
      valueType,
      minimum,
      maximum,
      enumValues,
      defaultValue: this.definitions.get(name)?.defaultValue,
    });
  }

  private expectRawValue(what: string): RawValue {
    const token = this.peek();
    if (token.kind === 'string') return { kind: 'string', value: this.next().text };
    if (this.startsNumber(token)) return { kind: 'number', value: this.expectNumber(what) };
    return this.fail(token, what);
  }

  /** `BA_DEF_DEF_ "<name>" <value>;` */
  private parseAttributeDefault(): void {
    this.next();
    const name = this.expectString('the attribute name string');
    const value = this.expectRawValue('the default value (a number or a string)');
    this.expectPunct(';', 'at the end of the attribute default');
    this.defaults.push({ name, value });
  }

  /** `BA_ "<name>" [BU_ <node> | BO_ <id> | SG_ <id> <signal> | EV_ <name>] <value>;` */
  private parseAttribute(): void {
    this.next();
    const name = this.expectString('the attribute name string');
    const token = this.peek();
    const what = 'the attribute value (a number or a string)';
    if (token.kind === 'ident' && token.text === 'BU_') {
      this.next();
      const node = this.expectIdent('the node name').text;
      this.assignments.push({ target: 'node', name, node, value: this.expectRawValue(what) });
    } else if (token.kind === 'ident' && token.text === 'BO_') {
      this.next();
      const rawId = this.expectInteger('the message identifier', 0xffff_ffff);
      this.assignments.push({ target: 'message', name, rawId, value: this.expectRawValue(what) });
    } else if (token.kind === 'ident' && token.text === 'SG_') {
      this.next();
      const rawId = this.expectInteger('the message identifier', 0xffff_ffff);
      const signal = this.expectIdent('the signal name').text;
      const value = this.expectRawValue(what);
      this.assignments.push({ target: 'signal', name, rawId, signal, value });
    } else if (token.kind === 'ident' && token.text === 'EV_') {
      this.next();
      this.expectIdent('the environment variable name');
      this.expectRawValue(what);
    } else {
      this.assignments.push({ target: 'network', name, value: this.expectRawValue(what) });
    }
    this.expectPunct(';', 'at the end of the attribute');
  }

  /** `<value> "<label>"` pairs up to the `;`. */
  private parseLabelPairs(): Map<number | bigint, string> {
    const labels = new Map<number | bigint, string>();
    while (this.startsNumber(this.peek())) {
      const { value, integer } = this.expectExactNumber('a value');
      // Beyond ±(2^53 − 1) the double may be a neighbour's: the exact digits are the key.
      const key =
        integer !== undefined && (integer > maxSafe || integer < -maxSafe) ? integer : value;
      labels.set(key, this.expectString('the label string of the value'));
    }
    this.expectPunct(';', 'or a value at the end of the value labels');
    return labels;
  }

  /** `VAL_ <id> <signal> <value> "<label>" … ;` or `VAL_ <envvar> …;` (dropped). */
  private parseValueLabels(): void {
    this.next();
    const token = this.peek();
    if (token.kind === 'ident') {
      this.next();
      this.parseLabelPairs();
      return;
    }
    const rawId = this.expectInteger(
      'the message identifier (or environment variable name)',
      0xffff_ffff,
    );
    const signalToken = this.expectIdent('the signal name');
    const labels = this.parseLabelPairs();
    this.labels.push({ rawId, signal: signalToken.text, place: this.place(signalToken), labels });
  }

  /** `VAL_TABLE_ <name> <value> "<label>" … ;` */
  private parseValueTable(): void {
    this.next();
    const name = this.expectIdent('the value table name').text;
    this.valueTables.set(name, this.parseLabelPairs());
  }

  /** `SIG_VALTYPE_ <id> <signal> : <0|1|2|3>;` */
  private parseSignalValueType(): void {
    this.next();
    const rawId = this.expectInteger('the message identifier', 0xffff_ffff);
    const signalToken = this.expectIdent('the signal name');
    this.acceptPunct(':');
    const codeToken = this.peek();
    const code = this.expectInteger('the value type (0 integer, 1 float, 2 double)', 3);
    if (code === 3) this.fail(codeToken, 'the value type (0 integer, 1 float, 2 double)');
    this.expectPunct(';', 'at the end of SIG_VALTYPE_');
    this.valueTypes.push({ rawId, signal: signalToken.text, place: this.place(signalToken), code });
  }

  /** `SG_MUL_VAL_ <id> <signal> <switch> <low>-<high>[, <low>-<high>…];` */
  private parseMultiplexValues(): void {
    this.next();
    const rawId = this.expectInteger('the message identifier', 0xffff_ffff);
    const signalToken = this.expectIdent('the multiplexed signal name');
    const switchToken = this.expectIdent('the multiplexer signal name');
    const ranges: [number, number][] = [];
    do {
      const lowToken = this.peek();
      const low = this.expectInteger('the low end of a multiplexer range', Number.MAX_SAFE_INTEGER);
      this.expectPunct('-', 'between the ends of a multiplexer range');
      const high = this.expectInteger(
        'the high end of a multiplexer range',
        Number.MAX_SAFE_INTEGER,
      );
      if (high < low) this.fail(lowToken, `a range whose low end is at most its high end ${high}`);
      ranges.push([low, high]);
    } while (this.acceptPunct(','));
    this.expectPunct(';', 'at the end of SG_MUL_VAL_');
    this.muxValues.push({
      rawId,
      signal: signalToken.text,
      place: this.place(signalToken),
      switchName: switchToken.text,
      switchPlace: this.place(switchToken),
      ranges,
    });
  }

  /** `BO_TX_BU_ <id> : <node>, <node>…;` */
  private parseTransmitters(): void {
    this.next();
    const rawId = this.expectInteger('the message identifier', 0xffff_ffff);
    this.expectPunct(':', 'after the message identifier');
    const nodes: string[] = [];
    while (this.peek().kind === 'ident') {
      nodes.push(this.next().text);
      if (!this.acceptPunct(',')) break;
    }
    this.expectPunct(';', 'at the end of BO_TX_BU_');
    this.transmitters.push({ rawId, nodes });
  }

  // ---------------------------------------------------------------- phase 2: the database

  private signalOf(rawId: number, name: string): SignalDraft | undefined {
    return this.messagesByRawId.get(rawId)?.signalsByName.get(name);
  }

  build(): DbcDatabase {
    // Statements the parser does not know are skipped, so any text file parses as a database
    // without a message; a CAN driver on it would run, and decode nothing.
    if (this.messages.length === 0) {
      this.failAt(this.place(this.peek()), 'a message (BO_)', {
        problem:
          'the file defines no message (BO_): it is not a DBC file, or one with nothing to decode.',
      });
    }
    let networkComment: string | undefined;
    for (const comment of this.comments) {
      switch (comment.target) {
        case 'network':
          networkComment = comment.text;
          break;
        case 'node': {
          const node = this.nodesByName.get(comment.node);
          if (node) node.comment = comment.text;
          break;
        }
        case 'message': {
          const message = this.messagesByRawId.get(comment.rawId);
          if (message) message.comment = comment.text;
          break;
        }
        case 'signal': {
          const signal = this.signalOf(comment.rawId, comment.signal);
          if (signal) signal.comment = comment.text;
          break;
        }
      }
    }
    for (const entry of this.labels) {
      const signal = this.signalOf(entry.rawId, entry.signal);
      if (signal) signal.valueLabels = entry.labels;
    }
    for (const entry of this.transmitters) {
      const message = this.messagesByRawId.get(entry.rawId);
      if (message) message.transmitters = entry.nodes.filter((node) => node !== noNode);
    }
    for (const entry of this.valueTypes) {
      const message = this.messagesByRawId.get(entry.rawId);
      const signal = message?.signalsByName.get(entry.signal);
      if (message === undefined || signal === undefined) continue;
      if (entry.code === 0) {
        signal.valueType = 'integer';
        continue;
      }
      const bits = entry.code === 1 ? 32 : 64;
      if (signal.length !== bits) {
        this.failAt(entry.place, `a ${bits}-bit signal for SIG_VALTYPE_ ${entry.code}`, {
          found: `${signal.name} (${signal.length} bits)`,
          messageName: message.name,
          signalName: signal.name,
          problem:
            `Signal '${signal.name}' of message '${message.name}' is declared ` +
            `${entry.code === 1 ? 'an IEEE float (32 bits)' : 'an IEEE double (64 bits)'} ` +
            `but is ${signal.length} bits long.`,
        });
      }
      signal.valueType = entry.code === 1 ? 'float32' : 'float64';
    }
    for (const entry of this.muxValues) {
      const signal = this.signalOf(entry.rawId, entry.signal);
      if (signal === undefined) continue;
      signal.extendedMux = {
        switchName: entry.switchName,
        switchPlace: entry.switchPlace,
        ranges: entry.ranges,
      };
    }

    const definitions = new Map<string, DbcAttributeDefinition>();
    for (const draft of this.definitions.values()) {
      definitions.set(draft.name, {
        name: draft.name,
        objectType: draft.objectType,
        valueType: draft.valueType,
        ...(draft.minimum === undefined ? {} : { minimum: draft.minimum }),
        ...(draft.maximum === undefined ? {} : { maximum: draft.maximum }),
        enumValues: draft.enumValues,
      });
    }
    for (const entry of this.defaults) {
      const definition = definitions.get(entry.name);
      if (definition === undefined) continue;
      definitions.set(entry.name, {
        ...definition,
        defaultValue: this.resolve(entry.name, entry.value),
      });
    }
    const networkAttributes = new Map<string, AttributeValue>();
    for (const entry of this.assignments) {
      const value = this.resolve(entry.name, entry.value);
      switch (entry.target) {
        case 'network':
          networkAttributes.set(entry.name, value);
          break;
        case 'node':
          this.nodesByName.get(entry.node)?.attributes.set(entry.name, value);
          break;
        case 'message':
          this.messagesByRawId.get(entry.rawId)?.attributes.set(entry.name, value);
          break;
        case 'signal':
          this.signalOf(entry.rawId, entry.signal)?.attributes.set(entry.name, value);
          break;
      }
    }

    const messages = this.messages.map((message) => this.buildMessage(message, definitions));
    const nodes: DbcNode[] = this.nodes.map((node) => ({
      name: node.name,
      ...(node.comment === undefined ? {} : { comment: node.comment }),
      attributes: node.attributes,
    }));
    return {
      file: this.file,
      version: this.version,
      nodes,
      messages,
      valueTables: this.valueTables,
      attributeDefinitions: definitions,
      attributes: networkAttributes,
      ...(networkComment === undefined ? {} : { comment: networkComment }),
    };
  }

  /** An attribute value as the model keeps it: ENUM indexes become their labels. */
  private resolve(name: string, value: RawValue): AttributeValue {
    const definition = this.definitions.get(name);
    if (definition?.valueType === 'ENUM' && value.kind === 'number') {
      return definition.enumValues[value.value] ?? value.value;
    }
    return value.value;
  }

  private buildMessage(
    message: MessageDraft,
    definitions: ReadonlyMap<string, DbcAttributeDefinition>,
  ): DbcMessage {
    const attribute = (owner: ReadonlyMap<string, AttributeValue>, name: string) =>
      owner.get(name) ?? definitions.get(name)?.defaultValue;

    const conditions = this.multiplexConditions(message);
    const signals = message.signals.map((signal, index): DbcSignal => {
      this.checkFits(message, signal);
      const startValue = attribute(signal.attributes, 'GenSigStartValue');
      const condition = conditions[index];
      return {
        name: signal.name,
        startBit: signal.startBit,
        length: signal.length,
        byteOrder: signal.byteOrder,
        signed: signal.signed,
        valueType: signal.valueType,
        factor: signal.factor,
        offset: signal.offset,
        ...(signal.integerScale === undefined ? {} : { integerScale: signal.integerScale }),
        minimum: signal.minimum,
        maximum: signal.maximum,
        unit: signal.unit,
        receivers: signal.receivers,
        isMultiplexer: signal.isMultiplexer,
        ...(condition === undefined ? {} : { multiplexedBy: condition }),
        ...(signal.comment === undefined ? {} : { comment: signal.comment }),
        ...(signal.valueLabels === undefined ? {} : { valueLabels: signal.valueLabels }),
        ...(typeof startValue === 'number' ? { startValue } : {}),
        attributes: signal.attributes,
      };
    });
    const cycleTime = attribute(message.attributes, 'GenMsgCycleTime');
    const frameFormat = attribute(message.attributes, 'VFrameFormat');
    const fd =
      message.length > 8 || (typeof frameFormat === 'string' && frameFormat.endsWith('_FD'));
    return {
      id: message.id,
      extended: message.extended,
      name: message.name,
      length: message.length,
      sender: message.sender,
      transmitters: message.transmitters,
      signals,
      ...(message.comment === undefined ? {} : { comment: message.comment }),
      ...(typeof cycleTime === 'number' && cycleTime > 0 ? { cycleTimeMs: cycleTime } : {}),
      fd,
      attributes: message.attributes,
    };
  }

  /**
   * Refuses a signal whose bits reach beyond the message. Intel signals grow upwards from the
   * start bit; Motorola signals grow downwards from it in sawtooth numbering, i.e. upwards in
   * the "big-endian linear" numbering where bit 7 of byte 0 is 0 and bit 0 of byte 0 is 7.
   */
  private checkFits(message: MessageDraft, signal: SignalDraft): void {
    const bits = message.length * 8;
    let first: number;
    let last: number;
    if (signal.byteOrder === 'little_endian') {
      first = signal.startBit;
      last = signal.startBit + signal.length - 1;
    } else {
      first = signal.startBit - (signal.startBit % 8) + 7 - (signal.startBit % 8);
      last = first + signal.length - 1;
    }
    if (first < bits && last < bits) return;
    const order = signal.byteOrder === 'little_endian' ? 'Intel' : 'Motorola';
    this.failAt(signal.place, `a signal that fits the ${message.length}-byte message`, {
      found: signal.name,
      messageName: message.name,
      signalName: signal.name,
      problem:
        `Signal '${signal.name}' of message '${message.name}' does not fit the message: ` +
        `${signal.length} bit${signal.length === 1 ? '' : 's'} from start bit ${signal.startBit} ` +
        `(${order}) reach${signal.length === 1 ? 'es' : ''} beyond its ${message.length} ` +
        `byte${message.length === 1 ? '' : 's'} ` +
        `(${bits} bits).`,
    });
  }

  /**
   * The condition of every signal (undefined: always present). SG_MUL_VAL_ gives switch and
   * ranges; `mN` alone means "when the message's multiplexer equals N". Refuses a switch that
   * does not exist and switches that depend on each other in a cycle.
   */
  private multiplexConditions(message: MessageDraft): (DbcMultiplexCondition | undefined)[] {
    const plainSwitch =
      message.signals.find(
        (signal) => signal.isMultiplexer && signal.multiplexValue === undefined,
      ) ?? message.signals.find((signal) => signal.isMultiplexer);
    const conditions = message.signals.map((signal): DbcMultiplexCondition | undefined => {
      if (signal.extendedMux !== undefined) {
        const { switchName, switchPlace, ranges } = signal.extendedMux;
        if (!message.signalsByName.has(switchName)) {
          this.failAt(switchPlace, `a multiplexer signal of message '${message.name}'`, {
            found: switchName,
            messageName: message.name,
            signalName: signal.name,
          });
        }
        return { switchName, ranges };
      }
      if (signal.multiplexValue === undefined) return undefined;
      if (plainSwitch === undefined || plainSwitch === signal) {
        this.failAt(signal.place, `a multiplexer signal ('M') in message '${message.name}'`, {
          found: signal.name,
          messageName: message.name,
          signalName: signal.name,
          problem:
            `Signal '${signal.name}' of message '${message.name}' is multiplexed ` +
            `(m${signal.multiplexValue}) but the message has no multiplexer signal ('M').`,
        });
      }
      return {
        switchName: plainSwitch.name,
        ranges: [[signal.multiplexValue, signal.multiplexValue]],
      };
    });
    // A chain of switches longer than the number of signals loops.
    const indexByName = new Map(message.signals.map((signal, index) => [signal.name, index]));
    message.signals.forEach((signal, index) => {
      let current: number | undefined = index;
      for (let steps = 0; current !== undefined; steps++) {
        if (steps > message.signals.length) {
          this.failAt(
            signal.place,
            'multiplexer signals that do not depend on each other in a cycle',
            {
              found: signal.name,
              messageName: message.name,
              signalName: signal.name,
              problem:
                `Signal '${signal.name}' of message '${message.name}' is multiplexed by a chain ` +
                'of multiplexers that loops back on itself.',
            },
          );
        }
        const condition: DbcMultiplexCondition | undefined = conditions[current];
        current = condition === undefined ? undefined : indexByName.get(condition.switchName);
      }
    });
    return conditions;
  }
}
