import type { Clock } from '../../src/clock.js';
import type { Quality, Sample, TagValue } from '../../src/tags/sample.js';

/**
 * A sample of `fullTagId` stamped with `clock`'s now (ISO 8601), as a driver would write it:
 * Good unless told otherwise, and without a value when `value` is undefined (a Bad sample).
 */
export function sample(
  clock: Clock,
  fullTagId: string,
  value: TagValue | undefined,
  quality: Quality = 'Good',
): Sample {
  const base = { fullTagId, utcTimestamp: new Date(clock.now()).toISOString(), quality };
  return value === undefined ? base : { ...base, value };
}
