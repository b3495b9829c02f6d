import { InvalidTagPathError } from '../errors.js';
import { tagPathProblem } from './tag-path.js';

/** Tests whether a fullTagId matches a path or pattern. */
export type TagMatcher = (fullTagId: string) => boolean;

/** True when `source` uses a `*` or `**` segment rather than naming one tag. */
export function isPattern(source: string): boolean {
  return source.split('/').some((segment) => segment === '*' || segment === '**');
}

/**
 * Compiles a path or pattern into a matcher. `*` matches exactly one segment, `**` any number
 * of segments, zero included (`Line1/**` matches every tag below Line1, `a/**\/b` matches `a/b`).
 * A plain path matches only itself.
 * @throws InvalidTagPathError when the pattern breaks the path rules.
 */
export function compileTagPattern(source: string): TagMatcher {
  const problem = tagPathProblem(source, true);
  if (problem !== undefined) throw new InvalidTagPathError(source, problem);
  if (!isPattern(source)) return (fullTagId) => fullTagId === source;
  const pattern = source.split('/');
  return (fullTagId) => matchSegments(pattern, 0, fullTagId.split('/'), 0);
}

// Paths have at most 16 segments, so backtracking over `**` stays small.
function matchSegments(pattern: string[], p: number, path: string[], t: number): boolean {
  if (p === pattern.length) return t === path.length;
  const segment = pattern[p];
  if (segment === '**') {
    for (let next = t; next <= path.length; next++) {
      if (matchSegments(pattern, p + 1, path, next)) return true;
    }
    return false;
  }
  if (t === path.length) return false;
  if (segment !== '*' && segment !== path[t]) return false;
  return matchSegments(pattern, p + 1, path, t + 1);
}
