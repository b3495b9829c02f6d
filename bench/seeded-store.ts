/** The TagStore a benchmark starts from: every tag present, Good, before anything is timed. */
import { pino } from 'pino';
import { type Clock, systemClock } from '../src/clock.js';
import { TagStore } from '../src/tags/tag-store.js';

/**
 * A TagStore on `clock` (default: the system clock; a silent logger) holding each of `tagIds`,
 * Good, at `value(index)`, stamped the clock's now.
 */
export function seededStore(
  tagIds: readonly string[],
  value: (index: number) => number,
  clock: Clock = systemClock,
): TagStore {
  const store = new TagStore({ clock, logger: pino({ level: 'silent' }) });
  const stamp = new Date(clock.now()).toISOString();
  store.write(
    tagIds.map((fullTagId, i) => ({
      fullTagId,
      utcTimestamp: stamp,
      quality: 'Good',
      value: value(i),
    })),
  );
  return store;
}
