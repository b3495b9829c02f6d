/**
 * The value of a write as the metric of a DCMD or NCMD: checked against the metric's Sparkplug
 * type before anything is sent (booleans for Boolean, strings for the text types, whole numbers
 * within the type's range for the integer types, exact: a 64-bit integer beyond ±2^53 comes as
 * its decimal string), and encoded as Tahu's encoder wants it (64-bit integers as `long`).
 */
import type { TagValue } from '../../src/tags/sample.js';
import { decimalInteger, writtenInteger } from '../written-integer.js';
import { integerRange, type ScalarType } from './metric-values.js';

/** The exact integer a written value names, or why it names none. */
function integerOf(value: TagValue, numberText: string | undefined): bigint | string {
  if (typeof value === 'number') {
    const exact = writtenInteger(value, numberText);
    if (exact === 'fraction') return 'must be a whole number';
    if (exact === 'inexact')
      return 'is beyond ±2^53 as a JSON number, where it may not be the number written: send it as a decimal string';
    return exact;
  }
  if (typeof value === 'string') {
    const exact = /^-?\d{1,40}$/.test(value) ? decimalInteger(value) : undefined;
    if (typeof exact === 'bigint') return exact;
    return 'must be a whole number (or its decimal string)';
  }
  return 'must be a whole number';
}

/**
 * Why `value` cannot be written to a metric of `type`, or undefined when it can.
 * @param numberText a number's JSON text as the client sent it, when known.
 */
export function commandValueProblem(
  type: ScalarType,
  value: TagValue,
  numberText?: string,
): string | undefined {
  const range = integerRange(type);
  if (range !== undefined) {
    const exact = integerOf(value, numberText);
    if (typeof exact === 'string') return exact;
    if (exact < range[0] || exact > range[1])
      return `is outside the range of ${type} (${range[0]} to ${range[1]})`;
    return undefined;
  }
  switch (type) {
    case 'Float':
    case 'Double':
      return typeof value === 'number' ? undefined : 'must be a number';
    case 'Boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'String':
    case 'Text':
    case 'UUID':
      return typeof value !== 'string'
        ? 'must be a string'
        : value.length > 65_536
          ? 'must be at most 65,536 characters'
          : undefined;
    default:
      return `cannot be written: tagd does not write ${type} metrics`;
  }
}

/** A 64-bit integer as protobufjs encodes it: its two 32-bit halves. */
export interface LongBits {
  low: number;
  high: number;
  unsigned: true;
}

/**
 * The metric value Tahu encodes for a value that passed {@link commandValueProblem}: 64-bit
 * (and UInt32, a protobuf uint64 field) integers as their two halves, exact.
 */
export function commandValue(type: ScalarType, value: TagValue): TagValue | LongBits {
  if (integerRange(type) === undefined) return value;
  const exact = typeof value === 'string' ? (decimalInteger(value) as bigint) : BigInt(value);
  if (type === 'Int64' || type === 'UInt64' || type === 'UInt32') {
    const bits = BigInt.asUintN(64, exact);
    return {
      low: Number(bits & 0xffffffffn) | 0,
      high: Number(bits >> 32n) | 0,
      unsigned: true,
    };
  }
  return Number(exact);
}

/** Whether a confirmed value is the value written (numbers compared exactly for integers). */
export function sameValue(
  written: TagValue,
  confirmed: TagValue,
  confirmedText: string | undefined,
): boolean {
  if (typeof written === 'string' && typeof confirmed === 'number') {
    return /^-?\d+$/.test(written) && written === (confirmedText ?? String(confirmed));
  }
  if (typeof written === 'number' && typeof confirmed === 'number') {
    return confirmedText === undefined ? written === confirmed : false;
  }
  return Object.is(written, confirmed);
}
