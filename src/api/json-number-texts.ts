/**
 * The numbers of a JSON body as the client spelt them. JSON.parse turns every number into the
 * nearest double before any check can see it (`9007199254740993` becomes 9007199254740992,
 * `1.0000000000000001` becomes 1), and Node 20's JSON.parse cannot hand out a number's source
 * text (V8 11.3 has no `context.source` in revivers). A check that must know whether a value
 * was rounded on the way reads its text here.
 */

/**
 * Parses `text` (valid JSON: the body parser has read it already) with every number replaced by
 * the string of its source text: `{"value":1e3}` gives `{ value: "1e3" }`. Strings stay strings
 * (a number's place is told by the ordinary parse: where it holds a number, this holds its text).
 * @throws SyntaxError when `text` is not JSON.
 */
export function parseWithNumberTexts(text: string): unknown {
  const parts: string[] = [];
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === quote) {
      // Skip the string: up to the next quote that no backslash escapes.
      i++;
      while (i < text.length) {
        const inner = text.charCodeAt(i);
        if (inner === backslash) i += 2;
        else if (inner === quote) break;
        else i++;
      }
      i++;
    } else if (code === minus || (code >= zero && code <= nine)) {
      // A number (outside strings only a number holds a digit or a minus sign): its characters
      // run to the next delimiter.
      const start = i;
      while (i < text.length && numberCharacter(text.charCodeAt(i))) i++;
      parts.push(text.slice(copied, start), '"', text.slice(start, i), '"');
      copied = i;
    } else i++;
  }
  parts.push(text.slice(copied));
  return JSON.parse(parts.join(''));
}

const quote = 0x22;
const backslash = 0x5c;
const minus = 0x2d;
const zero = 0x30;
const nine = 0x39;

/** Digits, `.`, `e`, `E`, `+`, `-`: the characters of a JSON number. */
function numberCharacter(code: number): boolean {
  return (
    (code >= zero && code <= nine) ||
    code === 0x2e ||
    code === 0x65 ||
    code === 0x45 ||
    code === 0x2b ||
    code === minus
  );
}
