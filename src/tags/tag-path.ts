import { InvalidTagPathError } from '../errors.js';

/** Characters allowed in one path segment. */
export const segmentPattern = /^[A-Za-z0-9_.:-]+$/;
/** Most segments a fullTagId may have. */
export const maxSegments = 16;
/** Most characters a fullTagId may have. */
export const maxPathLength = 256;

/**
 * Checks a tag path (or, with `allowWildcards`, a pattern using `*` and `**` segments).
 * @returns the reason it is invalid, or undefined when it is valid.
 */
export function tagPathProblem(path: string, allowWildcards = false): string | undefined {
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
