/**
 * Paged browsing of the store: the tags a pattern matches, ordered by path, a page at a time.
 * A page starts after a path (the last one of the previous page), not at an offset, so tags
 * that appear between two requests shift nothing: no tag is skipped or repeated.
 */
import type { Sample } from './sample.js';
import type { TagStore } from './tag-store.js';

/** A page of samples. */
export interface TagPage {
  /** At most `limit` samples, ordered by path. */
  samples: Sample[];
  /** The path to continue after, when more tags match; undefined on the last page. */
  nextAfter: string | undefined;
}

/**
 * Order of paths: by UTF-16 code unit (plain string comparison), which is stable across
 * locales and runtimes. Tag path characters are ASCII (`[A-Za-z0-9_.:-]` and `/`).
 */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * One page of the tags `pattern` matches, after `after` (exclusive).
 * @param pattern a tag path or pattern (`*` one segment, `**` any depth).
 * @param limit most samples on the page, at least 1.
 * @throws InvalidTagPathError for an invalid pattern.
 */
export function browseTags(
  store: TagStore,
  pattern: string,
  limit: number,
  after: string | undefined,
): TagPage {
  const ids = store.match(pattern);
  const following = after === undefined ? ids : ids.filter((id) => id > after);
  following.sort(comparePaths);
  const page = following.slice(0, limit);
  const samples: Sample[] = [];
  for (const id of page) {
    const sample = store.get(id);
    if (sample) samples.push(sample);
  }
  const last = page[page.length - 1];
  return { samples, nextAfter: following.length > limit ? last : undefined };
}
