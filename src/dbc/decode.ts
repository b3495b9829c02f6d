/**
 * Compiled frame decoders: per message, the bit extraction of every signal is worked out once
 * (byte offsets, shifts, masks), so that decoding a frame is a few array reads and arithmetic per
 * signal and allocates nothing but the BigInt of a signal longer than 53 bits (and the decimal
 * text of a value beyond ±2^53, see {@link DecodedSignal.exactValue}).
 */
import type { DbcDatabase, DbcMessage, DbcSignal, ValueLabels } from './model.js';

/**
 * The state of one signal after a decode:
 * - `decoded`: `raw`, `value` (and `valueText` when labelled) are valid;
 * - `inactive`: multiplexed out (its multiplexer value is not the one it belongs to): no value,
 *   and the signal should be left as it was (not written);
 * - `truncated`: the frame is too short for the signal (DLC shorter than the message), or its
 *   multiplexer could not be decoded: the signal is not decodable (the CAN driver writes it as
 *   Bad with reason DecodeError).
 */
export type SignalDecodeStatus = 'decoded' | 'inactive' | 'truncated';

/**
 * One signal's slot in a decoder's result. The slot objects are created once per decoder and
 * overwritten by every `decode` call: read them before the next call, copy what you keep.
 */
export interface DecodedSignal {
  /** The signal's definition. */
  readonly signal: DbcSignal;
  /** Index of the signal in `message.signals` (same as the slot's index in the result). */
  readonly index: number;
  /** Outcome of the last decode for this signal. */
  status: SignalDecodeStatus;
  /**
   * Raw value: the unsigned or two's-complement integer of the signal's bits (a `bigint` only
   * for integer signals longer than 53 bits), or the IEEE value of a float signal. 0 when not
   * decoded.
   */
  raw: number | bigint;
  /**
   * Physical value, raw × factor + offset, as a number. For integer signals longer than 53 bits
   * it is the double nearest the exact result, computed from the exact raw value (one rounding);
   * shorter signals and float signals use double arithmetic. NaN when not decoded.
   */
  value: number;
  /** The VAL_ label of the raw value, when the signal has labels and one matches. */
  valueText: string | undefined;
  /**
   * The exact decimal of the physical value when it is an integer beyond ±2^53, where doubles
   * skip integers and `value` is only the nearest one (e.g. `"578437695752307201"` for the
   * 64-bit raw value 0x0807060504030201 that `value` holds as 578437695752307200). Given for
   * integer signals whose factor and offset are integers as the DBC writes them (factor 1,
   * offset 0 included; {@link DbcSignal.integerScale}): the value is then computed in BigInt.
   * With a fractional factor or offset the value is a measurement (the nearest double) and this
   * is undefined, as it is for float signals and for every value within ±2^53 (where `value` is
   * exact).
   */
  exactValue: string | undefined;
}

/** A message's compiled decoder. */
export interface MessageDecoder {
  /** The message it decodes. */
  readonly message: DbcMessage;
  /**
   * Decodes one frame. Returns the decoder's result array: one slot per signal, in the order of
   * `message.signals`, the same array and slot objects on every call (no allocation per frame).
   * @param data the frame payload.
   * @param length payload bytes actually received (the DLC in bytes); default `data.length`.
   *   Bytes of `data` from `length` on are ignored. Signals reaching beyond it are `truncated`.
   */
  decode(data: Uint8Array, length?: number): readonly DecodedSignal[];
}

/**
 * Compiles the decoder of one message. Pure; cheap enough to call once per message at start.
 * The message must come from `parseDbc` (signals fit the message, multiplexers exist and do not
 * loop); a signal whose multiplexer is missing is treated as always present.
 */
export function compileMessageDecoder(message: DbcMessage): MessageDecoder {
  return new CompiledMessageDecoder(message);
}

/**
 * Decoders of every message of a database, looked up by frame identifier. A standard and an
 * extended frame with the same number are different messages.
 */
export interface DatabaseDecoders {
  /** The decoder for a received frame, or undefined for an identifier the DBC does not define. */
  get(id: number, extended: boolean): MessageDecoder | undefined;
  /** Every decoder, in the database's message order. */
  readonly all: readonly MessageDecoder[];
}

/** Compiles the decoders of every message of a database. */
export function compileDatabaseDecoders(database: DbcDatabase): DatabaseDecoders {
  const standard = new Map<number, MessageDecoder>();
  const extended = new Map<number, MessageDecoder>();
  const all = database.messages.map((message) => {
    const decoder = compileMessageDecoder(message);
    (message.extended ? extended : standard).set(message.id, decoder);
    return decoder;
  });
  return {
    get: (id, isExtended) => (isExtended ? extended : standard).get(id),
    all,
  };
}

const two32 = 2 ** 32;
/** 2^53: up to this magnitude doubles hold every integer; beyond it they skip some. */
const exactLimit = 2 ** 53;
const exactLimitBig = 2n ** 53n;
const maxSafeBig = 2n ** 53n - 1n;
// Reinterprets the raw bits of float signals; one buffer serves every decoder (synchronous use).
const floatView = new DataView(new ArrayBuffer(8));

/**
 * One signal, compiled. Its bits are split into chunks, each a run of bits inside one byte:
 * `((data[byte] >> shift) & mask) * weight` is the chunk's contribution to the low 32 bits of the
 * raw value (chunks before `firstHigh`) or to the high 32 bits (chunks from `firstHigh` on); a
 * chunk never straddles bit 32 of the raw value, so both words stay exact in a double.
 */
interface CompiledSignal {
  readonly slot: DecodedSignal;
  readonly bytes: Int32Array;
  readonly shifts: Int32Array;
  readonly masks: Int32Array;
  readonly weights: Float64Array;
  readonly firstHigh: number;
  /** Payload bytes the signal needs: its highest byte index + 1. */
  readonly needed: number;
  readonly length: number;
  readonly signed: boolean;
  /** 2^(length − 1): a signed raw value at or above it is negative. Infinity when unsigned. */
  readonly signThreshold: number;
  /** 2^length, subtracted from a negative two's-complement raw value. */
  readonly span: number;
  /** 0 integer ≤ 53 bits, 1 integer > 53 bits (BigInt), 2 float32, 3 float64. */
  readonly kind: 0 | 1 | 2 | 3;
  readonly factor: number;
  readonly offset: number;
  /**
   * Factor and offset as BigInt when the value of this integer signal is an integer (both are
   * integers as the DBC writes them), so a value beyond ±2^53 can be computed exactly; undefined
   * otherwise.
   */
  readonly exactScale: readonly [bigint, bigint] | undefined;
  /**
   * For a ≤ 53-bit signal with `exactScale`, when its value is computed in BigInt: 0 never (it
   * stays within ±2^53, where doubles are exact), 1 when the double arithmetic reaches ±2^53,
   * 2 always (a factor or offset beyond ±2^53, whose digits the doubles do not hold).
   */
  readonly exactMode: 0 | 1 | 2;
  /**
   * The binary scaling of a > 53-bit integer signal with a fractional factor or offset, so that
   * raw × factor + offset can be computed exactly and rounded once: factor = f × 2^exponent and
   * offset = o × 2^exponent with integers f and o (BigInt). Undefined for the other signals.
   */
  readonly binaryScale: { f: bigint; o: bigint; exponent: number } | undefined;
  readonly labels: ValueLabels | undefined;
  /** Slot index of the multiplexer deciding this signal's presence; -1 for none. */
  readonly switchIndex: number;
  /** Inclusive ranges of the switch's raw value, flattened [low0, high0, low1, high1, …]. */
  readonly ranges: Float64Array;
}

/**
 * The frame bit (byte index, bit in byte) of every raw bit of a signal, raw bit 0 (LSB) first.
 * Intel: raw bit k is frame bit startBit + k. Motorola: the start bit is the MSB in sawtooth
 * numbering; in "big-endian linear" numbering (bit 7 of byte 0 = 0, bit 0 of byte 0 = 7, bit 7 of
 * byte 1 = 8…) the signal is contiguous, MSB first, so raw bit k sits at
 * linear(startBit) + (length - 1 - k).
 */
function bitPositions(signal: DbcSignal): [number, number][] {
  const positions: [number, number][] = [];
  if (signal.byteOrder === 'little_endian') {
    for (let k = 0; k < signal.length; k++) {
      const bit = signal.startBit + k;
      positions.push([bit >> 3, bit & 7]);
    }
  } else {
    const startLinear = (signal.startBit >> 3) * 8 + (7 - (signal.startBit & 7));
    for (let k = 0; k < signal.length; k++) {
      const linear = startLinear + (signal.length - 1 - k);
      positions.push([linear >> 3, 7 - (linear & 7)]);
    }
  }
  return positions;
}

function compileSignal(
  signal: DbcSignal,
  index: number,
  indexByName: ReadonlyMap<string, number>,
): CompiledSignal {
  const chunks: { byte: number; shift: number; width: number; rawBit: number }[] = [];
  bitPositions(signal).forEach(([byte, bit], rawBit) => {
    const last = chunks[chunks.length - 1];
    // Within a byte, consecutive raw bits sit at consecutive bit numbers in both byte orders.
    if (last !== undefined && last.byte === byte && rawBit !== 32) last.width++;
    else chunks.push({ byte, shift: bit, width: 1, rawBit });
  });
  const firstHigh = chunks.findIndex((chunk) => chunk.rawBit >= 32);
  const kind =
    signal.valueType === 'float32'
      ? 2
      : signal.valueType === 'float64'
        ? 3
        : signal.length > 53
          ? 1
          : 0;
  const condition = signal.multiplexedBy;
  const switchIndex = condition === undefined ? -1 : (indexByName.get(condition.switchName) ?? -1);
  const exactScale = kind <= 1 ? signal.integerScale : undefined;
  // A raw value of a ≤ 53-bit signal stays below 2^53 in magnitude; scaled, it may not.
  const exactMode =
    exactScale === undefined
      ? 0
      : !Number.isSafeInteger(signal.factor) || !Number.isSafeInteger(signal.offset)
        ? 2
        : 2 ** signal.length * Math.abs(signal.factor) + Math.abs(signal.offset) >= exactLimit
          ? 1
          : 0;
  return {
    slot: {
      signal,
      index,
      status: 'inactive',
      raw: 0,
      value: Number.NaN,
      valueText: undefined,
      exactValue: undefined,
    },
    bytes: Int32Array.from(chunks, (chunk) => chunk.byte),
    shifts: Int32Array.from(chunks, (chunk) => chunk.shift),
    masks: Int32Array.from(chunks, (chunk) => (1 << chunk.width) - 1),
    weights: Float64Array.from(chunks, (chunk) => 2 ** (chunk.rawBit % 32)),
    firstHigh: firstHigh === -1 ? chunks.length : firstHigh,
    needed: Math.max(...chunks.map((chunk) => chunk.byte)) + 1,
    length: signal.length,
    signed: signal.signed,
    signThreshold: signal.signed ? 2 ** (signal.length - 1) : Number.POSITIVE_INFINITY,
    span: 2 ** signal.length,
    kind,
    factor: signal.factor,
    offset: signal.offset,
    exactScale,
    exactMode,
    binaryScale:
      kind === 1 && exactScale === undefined
        ? binaryScale(signal.factor, signal.offset)
        : undefined,
    labels: signal.valueLabels,
    switchIndex: switchIndex === index ? -1 : switchIndex,
    ranges: Float64Array.from((condition?.ranges ?? []).flat()),
  };
}

/**
 * Decode order: every multiplexer before the signals it selects (by depth of the multiplexer
 * chain), file order otherwise. The parser guarantees the chains end.
 */
function decodeOrder(compiled: readonly CompiledSignal[]): CompiledSignal[] {
  const depth = (signal: CompiledSignal): number => {
    let d = 0;
    for (let s = signal.switchIndex; s !== -1 && d <= compiled.length; d++) {
      s = compiled[s]?.switchIndex ?? -1;
    }
    return d;
  };
  return compiled
    .map((signal) => ({ signal, depth: depth(signal) }))
    .sort((a, b) => a.depth - b.depth || a.signal.slot.index - b.signal.slot.index)
    .map((entry) => entry.signal);
}

class CompiledMessageDecoder implements MessageDecoder {
  private readonly results: DecodedSignal[];
  private readonly order: CompiledSignal[];

  constructor(readonly message: DbcMessage) {
    const indexByName = new Map(message.signals.map((signal, index) => [signal.name, index]));
    const compiled = message.signals.map((signal, index) =>
      compileSignal(signal, index, indexByName),
    );
    this.results = compiled.map((signal) => signal.slot);
    this.order = decodeOrder(compiled);
  }

  decode(data: Uint8Array, length?: number): readonly DecodedSignal[] {
    const available =
      length === undefined ? data.length : Math.max(0, Math.min(length, data.length));
    const results = this.results;
    const order = this.order;
    for (let i = 0; i < order.length; i++) {
      const signal = order[i] as CompiledSignal;
      const slot = signal.slot;
      slot.raw = 0;
      slot.value = Number.NaN;
      slot.valueText = undefined;
      slot.exactValue = undefined;
      if (signal.switchIndex !== -1) {
        const selector = results[signal.switchIndex] as DecodedSignal;
        if (selector.status !== 'decoded') {
          slot.status = selector.status;
          continue;
        }
        if (!inRanges(Number(selector.raw), signal.ranges)) {
          slot.status = 'inactive';
          continue;
        }
      }
      if (signal.needed > available) {
        slot.status = 'truncated';
        continue;
      }
      extract(signal, data, slot);
      slot.status = 'decoded';
    }
    return results;
  }
}

function inRanges(value: number, ranges: Float64Array): boolean {
  for (let r = 0; r < ranges.length; r += 2) {
    if (value >= (ranges[r] as number) && value <= (ranges[r + 1] as number)) return true;
  }
  return false;
}

/** Reads the signal's bits from `data` (known to be long enough) into the slot. */
function extract(signal: CompiledSignal, data: Uint8Array, slot: DecodedSignal): void {
  const { bytes, shifts, masks, weights, firstHigh } = signal;
  let low = 0;
  for (let c = 0; c < firstHigh; c++) {
    low +=
      (((data[bytes[c] as number] as number) >> (shifts[c] as number)) & (masks[c] as number)) *
      (weights[c] as number);
  }
  let high = 0;
  for (let c = firstHigh; c < bytes.length; c++) {
    high +=
      (((data[bytes[c] as number] as number) >> (shifts[c] as number)) & (masks[c] as number)) *
      (weights[c] as number);
  }
  let raw: number;
  switch (signal.kind) {
    case 0: {
      raw = high * two32 + low;
      // Two's complement: a set sign bit means raw − 2^length (exact below 2^53).
      if (raw >= signal.signThreshold) raw -= signal.span;
      slot.raw = raw;
      slot.value = raw * signal.factor + signal.offset;
      slot.valueText = signal.labels?.get(raw);
      // An integer factor and offset can carry a raw value within 2^53 to or beyond it: redo
      // that in BigInt. Both steps of the double arithmetic are exact below 2^53 and round
      // monotonically, so an inexact result shows as a product or a sum at or beyond 2^53.
      if (
        signal.exactMode !== 0 &&
        (signal.exactMode === 2 ||
          Math.abs(raw * signal.factor) >= exactLimit ||
          Math.abs(slot.value) >= exactLimit)
      ) {
        exactScaled(BigInt(raw), signal.exactScale as readonly [bigint, bigint], slot);
      }
      return;
    }
    case 1: {
      const bits = (BigInt(high) << 32n) | BigInt(low);
      const big = signal.signed
        ? BigInt.asIntN(signal.length, bits)
        : BigInt.asUintN(signal.length, bits);
      slot.raw = big;
      // Labels beyond ±(2^53 − 1) have BigInt keys: the raw value's own, not its nearest double's.
      if (signal.labels !== undefined)
        slot.valueText = signal.labels.get(
          big > maxSafeBig || big < -maxSafeBig ? big : Number(big),
        );
      if (signal.exactScale !== undefined) exactScaled(big, signal.exactScale, slot);
      else {
        const { f, o, exponent } = signal.binaryScale as NonNullable<CompiledSignal['binaryScale']>;
        slot.value = nearestDouble(big * f + o, exponent);
      }
      return;
    }
    case 2:
      floatView.setUint32(0, low, true);
      raw = floatView.getFloat32(0, true);
      break;
    default:
      floatView.setUint32(0, low, true);
      floatView.setUint32(4, high, true);
      raw = floatView.getFloat64(0, true);
  }
  slot.raw = raw;
  slot.value = raw * signal.factor + signal.offset;
  if (signal.labels !== undefined) {
    // A float raw value beyond 2^53 is an integer; its label, if any, has a BigInt key.
    slot.valueText = signal.labels.get(
      Number.isInteger(raw) && !Number.isSafeInteger(raw) ? BigInt(raw) : raw,
    );
  }
}

/**
 * raw × factor + offset in BigInt: `value` gets the nearest double of the exact result (one
 * rounding, not one per operation), `exactValue` its decimal when beyond ±2^53.
 */
function exactScaled(
  raw: bigint,
  [factor, offset]: readonly [bigint, bigint],
  slot: DecodedSignal,
): void {
  const exact = raw * factor + offset;
  slot.value = Number(exact);
  slot.exactValue = exact > exactLimitBig || exact < -exactLimitBig ? exact.toString() : undefined;
}

/**
 * Factor and offset over one power of two: factor = f × 2^exponent, offset = o × 2^exponent,
 * exactly (every finite double is an integer times a power of two).
 */
function binaryScale(factor: number, offset: number): { f: bigint; o: bigint; exponent: number } {
  const [fm, fe] = binaryParts(factor);
  const [om, oe] = binaryParts(offset);
  const exponent = Math.min(fe, oe);
  return { f: fm << BigInt(fe - exponent), o: om << BigInt(oe - exponent), exponent };
}

/** A finite double as an integer mantissa (BigInt) and a power of two: x = m × 2^e. */
function binaryParts(x: number): [bigint, number] {
  if (x === 0) return [0n, 0];
  floatView.setFloat64(0, x);
  const biased = (floatView.getUint16(0) >> 4) & 0x7ff;
  const high = floatView.getUint32(0) & 0xf_ffff;
  const low = floatView.getUint32(4);
  let mantissa = (BigInt(high) << 32n) | BigInt(low);
  // Normal numbers have the implicit leading bit; subnormals have the exponent of the smallest.
  if (biased !== 0) mantissa |= 1n << 52n;
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  return [x < 0 ? -mantissa : mantissa, exponent];
}

/**
 * The double nearest n × 2^exponent (ties to even), n an exact integer: one rounding, where
 * `Number(raw) × factor + offset` rounds three times. ±Infinity beyond the double range.
 */
export function nearestDouble(n: bigint, exponent: number): number {
  if (n === 0n) return 0;
  // The usual case: Number(n) rounds once, correctly (ECMAScript's BigInt to Number), and
  // scaling by a power of two is exact while the result is a normal double.
  const rounded = Number(n);
  if (Number.isFinite(rounded) && exponent >= -1022 && exponent <= 1023) {
    const value = rounded * 2 ** exponent;
    const size = Math.abs(value);
    if (size >= 2 ** -1022 && size < Number.POSITIVE_INFINITY) return value;
  }
  // Otherwise round by hand: keep 53 significant bits, or fewer where the result is subnormal
  // (no bit below 2^-1074).
  const negative = n < 0n;
  const magnitude = negative ? -n : n;
  const bits = magnitude.toString(2).length;
  const lowest = Math.max(bits + exponent - 53, -1074);
  const drop = lowest - exponent;
  let result: number;
  if (drop <= 0) {
    // Exact: fewer than 53 significant bits, within range (or overflowing to Infinity).
    result = Number(magnitude) * 2 ** exponent;
  } else {
    const shift = BigInt(drop);
    let kept = magnitude >> shift;
    const rest = magnitude - (kept << shift);
    const half = 1n << (shift - 1n);
    if (rest > half || (rest === half && (kept & 1n) === 1n)) kept += 1n;
    // kept ≤ 2^53 is exact; the power of two may overflow to Infinity, as the value does.
    result = Number(kept) * 2 ** lowest;
  }
  return negative ? -result : result;
}
