/**
 * Turns a value a client writes into the bytes a Modbus write carries: the exact inverse of
 * codec.ts. Engineering units go back to raw through `(value − offset) / scale`; the raw value
 * is range-checked against the tag's type before anything is sent, so a value the registers
 * cannot hold is refused rather than wrapped or clipped. Integers at or beyond ±2^53 (int64,
 * uint64) come as decimal strings, since a JSON number cannot carry them exactly.
 */

import { writtenInteger } from '../written-integer.js';
import type { ByteOrder, ModbusValueType } from './codec.js';
import { registerCount } from './codec.js';

/** What the encoder needs of a tag. */
export interface EncodableTag {
  type: ModbusValueType;
  order: ByteOrder;
  scale: number;
  offset: number;
  /** Registers of a string. */
  length?: number | undefined;
}

const integerRanges: Partial<Record<ModbusValueType, [bigint, bigint]>> = {
  int16: [-(2n ** 15n), 2n ** 15n - 1n],
  uint16: [0n, 2n ** 16n - 1n],
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

/** Largest finite float32. */
const float32Max = 3.4028234663852886e38;

/** The raw value of a write, ready to encode: an integer, a float or a string. */
export type RawWrite =
  | { kind: 'integer'; raw: bigint }
  | { kind: 'float'; raw: number }
  | { kind: 'string'; raw: string }
  | { kind: 'bool'; raw: boolean };

/**
 * The raw value for `value`, or a message saying why the tag cannot take it. Scaled integer
 * tags round to the nearest raw step (a scale is a resolution: 25.34 with scale 0.1 writes 253,
 * read back 25.3); unscaled ones refuse fractions, since nothing could round them silently
 * without the client knowing, and refuse a JSON number that does not name its integer exactly
 * (at or beyond ±2^53, or a fraction JSON parsing rounded away: see written-integer.ts).
 * @param numberText the number as the client spelt it (its JSON text), when known.
 */
export function rawWrite(
  tag: EncodableTag,
  value: unknown,
  numberText?: string,
): RawWrite | string {
  const { type } = tag;
  if (type === 'bool' || type === 'bit') {
    return typeof value === 'boolean' ? { kind: 'bool', raw: value } : 'must be true or false';
  }
  if (type === 'string') {
    if (typeof value !== 'string') return 'must be a string';
    const capacity = 2 * (tag.length ?? 1);
    if (value.length > capacity)
      return `is ${value.length} characters, more than the ${capacity} the tag holds`;
    // Two 8-bit characters per register, cut at the first NUL when read: a NUL inside would
    // read back shorter, and a character beyond ISO 8859-1 does not fit a byte.
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if (code === 0 || code > 0xff)
        return `holds a character (at ${i}) that is not ISO 8859-1 text (U+0001–U+00FF)`;
    }
    return { kind: 'string', raw: value };
  }
  const unscaled = tag.scale === 1 && tag.offset === 0;
  if (type === 'float32' || type === 'float64') {
    if (typeof value !== 'number') return 'must be a number';
    const raw = unscaled ? value : (value - tag.offset) / tag.scale;
    if (!Number.isFinite(raw) || (type === 'float32' && Math.abs(raw) > float32Max))
      return `is beyond the range of ${type}`;
    return { kind: 'float', raw };
  }
  const range = integerRanges[type] as [bigint, bigint];
  let raw: bigint;
  if (typeof value === 'string') {
    // Decimal strings carry 64-bit integers beyond 2^53 exactly; a scaled tag is a measurement,
    // written as a number.
    if (!(type === 'int64' || type === 'uint64') || !unscaled)
      return 'must be a number (a decimal string only for unscaled int64 and uint64 tags)';
    if (!/^-?\d{1,20}$/.test(value)) return 'must be a decimal integer';
    raw = BigInt(value);
  } else if (typeof value === 'number' && unscaled) {
    const written = writtenInteger(value, numberText);
    if (written === 'fraction') return `must be a whole number (${type})`;
    if (written === 'inexact')
      return type === 'int64' || type === 'uint64'
        ? 'is at or beyond ±2^53, where a JSON number cannot name every integer: send it as a decimal string'
        : `is outside the range of ${type} (${range[0]} to ${range[1]})`;
    raw = written;
  } else if (typeof value === 'number') {
    const scaled = Math.round((value - tag.offset) / tag.scale);
    if (!Number.isFinite(scaled)) return `is beyond the range of ${type}`;
    // Doubles skip integers from 2^53 on: such a raw value is not exactly the one computed.
    if (!Number.isSafeInteger(scaled))
      return type === 'int64' || type === 'uint64'
        ? `is at or beyond ±2^53 once scaled (raw ${scaled}), where scaling in doubles is not exact`
        : `is outside the range of ${type} once scaled (raw ${scaled}; ${range[0]} to ${range[1]})`;
    raw = BigInt(scaled);
  } else return 'must be a number';
  if (raw < range[0] || raw > range[1])
    return unscaled
      ? `is outside the range of ${type} (${range[0]} to ${range[1]})`
      : `is outside the range of ${type} once scaled (raw ${raw}; ${range[0]} to ${range[1]})`;
  return { kind: 'integer', raw };
}

/**
 * The register bytes of a raw value as they travel (big-endian registers, one after the
 * other), in the tag's byte order; strings padded with NUL to `length` registers.
 */
export function encodeRegisters(tag: EncodableTag, value: RawWrite): Uint8Array {
  const registers = registerCount(tag.type, tag.length ?? 1);
  const bytes = new Uint8Array(registers * 2);
  const swapBytes = tag.order === 'BADC' || tag.order === 'DCBA';
  if (value.kind === 'string') {
    // The first character in the high byte (ABCD, CDAB) or the low byte (BADC, DCBA).
    for (let i = 0; i < value.raw.length; i++)
      bytes[swapBytes ? i ^ 1 : i] = value.raw.charCodeAt(i);
    return bytes;
  }
  const big = new Uint8Array(registers * 2);
  const view = new DataView(big.buffer);
  switch (tag.type) {
    case 'int16':
    case 'uint16':
      view.setUint16(0, Number(BigInt.asUintN(16, (value as { raw: bigint }).raw)));
      break;
    case 'int32':
    case 'uint32':
      view.setUint32(0, Number(BigInt.asUintN(32, (value as { raw: bigint }).raw)));
      break;
    case 'int64':
    case 'uint64':
      view.setBigUint64(0, BigInt.asUintN(64, (value as { raw: bigint }).raw));
      break;
    case 'float32':
      view.setFloat32(0, (value as { raw: number }).raw);
      break;
    case 'float64':
      view.setFloat64(0, (value as { raw: number }).raw);
      break;
    default:
      throw new Error(`${tag.type} is not written as registers`);
  }
  // The inverse of codec.ts's reorder: word w of the big-endian value goes to register
  // (registers − 1 − w) when words are swapped, its bytes exchanged when bytes are swapped.
  const swapWords = tag.order === 'CDAB' || tag.order === 'DCBA';
  for (let word = 0; word < registers; word++) {
    const to = 2 * (swapWords ? registers - 1 - word : word);
    const high = big[2 * word] as number;
    const low = big[2 * word + 1] as number;
    bytes[to] = swapBytes ? low : high;
    bytes[to + 1] = swapBytes ? high : low;
  }
  return bytes;
}

/**
 * The bit of the register as it travels that holds bit `bit` of a `bit` tag: the decoder swaps
 * the two bytes of the word first for BADC and DCBA, so the same bit sits 8 places away there.
 */
export function wireBit(bit: number, order: ByteOrder): number {
  return order === 'BADC' || order === 'DCBA' ? (bit + 8) % 16 : bit;
}
