/**
 * The rows of the tags table: which tags a search matches (path, unit and description), in
 * which order a column sorts them, and the columns the API does not name as fields (the driver
 * is a path's first segment, the data type the kind of the value the tag holds).
 */
import type { Quality, Sample } from './api-types.js';

/** A column the table sorts by. */
export type SortKey =
  | 'path'
  | 'value'
  | 'timestamp'
  | 'dataType'
  | 'unit'
  | 'quality'
  | 'driver'
  | 'address';

/** Ascending or descending. */
export type SortDirection = 'ascending' | 'descending';

/**
 * The kind of a tag's value: `Number`, `Boolean` or `Text`; empty while it holds no value (an
 * Unavailable or Bad tag). The API gives values as JSON, not the device's register type.
 */
export function dataTypeOf(sample: Pick<Sample, 'value'> | undefined): string {
  const value = sample?.value;
  if (typeof value === 'number') return 'Number';
  if (typeof value === 'boolean') return 'Boolean';
  if (typeof value === 'string') return 'Text';
  return '';
}

/** The driver of a tag: its path's first segment (`Demo` of `Demo/Line1/Temperature`). */
export function driverOf(path: string): string {
  const slash = path.indexOf('/');
  return slash < 0 ? path : path.slice(0, slash);
}

/**
 * Whether a tag matches a search: every word of it (case-insensitive) is found in the path,
 * the unit or the description. An empty search matches every tag.
 */
export function matchesSearch(path: string, sample: Sample | undefined, search: string): boolean {
  const words = search.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const text =
    `${path}\n${sample?.metadata?.unit ?? ''}\n${sample?.metadata?.description ?? ''}`.toLowerCase();
  return words.every((word) => text.includes(word));
}

// From best to worst, so that sorting by quality ascending puts the healthy first.
const qualityRank: Record<Quality, number> = { Good: 0, Stale: 1, Unavailable: 2, Bad: 3 };

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** The sortable key of a column: numbers compare as numbers, text by the locale; none last. */
function keyOf(
  path: string,
  sample: Sample | undefined,
  key: SortKey,
): number | string | undefined {
  switch (key) {
    case 'path':
      return path;
    case 'value': {
      const value = sample?.value;
      if (typeof value === 'boolean') return value ? 1 : 0;
      return value;
    }
    case 'timestamp': {
      const ms = Date.parse(sample?.utcTimestamp ?? '');
      return Number.isNaN(ms) ? undefined : ms;
    }
    case 'dataType':
      return dataTypeOf(sample) || undefined;
    case 'unit':
      return sample?.metadata?.unit;
    case 'quality':
      return sample ? qualityRank[sample.quality] : undefined;
    case 'driver':
      return driverOf(path);
    case 'address':
      return sample?.metadata?.source;
  }
}

function compareKeys(a: number | string | undefined, b: number | string | undefined): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  // Numbers before text where a column mixes them.
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return collator.compare(a, b);
}

/**
 * The paths matching `search`, sorted by `key` (ties by path). Tags without a value for the
 * column come last in either direction.
 */
export function tableRows(
  paths: readonly string[],
  samples: ReadonlyMap<string, Sample>,
  search: string,
  key: SortKey,
  direction: SortDirection,
): string[] {
  const sign = direction === 'ascending' ? 1 : -1;
  const rows = paths
    .filter((path) => matchesSearch(path, samples.get(path), search))
    .map((path) => ({ path, key: keyOf(path, samples.get(path), key) }));
  rows.sort((a, b) => {
    if (a.key === undefined || b.key === undefined) {
      if (a.key !== b.key) return a.key === undefined ? 1 : -1;
    } else {
      const order = compareKeys(a.key, b.key) * sign;
      if (order !== 0) return order;
    }
    return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
  });
  return rows.map((row) => row.path);
}
