/**
 * Sparkplug metric values as tag values, and back for the commands of a write:
 *
 * - Int8 to Int32, UInt8 to UInt32, Float and Double are numbers. Int64 and UInt64 are read
 *   exactly (as BigInt from the protobuf's two 32-bit halves): the value is the nearest double,
 *   and beyond ±2^53, where doubles skip integers, `metadata.valueText` holds the exact decimal,
 *   as the Modbus driver gives it.
 * - Boolean is a boolean; String, Text and UUID are strings; DateTime is its ISO 8601 UTC text.
 * - DataSet, Bytes, File, Template and the property-set types have no tag value: such metrics
 *   are left out (counted by the driver).
 * - The `Quality` property (OPC codes, as tagd's Sparkplug publisher and Ignition send it):
 *   192 and above Good; 64 to 191 Uncertain, which tagd calls Stale (the value is kept); below
 *   64 Bad. A null metric (`is_null`) has no value: Bad with a Quality below 64, Unavailable
 *   otherwise.
 * - Units and descriptions come from the metric's properties `engUnit` / `EngUnit` / `Units`
 *   and `Documentation` / `description` / `Description`.
 */
import type { Quality, TagValue } from '../../src/tags/sample.js';

/** Sparkplug data types that become tags. */
export const scalarTypes = [
  'Int8',
  'Int16',
  'Int32',
  'Int64',
  'UInt8',
  'UInt16',
  'UInt32',
  'UInt64',
  'Float',
  'Double',
  'Boolean',
  'String',
  'Text',
  'UUID',
  'DateTime',
] as const;

/** A Sparkplug type a tag can hold. */
export type ScalarType = (typeof scalarTypes)[number];

/** True for a type that becomes a tag. */
export function isScalarType(type: unknown): type is ScalarType {
  return typeof type === 'string' && (scalarTypes as readonly string[]).includes(type);
}

/** 2^53: up to this magnitude every integer is a double. */
const exactLimit = 2n ** 53n;

/** A value as a tag holds it, with the exact text of a 64-bit integer beyond ±2^53. */
export interface MetricValue {
  value: TagValue;
  valueText?: string;
}

/** A protobuf 64-bit integer as decoded: a `long` object of its two 32-bit halves. */
interface LongLike {
  low: number;
  high: number;
}

function isLongLike(value: unknown): value is LongLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as LongLike).low === 'number' &&
    typeof (value as LongLike).high === 'number'
  );
}

/** The 64 bits of a decoded integer, unsigned; undefined when it is no integer. */
function unsigned64(raw: unknown): bigint | undefined {
  if (isLongLike(raw)) return (BigInt(raw.high >>> 0) << 32n) | BigInt(raw.low >>> 0);
  if (typeof raw === 'number' && Number.isInteger(raw)) return BigInt.asUintN(64, BigInt(raw));
  if (typeof raw === 'bigint') return BigInt.asUintN(64, raw);
  return undefined;
}

function integerValue(exact: bigint): MetricValue {
  const value = Number(exact);
  return exact > exactLimit || exact < -exactLimit
    ? { value, valueText: exact.toString() }
    : { value };
}

/**
 * The tag value of a decoded metric value of `type`; undefined for a null value or one that
 * does not fit its type.
 */
export function metricValue(type: ScalarType, raw: unknown): MetricValue | undefined {
  if (raw === null || raw === undefined) return undefined;
  switch (type) {
    case 'Int8':
    case 'Int16':
    case 'Int32':
    case 'UInt8':
    case 'UInt16': {
      const bits = unsigned64(raw);
      if (bits === undefined) return undefined;
      const width = type === 'Int8' || type === 'UInt8' ? 8 : type.endsWith('16') ? 16 : 32;
      const exact = type.startsWith('U') ? BigInt.asUintN(width, bits) : BigInt.asIntN(width, bits);
      return { value: Number(exact) };
    }
    case 'UInt32': {
      const bits = unsigned64(raw);
      return bits === undefined ? undefined : { value: Number(BigInt.asUintN(32, bits)) };
    }
    case 'Int64': {
      const bits = unsigned64(raw);
      return bits === undefined ? undefined : integerValue(BigInt.asIntN(64, bits));
    }
    case 'UInt64': {
      const bits = unsigned64(raw);
      return bits === undefined ? undefined : integerValue(bits);
    }
    case 'Float':
    case 'Double':
      return typeof raw === 'number' ? { value: raw } : undefined;
    case 'Boolean':
      return typeof raw === 'boolean' ? { value: raw } : undefined;
    case 'String':
    case 'Text':
    case 'UUID':
      return typeof raw === 'string' ? { value: raw } : undefined;
    case 'DateTime': {
      const bits = unsigned64(raw);
      if (bits === undefined) return undefined;
      const date = new Date(Number(bits));
      return Number.isNaN(date.getTime()) ? undefined : { value: date.toISOString() };
    }
  }
}

/** A decoded epoch-ms timestamp (a number or a `long`), or undefined. */
export function epochMs(raw: unknown): number | undefined {
  const bits = unsigned64(raw);
  if (bits === undefined) return undefined;
  const ms = Number(bits);
  return Number.isFinite(ms) && ms > 0 && ms < 8.64e15 ? ms : undefined;
}

/** A decoded unsigned count (seq, bdSeq, an alias) up to 2^53, or undefined. */
export function unsignedCount(raw: unknown): number | undefined {
  const bits = unsigned64(raw);
  return bits === undefined || bits > exactLimit ? undefined : Number(bits);
}

/** The tag quality of an OPC quality code (see the module comment). */
export function qualityOfCode(code: number): Quality {
  if (code >= 192) return 'Good';
  if (code >= 64) return 'Stale';
  return 'Bad';
}

/** A decoded property set: name → { type, value }. */
export type PropertySet = Record<string, { type?: unknown; value?: unknown } | undefined>;

/** The number of the `Quality` property, or undefined when absent. */
export function qualityCode(properties: PropertySet | undefined): number | undefined {
  const raw = properties?.Quality?.value;
  if (typeof raw === 'number') return raw;
  if (isLongLike(raw)) return Number(BigInt.asIntN(32, unsigned64(raw) ?? 0n));
  return undefined;
}

function textProperty(properties: PropertySet | undefined, names: readonly string[]) {
  for (const name of names) {
    const value = properties?.[name]?.value;
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

/** The unit and description a metric's properties give, each cut to the store's limits. */
export function describedBy(properties: PropertySet | undefined): {
  unit?: string;
  description?: string;
} {
  const unit = textProperty(properties, ['engUnit', 'EngUnit', 'engUnits', 'Units', 'unit']);
  const description = textProperty(properties, [
    'Documentation',
    'description',
    'Description',
    'Tooltip',
  ]);
  return {
    ...(unit !== undefined ? { unit: unit.slice(0, 32) } : {}),
    ...(description !== undefined ? { description: description.slice(0, 256) } : {}),
  };
}

const integerRanges: Partial<Record<ScalarType, readonly [bigint, bigint]>> = {
  Int8: [-(2n ** 7n), 2n ** 7n - 1n],
  Int16: [-(2n ** 15n), 2n ** 15n - 1n],
  Int32: [-(2n ** 31n), 2n ** 31n - 1n],
  Int64: [-(2n ** 63n), 2n ** 63n - 1n],
  UInt8: [0n, 2n ** 8n - 1n],
  UInt16: [0n, 2n ** 16n - 1n],
  UInt32: [0n, 2n ** 32n - 1n],
  UInt64: [0n, 2n ** 64n - 1n],
};

/** The least and greatest integer of an integer type; undefined for the other types. */
export function integerRange(type: ScalarType): readonly [bigint, bigint] | undefined {
  return integerRanges[type];
}
