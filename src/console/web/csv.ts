/**
 * CSV for spreadsheets, as the gateway writes its own (the alarm journal): RFC 4180, one header
 * line, CRLF line ends, fields quoted when they hold a comma, quote or line break; a text field a
 * spreadsheet would run as a formula (starting with = + - @, tab or carriage return) gets a
 * leading apostrophe (OWASP "CSV injection": a tag description or string value must not become
 * a formula on someone's desktop). Numbers and booleans are written as they are.
 */
import type { Quality, Sample } from './api-types.js';
import { dataTypeOf, driverOf } from './tag-table-rows.js';

/** A CSV field's content. */
export type CsvValue = string | number | bigint | boolean | undefined | null;

/** One CSV field: a number or boolean as written, text escaped, nothing as an empty field. */
export function csvField(field: CsvValue): string {
  if (field === undefined || field === null) return '';
  if (typeof field === 'number') return Number.isFinite(field) ? String(field) : '';
  if (typeof field === 'bigint' || typeof field === 'boolean') return String(field);
  const safe = /^[=+\-@\t\r]/.test(field) ? `'${field}` : field;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** CSV text of a header and rows, CRLF after every line. */
export function csvText(header: readonly string[], rows: readonly (readonly CsvValue[])[]): string {
  const lines = [header.map(csvField).join(',')];
  for (const row of rows) lines.push(row.map(csvField).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** Columns of {@link currentValuesCsv}. */
export const currentValueColumns = [
  'path',
  'value',
  'label',
  'unit',
  'quality',
  'timestamp',
  'dataType',
  'driver',
  'address',
  'description',
  'reason',
] as const;

/**
 * A sample's value for the CSV: as the tag holds it, except a 64-bit integer beyond ±2^53, whose
 * exact decimal (`valueText`) is written instead of the nearest double, so no digit is wrong.
 */
export function exactValue(sample: Pick<Sample, 'value' | 'metadata'>): CsvValue {
  const text = sample.metadata?.valueText;
  if (typeof sample.value === 'number' && text !== undefined && /^-?\d{1,30}$/.test(text)) {
    return BigInt(text);
  }
  return sample.value;
}

/** A sample's label: the text of an enumerated value (DBC VAL_), not an exact decimal. */
function labelOf(sample: Pick<Sample, 'metadata'>): string | undefined {
  const text = sample.metadata?.valueText;
  return text !== undefined && !/^-?\d{1,30}$/.test(text) ? text : undefined;
}

/**
 * The current values of tags as shown: one line per sample, the timestamp as ISO 8601 UTC, the
 * value as the tag holds it ({@link exactValue}) and an enumerated value's label beside it.
 */
export function currentValuesCsv(rows: readonly Sample[]): string {
  return csvText(
    currentValueColumns,
    rows.map((sample) => [
      sample.fullTagId,
      exactValue(sample),
      labelOf(sample),
      sample.metadata?.unit,
      sample.quality,
      sample.utcTimestamp,
      dataTypeOf(sample),
      driverOf(sample.fullTagId),
      sample.metadata?.source,
      sample.metadata?.description,
      sample.reason,
    ]),
  );
}

/** One logged point of a trend's export. */
export interface HistoryRow {
  /** ISO 8601 UTC. */
  utcTimestamp: string;
  path: string;
  value?: number | boolean | string;
  unit?: string;
  quality: Quality;
  /** What the value is: `raw`, or e.g. `avg 1m` (the average of the 1-minute window at `time`). */
  series: string;
}

/** A trend's history: `time,path,value,unit,quality,series`, by pen then time. */
export function historyCsv(rows: readonly HistoryRow[]): string {
  return csvText(
    ['time', 'path', 'value', 'unit', 'quality', 'series'],
    rows.map((row) => [row.utcTimestamp, row.path, row.value, row.unit, row.quality, row.series]),
  );
}
