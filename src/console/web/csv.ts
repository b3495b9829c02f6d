/**
 * CSV for spreadsheets, as the gateway writes its own (the alarm journal): RFC 4180, one header
 * line, CRLF line ends, fields quoted when they hold a comma, quote or line break; a text field a
 * spreadsheet would run as a formula (starting with = + - @, tab or carriage return) gets a
 * leading apostrophe (OWASP "CSV injection": a tag description or string value must not become
 * a formula on someone's desktop). Numbers and booleans are written as they are.
 */
import type { Quality, Sample } from './api-types.js';
import { dataTypeOf, driverOf } from './tag-table-rows.js';

/** One CSV field: a number or boolean as written, text escaped, nothing as an empty field. */
export function csvField(field: string | number | boolean | undefined | null): string {
  if (field === undefined || field === null) return '';
  if (typeof field === 'number') return Number.isFinite(field) ? String(field) : '';
  if (typeof field === 'boolean') return String(field);
  const safe = /^[=+\-@\t\r]/.test(field) ? `'${field}` : field;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** CSV text of a header and rows, CRLF after every line. */
export function csvText(
  header: readonly string[],
  rows: readonly (readonly (string | number | boolean | undefined | null)[])[],
): string {
  const lines = [header.map(csvField).join(',')];
  for (const row of rows) lines.push(row.map(csvField).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** Columns of {@link currentValuesCsv}. */
export const currentValueColumns = [
  'path',
  'value',
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
 * The current values of tags as shown: one line per sample, the timestamp as ISO 8601 UTC, the
 * value as the tag holds it (an enumeration's label in `value` only when the tag has no raw
 * value to give).
 */
export function currentValuesCsv(rows: readonly Sample[]): string {
  return csvText(
    currentValueColumns,
    rows.map((sample) => [
      sample.fullTagId,
      sample.value,
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
