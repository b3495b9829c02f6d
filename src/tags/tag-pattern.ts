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
  // `**/**` means the same as `**`; collapsing keeps the search small.
  const pattern = source
    .split('/')
    .filter((segment, i, all) => !(segment === '**' && all[i - 1] === '**'));
  return (fullTagId) => matchSegments(pattern, 0, fullTagId.split('/'), 0, new Map());
}

// Memoised on (pattern position, path position): at most 17 × 17 states, so even a pattern
// of many `**` segments costs microseconds, never exponential backtracking.
function matchSegments(
  pattern: string[],
  p: number,
  path: string[],
  t: number,
  memo: Map<number, boolean>,
): boolean {
  const key = p * 32 + t;
  const known = memo.get(key);
  if (known !== undefined) return known;
  let result: boolean;
  if (p === pattern.length) result = t === path.length;
  else if (pattern[p] === '**') {
    result = false;
    for (let next = t; next <= path.length && !result; next++) {
      result = matchSegments(pattern, p + 1, path, next, memo);
    }
  } else if (t === path.length) result = false;
  else if (pattern[p] !== '*' && pattern[p] !== path[t]) result = false;
  else result = matchSegments(pattern, p + 1, path, t + 1, memo);
  memo.set(key, result);
  return result;
}
