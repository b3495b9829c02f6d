/**
 * JSON Pointers (RFC 6901): `/data/temperature`, `/readings/0/v`; `~1` stands for a `/` inside a
 * name and `~0` for a `~`; the empty pointer is the whole document. The paths of an MQTT
 * mapping (value, timestamp, quality) are written this way.
 */
import { type ExactJson, LargeInteger } from './exact-json.js';

/** What is wrong with a pointer, or undefined when it is valid. */
export function jsonPointerProblem(pointer: string): string | undefined {
  if (pointer !== '' && !pointer.startsWith('/'))
    return 'a JSON Pointer starts with / (e.g. /value), or is empty for the whole document';
  if (/~(?![01])/.test(pointer)) return '~ must be followed by 0 or 1 (~0 is ~, ~1 is /)';
  return undefined;
}

/** The reference tokens of a valid pointer, unescaped. */
export function parseJsonPointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The value at `tokens` in `document`, or undefined when nothing is there. */
export function resolveJsonPointer(
  document: ExactJson,
  tokens: readonly string[],
): ExactJson | undefined {
  let node: ExactJson | undefined = document;
  for (const token of tokens) {
    if (Array.isArray(node)) {
      if (!/^(?:0|[1-9]\d*)$/.test(token)) return undefined;
      node = node[Number(token)];
    } else if (
      node !== null &&
      typeof node === 'object' &&
      !(node instanceof LargeInteger) &&
      Object.hasOwn(node, token)
    ) {
      node = (node as { [key: string]: ExactJson })[token];
    } else return undefined;
  }
  return node;
}
