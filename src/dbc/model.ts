/**
 * The parsed form of a DBC file (Vector CANdb++ database): the nodes, messages and signals of one
 * CAN network, with the comments, value tables and attributes that belong to them. Produced by
 * `parseDbc` (parse-dbc.ts), consumed by the decoders (decode.ts), the CAN driver and the DBC
 * route. Plain read-only data: no methods, safe to share between consumers.
 */

/**
 * Bit order of a signal in the frame. `little_endian` is DBC `@1` ("Intel"): the start bit is
 * the least significant bit and the signal grows towards higher bit numbers. `big_endian` is
 * DBC `@0` ("Motorola"): the start bit is the most significant bit in the DBC's sawtooth bit
 * numbering (bit 7 of byte 0 is 7, bit 0 of byte 1 is 8…) and the signal continues downwards
 * within a byte, then into bit 7 of the next byte.
 */
export type ByteOrder = 'little_endian' | 'big_endian';

/**
 * How the raw bits of a signal are read: an integer (`integer`, signed or unsigned), or an IEEE
 * 754 float (`float32` for SIG_VALTYPE_ 1, 32 bits; `float64` for SIG_VALTYPE_ 2, 64 bits).
 */
export type SignalValueType = 'integer' | 'float32' | 'float64';

/**
 * A value labels table (VAL_ or VAL_TABLE_): raw value → label, e.g. `0 → "Off"`. Keys are the
 * raw values as numbers, except integers beyond ±(2^53 − 1), which doubles cannot hold exactly:
 * those are BigInt keys with the DBC's exact digits (`18446744073709551615n`), so a 64-bit raw
 * value finds its own label, never a neighbour's.
 */
export type ValueLabels = ReadonlyMap<number | bigint, string>;

/**
 * The value of an attribute (BA_ / BA_DEF_DEF_): a number for INT, HEX and FLOAT attributes, a
 * string for STRING attributes, and the label (not the index) for ENUM attributes.
 */
export type AttributeValue = number | string;

/** What a BA_DEF_ attribute definition applies to: '' is the network itself. */
export type AttributeObjectType = '' | 'BU_' | 'BO_' | 'SG_' | 'EV_';

/** One BA_DEF_ line, with its BA_DEF_DEF_ default. */
export interface DbcAttributeDefinition {
  /** Attribute name, e.g. `GenMsgCycleTime`. */
  readonly name: string;
  /** Object kind the attribute belongs to ('' for the network). */
  readonly objectType: AttributeObjectType;
  /** Declared type. */
  readonly valueType: 'INT' | 'HEX' | 'FLOAT' | 'STRING' | 'ENUM';
  /** Least value (INT, HEX, FLOAT), when declared. */
  readonly minimum?: number;
  /** Greatest value (INT, HEX, FLOAT), when declared. */
  readonly maximum?: number;
  /** The labels of an ENUM attribute, in index order. Empty for the other types. */
  readonly enumValues: readonly string[];
  /** The BA_DEF_DEF_ default, resolved like a value (ENUM: the label); absent when none. */
  readonly defaultValue?: AttributeValue;
}

/**
 * Where a multiplexed signal is present: when the value of the multiplexer signal `switchName`
 * (a signal of the same message) lies in one of the inclusive `ranges`. A simple `m3` signal has
 * the message's `M` signal as switch and the range [3, 3]; SG_MUL_VAL_ (extended multiplexing)
 * gives the switch and ranges explicitly, and the switch may itself be multiplexed (cascades).
 */
export interface DbcMultiplexCondition {
  /** Name of the multiplexer (switch) signal in the same message. */
  readonly switchName: string;
  /** Inclusive [low, high] ranges of the switch's raw value; never empty. */
  readonly ranges: readonly (readonly [number, number])[];
}

/** One SG_ line and what other sections say about that signal. */
export interface DbcSignal {
  /** Signal name, unique in its message. */
  readonly name: string;
  /** Start bit as written in the DBC (LSB for little_endian, MSB in sawtooth numbering for big_endian). */
  readonly startBit: number;
  /** Length in bits, 1 to 64. */
  readonly length: number;
  readonly byteOrder: ByteOrder;
  /** True for `-` (two's complement), false for `+`. Ignored for float signals. */
  readonly signed: boolean;
  /** Integer or IEEE float (SIG_VALTYPE_); float signals have length 32 or 64. */
  readonly valueType: SignalValueType;
  /** Scale: physical = raw × factor + offset. */
  readonly factor: number;
  /** Offset: physical = raw × factor + offset. */
  readonly offset: number;
  /**
   * Factor and offset exactly as the DBC writes them, when both are integers (`(1,0)`,
   * `(10,-40)`, `(1,-9223372036854775808)`): an integer signal's value is then an integer,
   * computed exactly beyond ±2^53, where `factor` and `offset` (the nearest doubles) may differ
   * from the DBC's digits. Absent when either has a fractional part.
   */
  readonly integerScale?: readonly [factor: bigint, offset: bigint];
  /** Least physical value as declared (`[min|max]`); 0 and 0 often mean "not given". */
  readonly minimum: number;
  /** Greatest physical value as declared. */
  readonly maximum: number;
  /** Engineering unit, decoded from Windows-1252; '' when none. */
  readonly unit: string;
  /** Receiving nodes; `Vector__XXX` (no receiver) is left out. */
  readonly receivers: readonly string[];
  /** True for a multiplexer switch: `M`, or `mNM` in extended multiplexing. */
  readonly isMultiplexer: boolean;
  /** When present, the signal exists only while the condition holds; absent: always present. */
  readonly multiplexedBy?: DbcMultiplexCondition;
  /** CM_ SG_ comment, when any. */
  readonly comment?: string;
  /** VAL_ labels of this signal, when any. */
  readonly valueLabels?: ValueLabels;
  /** GenSigStartValue (raw) when the attribute is set on the signal or defaulted. */
  readonly startValue?: number;
  /** Every BA_ attribute set on this signal (not the defaults), by name. */
  readonly attributes: ReadonlyMap<string, AttributeValue>;
}

/** One BO_ line with its signals and what other sections say about the message. */
export interface DbcMessage {
  /** Frame identifier, without the extended flag (bit 31 of the DBC id). */
  readonly id: number;
  /** True for a 29-bit identifier (bit 31 set in the DBC). */
  readonly extended: boolean;
  /** Message name, unique in the database. */
  readonly name: string;
  /** Length in bytes, 0 to 64 (beyond 8: CAN FD). */
  readonly length: number;
  /** Transmitting node; '' when `Vector__XXX`. */
  readonly sender: string;
  /** Further transmitters from BO_TX_BU_. */
  readonly transmitters: readonly string[];
  /** Signals in file order. */
  readonly signals: readonly DbcSignal[];
  /** CM_ BO_ comment, when any. */
  readonly comment?: string;
  /** GenMsgCycleTime in milliseconds, when set on the message or defaulted and > 0. */
  readonly cycleTimeMs?: number;
  /**
   * True when VFrameFormat says CAN FD (`StandardCAN_FD` / `ExtendedCAN_FD`), or the length is
   * over 8 bytes.
   */
  readonly fd: boolean;
  /** Every BA_ attribute set on this message (not the defaults), by name. */
  readonly attributes: ReadonlyMap<string, AttributeValue>;
}

/** One node of BU_. */
export interface DbcNode {
  readonly name: string;
  /** CM_ BU_ comment, when any. */
  readonly comment?: string;
  /** Every BA_ attribute set on this node, by name. */
  readonly attributes: ReadonlyMap<string, AttributeValue>;
}

/** A whole DBC file. */
export interface DbcDatabase {
  /** File name the database was parsed from (as given to the parser). */
  readonly file: string;
  /** VERSION string; '' when absent or empty. */
  readonly version: string;
  /** BU_ nodes in file order. */
  readonly nodes: readonly DbcNode[];
  /** BO_ messages in file order. */
  readonly messages: readonly DbcMessage[];
  /** VAL_TABLE_ tables by name. */
  readonly valueTables: ReadonlyMap<string, ValueLabels>;
  /** BA_DEF_ definitions by name. */
  readonly attributeDefinitions: ReadonlyMap<string, DbcAttributeDefinition>;
  /** Network attributes (BA_ without object), by name. */
  readonly attributes: ReadonlyMap<string, AttributeValue>;
  /** Network comment (CM_ "…";), when any. */
  readonly comment?: string;
}
