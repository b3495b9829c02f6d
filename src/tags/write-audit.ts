/**
 * The bounded parts of the tag-write audit lines that stand for a whole request rather than
 * one item (docs/api.md, "Writing tags", Audit): a request refused by the rate limit, or refused
 * before its items could be read (its body failed the request schema, or was no JSON at all).
 * Such a line names the request's first tags and problems, never its values, and stays a few
 * kilobytes whatever the client sent (a body may hold 256 KiB), so an account cannot fill the
 * audit log faster than its requests are answered.
 */
import type { FieldError } from '../errors.js';

/** Most tag ids named in one request line. */
export const auditedTagsMax = 10;
/** Most validation problems named in one request line. */
export const auditedErrorsMax = 10;
/** Longest text (a tag id, a path, a message) in a request line, characters. */
export const auditedTextMax = 200;

/** What a request line says about the items of a body it could read. */
export interface AuditedItems {
  /** Items in the request (`writes` as sent), when it is an array. */
  items?: number;
  /** The distinct tag ids of the first items, at most {@link auditedTagsMax}, each shortened. */
  fullTagIds?: string[];
  /** Distinct tag ids beyond those named. */
  moreTags?: number;
}

/**
 * The items of a write request body as sent (maybe not even an object): their number and the
 * first tag ids that are strings.
 */
export function auditedItems(body: unknown): AuditedItems {
  const writes = (body as { writes?: unknown } | null | undefined)?.writes;
  if (!Array.isArray(writes)) return {};
  const ids = new Set<string>();
  for (const item of writes) {
    const id = (item as { fullTagId?: unknown } | null | undefined)?.fullTagId;
    if (typeof id === 'string') ids.add(id);
  }
  return { items: writes.length, ...auditedTagIds(ids) };
}

/** At most {@link auditedTagsMax} distinct tag ids, shortened, with the count of the rest. */
export function auditedTagIds(
  ids: Iterable<string>,
): Pick<AuditedItems, 'fullTagIds' | 'moreTags'> {
  const distinct = [...new Set(ids)];
  if (distinct.length === 0) return {};
  return {
    fullTagIds: distinct.slice(0, auditedTagsMax).map(shortened),
    ...(distinct.length > auditedTagsMax ? { moreTags: distinct.length - auditedTagsMax } : {}),
  };
}

/** The first {@link auditedErrorsMax} validation problems, shortened, with the count of the rest. */
export function auditedErrors(errors: readonly FieldError[]): {
  errors: FieldError[];
  moreErrors?: number;
} {
  return {
    errors: errors
      .slice(0, auditedErrorsMax)
      .map(({ path, message }) => ({ path: shortened(path), message: shortened(message) })),
    ...(errors.length > auditedErrorsMax ? { moreErrors: errors.length - auditedErrorsMax } : {}),
  };
}

/** `text` cut to {@link auditedTextMax} characters, `…` marking a cut. */
export function shortened(text: string): string {
  return text.length <= auditedTextMax ? text : `${text.slice(0, auditedTextMax - 1)}…`;
}
