import { InvalidTagPathError } from '../errors.js';

/** Characters allowed in one path segment (as a pattern source). */
const segmentChars = '[A-Za-z0-9_.:-]+';
/** Characters allowed in one path segment. */
export const segmentPattern = new RegExp(`^${segmentChars}$`);
/** Most segments a fullTagId may have. */
export const maxSegments = 16;
/** Most characters a fullTagId may have. */
export const maxPathLength = 256;

/** A whole valid fullTagId: 1 to {@link maxSegments} segments of {@link segmentPattern}. */
const validPath = new RegExp(`^${segmentChars}(?:/${segmentChars}){0,${maxSegments - 1}}$`);

/**
 * Checks a tag path (or, with `allowWildcards`, a pattern using `*` and `**` segments).
 * @returns the reason it is invalid, or undefined when it is valid.
 */
export function tagPathProblem(path: string, allowWildcards = false): string | undefined {
  // Every API read of a tag checks its path: one anchored test answers the common, valid case
  // without splitting; the loop below finds the reason otherwise.
  if (typeof path === 'string' && path.length <= maxPathLength && validPath.test(path)) {
    return undefined;
  }
  if (typeof path !== 'string' || path.length === 0) return 'the path is empty';
  if (path.length > maxPathLength) return `it is longer than ${maxPathLength} characters`;
  const segments = path.split('/');
  if (segments.length > maxSegments) return `it has more than ${maxSegments} segments`;
  for (const segment of segments) {
    if (segment === '') return 'it has an empty segment (leading, trailing or double slash)';
    if (allowWildcards && (segment === '*' || segment === '**')) continue;
    if (!segmentPattern.test(segment)) {
      return `segment '${segment}' may only hold letters, digits and _ . : -`;
    }
  }
  return undefined;
}

/** Throws InvalidTagPathError when `path` is not a valid fullTagId. */
export function assertTagPath(path: string): void {
  const problem = tagPathProblem(path);
  if (problem !== undefined) throw new InvalidTagPathError(path, problem);
}
