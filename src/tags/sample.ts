/**
 * The unit of tag data: one reading of one tag.
 */

/** How far a sample can be trusted. */
export type Quality = 'Good' | 'Stale' | 'Unavailable' | 'Bad';

/** Every quality, in the order the API documents them. */
export const qualities: readonly Quality[] = ['Good', 'Stale', 'Unavailable', 'Bad'];

/** Short machine-readable reason for a quality other than Good. */
export type QualityReason =
  | 'NeverRead'
  | 'Disconnected'
  | 'Timeout'
  | 'DeviceException'
  | 'DecodeError'
  | 'NoUpdate'
  /** A derived tag reads a tag that does not exist. */
  | 'NotFound'
  /** A derived tag's expression failed: division by zero, a non-finite result, a wrong type. */
  | 'Expression';

/** A tag's value: numbers, booleans and strings. Never NaN-free by contract: check before use. */
export type TagValue = number | boolean | string;

/** Descriptive data a driver attaches to a tag. */
export interface SampleMetadata {
  /** Engineering unit, e.g. `°C`, `bar`, `rpm`. */
  unit?: string;
  /** Free text shown to operators. */
  description?: string;
  /** Where the value comes from, e.g. `modbus:10.0.0.5:502/HR40001`. */
  source?: string;
  /**
   * Text form of the value: the label of an enumerated value (DBC VAL_), e.g. `Running`, or
   * the exact decimal of a 64-bit integer beyond ±2^53 whose `value` is the nearest double.
   */
  valueText?: string;
  /**
   * Browse answers only (the API adds it; drivers never set it): the tag may be written, its
   * driver allowing writes.
   */
  writable?: true;
  /** Browse answers only, with `writable`: least value a write may carry. */
  writeMin?: number;
  /** Browse answers only, with `writable`: greatest value a write may carry. */
  writeMax?: number;
}

/** The latest reading of one tag. */
export interface Sample {
  /** Path of the tag, `<component>/<segment>/…`. */
  fullTagId: string;
  /** When the value was read, ISO 8601 UTC with milliseconds. */
  utcTimestamp: string;
  quality: Quality;
  /** Absent for Unavailable and Bad; Stale keeps the last value. */
  value?: TagValue;
  reason?: QualityReason;
  /** Human-readable explanation of the reason. */
  message?: string;
  metadata?: SampleMetadata;
}
