/**
 * The parts of an invalid profile that are valid on their own, so `tagd profile check` can run
 * the start-up checks (listeners, certificates, DBC files, broker files) on them and list their
 * problems in the same run as the schema errors: an engineer fixing a profile should see every
 * problem at once, not one layer after the other.
 *
 * A component with an error (a driver, collection, alarm, publisher or extension app) is left
 * out whole; an error elsewhere leaves out the smallest section holding it (`server.https`,
 * `history`, ...). What remains is validated again, a few rounds at most, since leaving one
 * part out can expose a reference to it.
 */
import type { FieldError } from '../errors.js';
import type { Profile } from './schema.js';
import { validateProfile } from './validate-profile.js';

/** The arrays whose elements are components left out one by one. */
const componentArrays = [
  'drivers',
  'collections',
  'alarms',
  'publishers.webhooks',
  'publishers.mqtt',
  'extensions.apps',
] as const;
type ComponentArray = (typeof componentArrays)[number];

/** Sections whose sub-sections are left out one by one rather than the section whole. */
const splitSections = new Set(['server', 'security', 'queries', 'publishers', 'extensions']);

/** Rounds of leaving out and validating again before giving up. */
const maxRounds = 5;

/** The valid remainder of a profile, with the way back to the document's own paths. */
export interface ValidParts {
  /** The remainder, validated, defaults applied. */
  profile: Profile;
  /** A path in {@link profile} as the same field's path in the original document. */
  originalPath(path: string): string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const indexPattern = new RegExp(
  `^(${componentArrays.map((key) => key.replace('.', '\\.')).join('|')})\\[(\\d+)\\]`,
);

function holderOf(root: Record<string, unknown>, keys: string[]): Record<string, unknown> | null {
  let holder: unknown = root;
  for (const key of keys) {
    if (!isRecord(holder)) return null;
    holder = holder[key];
  }
  return isRecord(holder) ? holder : null;
}

/**
 * The valid parts of `document`, given the errors its validation reported; undefined when the
 * document is not an object or nothing valid remains after a few rounds.
 */
export function validParts(
  document: unknown,
  errors: readonly FieldError[],
): ValidParts | undefined {
  if (!isRecord(document)) return undefined;
  const dropped = new Map<ComponentArray, Set<number>>(
    componentArrays.map((key) => [key, new Set<number>()]),
  );
  const leftOut = new Set<string>();
  let kept = new Map<ComponentArray, number[]>();

  const build = (): Record<string, unknown> => {
    const copy = structuredClone(document);
    kept = new Map();
    for (const key of leftOut) {
      const keys = key.split('.');
      const holder = holderOf(copy, keys.slice(0, -1));
      if (holder) delete holder[keys.at(-1) as string];
    }
    for (const key of componentArrays) {
      const keys = key.split('.');
      const holder = holderOf(copy, keys.slice(0, -1));
      const list = holder?.[keys.at(-1) as string];
      if (!holder || !Array.isArray(list)) continue;
      const indices = list
        .map((_, index) => index)
        .filter((index) => !dropped.get(key)?.has(index));
      kept.set(key, indices);
      holder[keys.at(-1) as string] = indices.map((index) => list[index]);
    }
    return copy;
  };

  // Marks the part holding the error at `path` (a path of the last built remainder) to be left
  // out; false when there is nothing smaller than the whole document to leave out.
  const leaveOut = (path: string): boolean => {
    const element = indexPattern.exec(path);
    if (element) {
      const key = element[1] as ComponentArray;
      const original = kept.get(key)?.[Number(element[2])];
      if (original === undefined) return false;
      const set = dropped.get(key) as Set<number>;
      if (set.has(original)) return false;
      set.add(original);
      return true;
    }
    const [first, second] = path.split(/[.[]/);
    if (first === undefined || first === '' || first === '(root)') return false;
    const key =
      splitSections.has(first) && second && !/^\d/.test(second) ? `${first}.${second}` : first;
    if (leftOut.has(key)) {
      if (key === first || leftOut.has(first)) return false;
      leftOut.add(first);
      return true;
    }
    leftOut.add(key);
    return true;
  };

  build(); // the identity: the first errors' paths are the document's own
  let pending = errors;
  for (let round = 0; round < maxRounds; round++) {
    let changed = false;
    for (const error of pending) changed = leaveOut(error.path) || changed;
    if (!changed) return undefined;
    const validation = validateProfile(build());
    if (validation.ok) {
      const map = new Map(kept);
      return {
        profile: validation.profile,
        originalPath: (path) =>
          path.replace(indexPattern, (whole, key: ComponentArray, index: string) => {
            const original = map.get(key)?.[Number(index)];
            return original === undefined ? whole : `${key}[${original}]`;
          }),
      };
    }
    pending = validation.errors;
  }
  return undefined;
}
