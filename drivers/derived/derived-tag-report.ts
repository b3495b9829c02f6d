/**
 * How a caller recognizes a derived-tag driver among the running ones without loading its module,
 * and what it tells about each of its tags (the report type lives in src/runtime/, for the API).
 */
import type { DerivedTagReport } from '../../src/runtime/derived-tag-report.js';
import type { Driver } from '../driver.js';

export type { DerivedEvaluation, DerivedTagReport } from '../../src/runtime/derived-tag-report.js';

/** A driver that computes derived tags. */
export interface DerivedTagSource extends Driver {
  /** Every tag of the driver, in profile order. */
  derivedTags(): DerivedTagReport[];
}

/** True when the driver computes derived tags. */
export function isDerivedTagSource(driver: Driver): driver is DerivedTagSource {
  return (
    driver.type === 'derived' &&
    typeof (driver as Partial<DerivedTagSource>).derivedTags === 'function'
  );
}
