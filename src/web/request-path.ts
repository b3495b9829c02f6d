/**
 * Turns the path of a request for a static file into plain file-name segments, refusing
 * whatever could name something other than a file below the served folder: dot segments
 * (`..`, `.`, also percent-encoded as `%2e%2e`), separators inside a segment (`%2f`, `%5c`),
 * backslashes, NUL and other control characters, and percent-encoding that does not decode.
 */

/** Most segments a static path may have; deeper trees are refused. */
export const maxPathSegments = 32;

/** A static path as segments, or why it was refused. */
export type ParsedPath =
  | {
      ok: true;
      /** Decoded segments; the last is '' when the path ends with '/'. */
      segments: string[];
    }
  | { ok: false; reason: string };

/**
 * Splits a raw request path (as received: not decoded, no query) into decoded segments.
 * `'/andon/css/site.css'` → `['andon', 'css', 'site.css']`; `'/andon/'` → `['andon', '']`.
 * A refused path gets the reason, for a 400 answer.
 */
export function parseRequestPath(rawPath: string): ParsedPath {
  if (!rawPath.startsWith('/')) return { ok: false, reason: 'The path must start with /.' };
  // A backslash is a separator to some clients and file systems: never part of a name here.
  if (rawPath.includes('\\')) return { ok: false, reason: 'The path holds a backslash.' };
  const raw = rawPath.slice(1).split('/');
  if (raw.length > maxPathSegments) {
    return { ok: false, reason: `The path has more than ${maxPathSegments} segments.` };
  }
  const segments: string[] = [];
  for (const [index, part] of raw.entries()) {
    let segment: string;
    try {
      segment = decodeURIComponent(part);
    } catch {
      return { ok: false, reason: 'The path holds percent-encoding that does not decode.' };
    }
    // An empty segment only at the end ('/andon/'): '//' inside would be ambiguous.
    if (segment === '' && index < raw.length - 1) {
      return { ok: false, reason: 'The path holds an empty segment.' };
    }
    if (segment === '.' || segment === '..') {
      return { ok: false, reason: 'The path holds a dot segment (. or ..).' };
    }
    if (segment.includes('/') || segment.includes('\\')) {
      return { ok: false, reason: 'A path segment holds an encoded separator.' };
    }
    // NUL ends a name in the C library; the other controls have no place in a file name here.
    if (hasControlCharacter(segment)) {
      return { ok: false, reason: 'The path holds a control character.' };
    }
    segments.push(segment);
  }
  return { ok: true, segments };
}

/**
 * Builds a path from decoded segments, percent-encoding each: for a Location header that names
 * exactly the file the segments name.
 */
export function formatRequestPath(segments: readonly string[]): string {
  return `/${segments.map((segment) => encodeURIComponent(segment)).join('/')}`;
}

function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
