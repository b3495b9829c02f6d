/**
 * Turns the bytes of a Modbus read answer into tag values. Registers travel big-endian, one
 * after the other; a device stores multi-register values in one of four byte orders, named by
 * where the bytes A (most significant) … D of a 32-bit value end up: ABCD big-endian, CDAB
 * word-swapped, BADC byte-swapped within each word, DCBA little-endian. The same rule extends to
 * 64-bit values (word order reversed for CDAB and DCBA, bytes swapped for BADC and DCBA).
 */

/** How a tag's registers are turned into a value. */
export type ModbusValueType =
  | 'bool'
  | 'bit'
  | 'int16'
  | 'uint16'
  | 'int32'
  | 'uint32'
  | 'int64'
  | 'uint64'
  | 'float32'
  | 'float64'
  | 'string';

/** Byte order of a multi-byte value, A = most significant byte. */
export type ByteOrder = 'ABCD' | 'CDAB' | 'BADC' | 'DCBA';

/**
 * Registers (or bits, for `bool`) a value occupies.
 * @param length registers of a string; ignored for the other types.
 */
export function registerCount(type: ModbusValueType, length = 1): number {
  switch (type) {
    case 'int32':
    case 'uint32':
    case 'float32':
      return 2;
    case 'int64':
    case 'uint64':
    case 'float64':
      return 4;
    case 'string':
      return length;
    default:
      return 1;
  }
}

// Scratch space for reordering: decoding is synchronous, one value at a time.
const scratch = new Uint8Array(8);
const view = new DataView(scratch.buffer);

/** Copies `registers` registers at `offset` of `data` into `scratch` in big-endian order. */
function reorder(data: Uint8Array, offset: number, registers: number, order: ByteOrder): void {
  const swapWords = order === 'CDAB' || order === 'DCBA';
  const swapBytes = order === 'BADC' || order === 'DCBA';
  for (let word = 0; word < registers; word++) {
    const from = offset + 2 * (swapWords ? registers - 1 - word : word);
    const high = data[from] as number;
    const low = data[from + 1] as number;
    scratch[2 * word] = swapBytes ? low : high;
    scratch[2 * word + 1] = swapBytes ? high : low;
  }
}

/**
 * Decodes a register value (every type but `bool`) starting at byte `offset` of `data`, the
 * data bytes of a read-registers answer. Numbers come back raw, before scale and offset;
 * 64-bit integers beyond 2^53 are rounded to the nearest double (see {@link exactInteger}).
 * @param bit bit of the register for `bit`, 0 = least significant.
 * @param length registers of a `string`.
 */
export function decodeRegisters(
  data: Uint8Array,
  offset: number,
  type: Exclude<ModbusValueType, 'bool'>,
  order: ByteOrder,
  bit = 0,
  length = 1,
): number | boolean | string {
  switch (type) {
    case 'uint16':
    case 'int16':
    case 'bit': {
      const high = data[offset] as number;
      const low = data[offset + 1] as number;
      const swap = order === 'BADC' || order === 'DCBA';
      const word = swap ? (low << 8) | high : (high << 8) | low;
      if (type === 'bit') return ((word >> bit) & 1) === 1;
      return type === 'int16' ? (word << 16) >> 16 : word;
    }
    case 'int32':
      reorder(data, offset, 2, order);
      return view.getInt32(0);
    case 'uint32':
      reorder(data, offset, 2, order);
      return view.getUint32(0);
    case 'float32':
      reorder(data, offset, 2, order);
      return view.getFloat32(0);
    case 'int64':
      reorder(data, offset, 4, order);
      return Number(view.getBigInt64(0));
    case 'uint64':
      reorder(data, offset, 4, order);
      return Number(view.getBigUint64(0));
    case 'float64':
      reorder(data, offset, 4, order);
      return view.getFloat64(0);
    case 'string':
      return decodeString(data, offset, length, order === 'BADC' || order === 'DCBA');
  }
}

/** 2^53: up to this magnitude every integer is a double; beyond it doubles skip integers. */
const exactLimit = 2n ** 53n;

/**
 * The exact decimal of an `int64` or `uint64` at byte `offset` of `data` when its magnitude
 * exceeds 2^53, so that {@link decodeRegisters} had to round it; undefined when the double is
 * exact. The driver reports it as `metadata.valueText` beside the rounded value.
 */
export function exactInteger(
  data: Uint8Array,
  offset: number,
  type: 'int64' | 'uint64',
  order: ByteOrder,
): string | undefined {
  reorder(data, offset, 4, order);
  const value = type === 'int64' ? view.getBigInt64(0) : view.getBigUint64(0);
  return value > exactLimit || value < -exactLimit ? value.toString() : undefined;
}

/** Two 8-bit characters per register (ISO 8859-1), cut at the first NUL. */
function decodeString(
  data: Uint8Array,
  offset: number,
  registers: number,
  lowFirst: boolean,
): string {
  let text = '';
  for (let i = 0; i < registers * 2; i++) {
    const index = offset + (lowFirst ? i ^ 1 : i);
    const code = data[index] as number;
    if (code === 0) break;
    text += String.fromCharCode(code);
  }
  return text;
}

/** Bit `index` of a read-bits answer's data (the first coil is the least significant bit). */
export function decodeBit(data: Uint8Array, index: number): boolean {
  return (((data[index >> 3] as number) >> (index & 7)) & 1) === 1;
}
