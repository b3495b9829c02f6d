/**
 * The size bounds of what a tool answers: a model's context is small and a plant's tag store is
 * not. Tools bound their rows themselves (each says how many in its description); this bounds
 * the bytes of any answer, whatever it holds.
 */

/** Most bytes of a tool's answer as JSON (UTF-8): 64 KiB. */
export const maxToolOutputBytes = 64 * 1024;
/** Longest string kept in an answer (a string tag's value, a message): 4,096 characters. */
export const maxToolStringLength = 4096;

/** A bounded answer. */
export interface BoundedOutput {
  /** The answer as JSON, at most {@link maxToolOutputBytes} bytes. */
  json: string;
  /** The answer itself (after bounding). */
  value: unknown;
  /** True when rows were left out or strings shortened to fit. */
  truncated: boolean;
}

/**
 * Bounds an answer: strings over {@link maxToolStringLength} are cut (ending in `…`), then,
 * while the JSON is over `maxBytes`, the last element of the longest array is dropped; an answer
 * cut so gets `truncated: true` (on the top-level object) so the model knows rows are missing.
 */
export function boundOutput(value: unknown, maxBytes = maxToolOutputBytes): BoundedOutput {
  const direct = JSON.stringify(value) ?? 'null';
  // A short answer holds no long string and fits (3 bytes per UTF-16 unit at most): no copy.
  if (direct.length <= maxToolStringLength && direct.length * 3 <= maxBytes) {
    return { json: direct, value, truncated: false };
  }
  let truncated = false;
  const shortened = mapStrings(value, (text) => {
    if (text.length <= maxToolStringLength) return text;
    truncated = true;
    return `${text.slice(0, maxToolStringLength)}…`;
  });
  let json = JSON.stringify(shortened) ?? 'null';
  if (Buffer.byteLength(json) <= maxBytes) {
    return { json, value: shortened, truncated };
  }
  const arrays = collectArrays(shortened);
  // Dropping rows by halves keeps the number of serializations logarithmic in the rows.
  while (Buffer.byteLength(json) > maxBytes) {
    const longest = arrays.reduce<unknown[] | undefined>(
      (best, array) => (best === undefined || array.length > best.length ? array : best),
      undefined,
    );
    if (longest === undefined || longest.length === 0) {
      const note = {
        truncated: true,
        note: 'The answer was too large to show; narrow the request.',
      };
      return { json: JSON.stringify(note), value: note, truncated: true };
    }
    const excess = Buffer.byteLength(json) - maxBytes;
    const perRow = Math.max(1, Buffer.byteLength(JSON.stringify(longest)) / longest.length);
    const drop = Math.min(longest.length, Math.max(1, Math.ceil(excess / perRow)));
    longest.splice(longest.length - drop, drop);
    truncated = true;
    if (isRecord(shortened)) shortened.truncated = true;
    json = JSON.stringify(shortened);
  }
  return { json, value: shortened, truncated };
}

function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (isRecord(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = mapStrings(item, map);
    return copy;
  }
  return value;
}

function collectArrays(value: unknown, found: unknown[][] = []): unknown[][] {
  if (Array.isArray(value)) {
    found.push(value);
    for (const item of value) collectArrays(item, found);
  } else if (isRecord(value)) {
    for (const item of Object.values(value)) collectArrays(item, found);
  }
  return found;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
