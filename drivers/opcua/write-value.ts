/**
 * From a client's value to an OPC UA Variant of the node's own DataType, for the Write service.
 * The DataType is the node's (read once, cached by the driver): a server does not convert, and
 * answers BadTypeMismatch to a Double written to an Int32. Integers are range-checked here,
 * before anything is sent; Int64 and UInt64 at or beyond ±2^53 come as decimal strings, and a
 * JSON number that does not name its integer exactly is refused (see written-integer.ts).
 * DateTime values are ISO 8601 texts read exactly (iso-date-time.ts).
 */
import { DataType, type NodeId, Variant, VariantArrayType } from 'node-opcua';
import type { WriteValue } from '../driver.js';
import { writtenInteger } from '../written-integer.js';
import { parseIsoDateTime } from './iso-date-time.js';

const integerRanges: Partial<Record<DataType, [bigint, bigint]>> = {
  [DataType.SByte]: [-128n, 127n],
  [DataType.Byte]: [0n, 255n],
  [DataType.Int16]: [-32_768n, 32_767n],
  [DataType.UInt16]: [0n, 65_535n],
  [DataType.Int32]: [-(2n ** 31n), 2n ** 31n - 1n],
  [DataType.UInt32]: [0n, 2n ** 32n - 1n],
  [DataType.Int64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [DataType.UInt64]: [0n, 2n ** 64n - 1n],
};

/** Standard subtypes written as their base type (namespace 0 NodeIds). */
const subtypes: Record<number, DataType> = {
  290: DataType.Double, // Duration
  294: DataType.DateTime, // UtcTime
  295: DataType.String, // LocaleId
  12878: DataType.String, // NormalizedString
  12879: DataType.String, // DecimalString
  12880: DataType.String, // DurationString
  12881: DataType.String, // TimeString
  12882: DataType.String, // DateString
  288: DataType.UInt32, // IntegerId
  289: DataType.UInt32, // Counter
  29: DataType.Int32, // Enumeration
};

/** The built-in type tagd writes for a node's DataType NodeId, or undefined when it cannot. */
export function writableDataType(dataTypeId: NodeId): DataType | undefined {
  if (dataTypeId.namespace !== 0 || typeof dataTypeId.value !== 'number') return undefined;
  const id = dataTypeId.value;
  if (subtypes[id] !== undefined) return subtypes[id];
  if (integerRanges[id as DataType] !== undefined) return id as DataType;
  if (id === DataType.Boolean || id === DataType.Float || id === DataType.Double) return id;
  if (id === DataType.String || id === DataType.DateTime) return id;
  return undefined;
}

/** The name of a DataType, for messages. */
export function dataTypeName(type: DataType): string {
  return DataType[type] ?? String(type);
}

/** Largest finite Float. */
const floatMax = 3.4028234663852886e38;

/**
 * The Variant that writes `value` to a node of type `type`, or a message saying why the value
 * does not fit (the JSON type, the range, a number that is not the integer written, a date that
 * is not ISO 8601 or not within OPC UA's range).
 * @param numberText a number `value` as the client spelt it (its JSON text), when known.
 */
export function writeVariant(
  type: DataType,
  value: WriteValue,
  numberText?: string,
): Variant | string {
  const name = dataTypeName(type);
  switch (type) {
    case DataType.Boolean:
      return typeof value === 'boolean'
        ? scalar(type, value)
        : `must be true or false (the node is ${name})`;
    case DataType.String:
      return typeof value === 'string'
        ? scalar(type, value)
        : `must be a string (the node is ${name})`;
    case DataType.DateTime: {
      const date =
        typeof value === 'string'
          ? parseIsoDateTime(value)
          : 'must be an ISO 8601 date and time, e.g. 2026-01-02T03:04:05Z';
      return typeof date === 'string' ? `${date} (the node is ${name})` : scalar(type, date);
    }
    case DataType.Float:
    case DataType.Double:
      if (typeof value !== 'number') return `must be a number (the node is ${name})`;
      if (type === DataType.Float && Math.abs(value) > floatMax)
        return `is beyond the range of Float`;
      return scalar(type, value);
  }
  const range = integerRanges[type];
  if (range === undefined) return `cannot be written: tagd does not write ${name} nodes`;
  let integer: bigint;
  const sixtyFour = type === DataType.Int64 || type === DataType.UInt64;
  if (typeof value === 'number') {
    const written = writtenInteger(value, numberText);
    if (written === 'fraction') return `must be a whole number (the node is ${name})`;
    if (written === 'inexact')
      return sixtyFour
        ? 'is at or beyond ±2^53, where a JSON number cannot name every integer: send it as a decimal string'
        : `is outside the range of ${name} (${range[0]} to ${range[1]})`;
    integer = written;
  } else if (typeof value === 'string' && sixtyFour && /^-?\d{1,20}$/.test(value))
    integer = BigInt(value);
  else return `must be a whole number (the node is ${name})`;
  if (integer < range[0] || integer > range[1])
    return `is outside the range of ${name} (${range[0]} to ${range[1]})`;
  if (sixtyFour) {
    // node-opcua carries 64-bit integers as [high, low] 32-bit words, two's complement.
    const bits = BigInt.asUintN(64, integer);
    return scalar(type, [Number(bits >> 32n), Number(bits & 0xffff_ffffn)]);
  }
  return scalar(type, Number(integer));
}

/** A scalar Variant (node-opcua cannot tell a 64-bit [high, low] pair from an array by itself). */
function scalar(dataType: DataType, value: unknown): Variant {
  return new Variant({ dataType, arrayType: VariantArrayType.Scalar, value });
}
