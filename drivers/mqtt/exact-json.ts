/**
 * JSON parsing that keeps integers exact. JSON.parse rounds an integer beyond ±2^53 to the
 * nearest double (Node 20 has no access to the source text), so a 64-bit counter would arrive
 * wrong. This parser yields the same values as JSON.parse except that such an integer becomes a
 * {@link LargeInteger} carrying its digits. Nesting is bounded so a hostile payload cannot
 * exhaust the stack.
 */

/** An integer literal beyond ±2^53: its nearest double and its exact decimal text. */
export class LargeInteger {
  constructor(
    readonly value: number,
    readonly text: string,
  ) {}
}

/** A parsed JSON value. */
export type ExactJson =
  | null
  | boolean
  | number
  | string
  | LargeInteger
  | ExactJson[]
  | { [key: string]: ExactJson };

/** Deepest nesting of arrays and objects accepted. */
export const maxJsonDepth = 64;

/** Thrown for text that is not JSON; the message says where, never quotes the text. */
export class JsonSyntaxError extends Error {}

const numberPattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Parses `text` as JSON. @throws JsonSyntaxError when it is not JSON (or nests too deep). */
export function parseExactJson(text: string): ExactJson {
  let at = 0;
  const fail = (what: string): never => {
    throw new JsonSyntaxError(`${what} at character ${at + 1}`);
  };
  const space = () => {
    for (;;) {
      const c = text.charCodeAt(at);
      if (c === 32 || c === 9 || c === 10 || c === 13) at++;
      else return;
    }
  };
  const string = (): string => {
    // The JSON grammar of one string: JSON.parse checks the escapes and control characters.
    const start = at;
    at++;
    for (;;) {
      const c = text.charCodeAt(at);
      if (Number.isNaN(c)) fail('unterminated string');
      if (c === 34) break;
      at += c === 92 ? 2 : 1;
    }
    at++;
    try {
      return JSON.parse(text.slice(start, at)) as string;
    } catch {
      return fail('invalid string');
    }
  };
  const value = (depth: number): ExactJson => {
    space();
    const c = text[at];
    if (c === '{' || c === '[') {
      if (depth >= maxJsonDepth) fail(`nesting deeper than ${maxJsonDepth}`);
      at++;
      space();
      if (c === '[') {
        const items: ExactJson[] = [];
        if (text[at] === ']') {
          at++;
          return items;
        }
        for (;;) {
          items.push(value(depth + 1));
          space();
          if (text[at] === ',') at++;
          else if (text[at] === ']') {
            at++;
            return items;
          } else fail('expected , or ]');
        }
      }
      const object: { [key: string]: ExactJson } = {};
      if (text[at] === '}') {
        at++;
        return object;
      }
      for (;;) {
        space();
        if (text[at] !== '"') fail('expected a property name');
        const key = string();
        space();
        if (text[at] !== ':') fail('expected :');
        at++;
        // A data property even for "__proto__", as JSON.parse makes it.
        Object.defineProperty(object, key, {
          value: value(depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        space();
        if (text[at] === ',') at++;
        else if (text[at] === '}') {
          at++;
          return object;
        } else fail('expected , or }');
      }
    }
    if (c === '"') return string();
    if (text.startsWith('true', at)) {
      at += 4;
      return true;
    }
    if (text.startsWith('false', at)) {
      at += 5;
      return false;
    }
    if (text.startsWith('null', at)) {
      at += 4;
      return null;
    }
    numberPattern.lastIndex = at;
    const match = numberPattern.exec(text);
    if (match === null) return fail('unexpected character');
    const literal = match[0];
    at += literal.length;
    const number = Number(literal);
    if (!/[.eE]/.test(literal) && !Number.isSafeInteger(number)) {
      return new LargeInteger(number, BigInt(literal).toString());
    }
    return number;
  };
  const result = value(0);
  space();
  if (at < text.length) fail('unexpected text after the document');
  return result;
}
