/**
 * The first pass over an expression's text, before jsep sees it: every character outside a
 * string literal must belong to the language (ASCII names, numbers, the listed operators,
 * parentheses, commas, tag references in braces), and the limits that bound jsep's recursion
 * (length, parenthesis depth, prefix-operator runs, conditionals) hold. Whatever is refused is
 * refused here with its position and a sentence saying what to write instead, so hostile text
 * (a prototype path, unicode look-alikes, bidirectional overrides, 100,000 characters) never
 * reaches the parser.
 *
 * The literal readers are shared with the jsep hooks (jsep-grammar.ts), so numbers, strings and
 * tag references are read by one piece of code, the one that checks their bounds.
 */
import { tagPathProblem } from '../tags/tag-path.js';
import { ExpressionFault } from './expression-problem.js';
import { expressionLimits } from './limits.js';

/** A literal read from the text, and where it ends. */
export interface ReadLiteral<T> {
  value: T;
  /** Offset just past the literal. */
  end: number;
}

const isDigit = (code: number) => code >= 48 && code <= 57;
const isNameStart = (code: number) =>
  (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
const isNamePart = (code: number) => isNameStart(code) || isDigit(code);

/** Operators of the language. */
const operators = [
  '**',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '+',
  '-',
  '*',
  '/',
  '%',
  '<',
  '>',
  '!',
  '?',
  ':',
  '(',
  ')',
  ',',
];

/** Look-alikes of other languages, refused with what to write instead. */
const refusedOperators: [string, string, string?][] = [
  ['===', "'===' is not an operator here", "'=='"],
  ['!==', "'!==' is not an operator here", "'!='"],
  ['>>>', 'Bit shifts are functions here', 'shr(x, n)'],
  ['<<', 'Bit shifts are functions here', 'shl(x, n)'],
  ['>>', 'Bit shifts are functions here', 'shr(x, n)'],
  ['??', "'??' is not an operator here", 'coalesce(a, b)'],
  ['?.', 'Property access is not part of the expression language'],
  ['=', 'Assignment is not part of the expression language', "'==' to compare"],
  ['&', "Bitwise '&' is a function here", 'bitAnd(a, b)'],
  ['|', "Bitwise '|' is a function here", 'bitOr(a, b)'],
  ['^', "Bitwise '^' is a function here", 'bitXor(a, b)'],
  ['~', "'~' is not an operator here", 'bitXor(x, 0xFFFF) for a 16-bit complement'],
  ['.', 'Property access is not part of the expression language'],
  ['[', 'Arrays and indexing are not part of the expression language'],
  [']', 'Arrays and indexing are not part of the expression language'],
  [';', 'An expression is one formula: no statements or semicolons'],
  ['}', "A '}' closes a tag reference that was not opened", "'{' before the tag path"],
];

/**
 * The operator at `index`, the longest that matches (`==` over `=`, `<<` over `<`).
 * @throws ExpressionFault when it is one of {@link refusedOperators}.
 */
function operatorAt(text: string, index: number): string | undefined {
  for (let length = 3; length > 0; length--) {
    const candidate = text.slice(index, index + length);
    if (candidate.length < length) continue;
    const refused = refusedOperators.find(([op]) => op === candidate);
    // `?.` is refused, but `a ?.5 : 1` is a conditional followed by a number.
    if (refused && !(candidate === '?.' && isDigit(text.charCodeAt(index + 2)))) {
      const [, message, instead] = refused;
      throw new ExpressionFault(index, `${message}.`, instead);
    }
    if (operators.includes(candidate)) return candidate;
  }
  return undefined;
}

/** Operators after which an operand is expected (so `-`, `+`, `!` there are prefix operators). */
const takesOperandAfter = new Set([...operators.filter((op) => op !== ')'), '']);

/**
 * Checks the whole text (see the module comment).
 * @throws ExpressionFault at the first character or limit that is refused.
 */
export function scanExpression(text: string): void {
  const limits = expressionLimits;
  if (text.length > limits.maxLength) {
    throw new ExpressionFault(
      limits.maxLength,
      `The expression is longer than ${limits.maxLength} characters (${text.length}).`,
    );
  }
  let index = 0;
  let depth = 0;
  let prefixRun = 0;
  let conditionals = 0;
  let previous = '';
  let sawToken = false;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code === 32 || code === 9 || code === 10 || code === 13) {
      index++;
      continue;
    }
    sawToken = true;
    if (isDigit(code) || (code === 46 && isDigit(text.charCodeAt(index + 1)))) {
      index = readNumber(text, index).end;
      previous = 'operand';
      prefixRun = 0;
      continue;
    }
    if (code === 34 || code === 39) {
      index = readString(text, index).end;
      previous = 'operand';
      prefixRun = 0;
      continue;
    }
    if (code === 123) {
      index = readReference(text, index, undefined, false).end;
      previous = 'operand';
      prefixRun = 0;
      continue;
    }
    if (isNameStart(code)) {
      let end = index + 1;
      while (end < text.length && isNamePart(text.charCodeAt(end))) end++;
      if (end - index > 64)
        throw new ExpressionFault(index, 'A name is longer than 64 characters.');
      index = end;
      previous = 'operand';
      prefixRun = 0;
      continue;
    }
    const op = operatorAt(text, index);
    if (op === undefined) throw new ExpressionFault(index, describeStray(text, index));
    if (takesOperandAfter.has(previous) && (op === '-' || op === '+' || op === '!')) {
      if (++prefixRun > limits.maxPrefixRun) {
        throw new ExpressionFault(
          index,
          `More than ${limits.maxPrefixRun} prefix operators in a row.`,
        );
      }
    } else prefixRun = 0;
    if (op === '(') {
      if (++depth > limits.maxParentheses) {
        throw new ExpressionFault(
          index,
          `Parentheses nest deeper than ${limits.maxParentheses} levels.`,
        );
      }
    } else if (op === ')') {
      if (--depth < 0) throw new ExpressionFault(index, "A ')' closes nothing.", 'an operator');
    } else if (op === '?') {
      if (++conditionals > limits.maxConditionals) {
        throw new ExpressionFault(index, `More than ${limits.maxConditionals} '? :' conditionals.`);
      }
    }
    previous = op;
    index += op.length;
  }
  if (!sawToken) throw new ExpressionFault(0, 'The expression is empty.', 'an expression');
}

// A character that is no part of the language, named so that invisible ones can be found.
function describeStray(text: string, index: number): string {
  const point = text.codePointAt(index) as number;
  const hex = `U+${point.toString(16).toUpperCase().padStart(4, '0')}`;
  if (point < 32 || point === 127) return `Control character ${hex} is not allowed.`;
  if (point > 127) {
    return `Character ${hex} is not allowed outside a string literal: names and operators are ASCII.`;
  }
  return `Character '${String.fromCodePoint(point)}' is not part of the expression language.`;
}

/**
 * Reads a number literal at `index`: decimal (`12`, `1.5`, `.5`, `2e-3`), hexadecimal (`0x1F`)
 * or binary (`0b1010`); hexadecimal and binary up to 2^53 − 1.
 * @throws ExpressionFault for a malformed, overlong or non-finite literal.
 */
export function readNumber(text: string, index: number): ReadLiteral<number> {
  const limits = expressionLimits;
  let end = index;
  let value: number;
  const prefix = text.slice(index, index + 2).toLowerCase();
  if (prefix === '0x' || prefix === '0b') {
    const digits = prefix === '0x' ? /[0-9a-fA-F]/ : /[01]/;
    end += 2;
    while (end < text.length && digits.test(text.charAt(end))) end++;
    if (end === index + 2) {
      throw new ExpressionFault(
        end,
        `'${text.slice(index, end)}' needs digits.`,
        prefix === '0x' ? 'hexadecimal digits' : 'binary digits',
      );
    }
    value = Number(text.slice(index, end));
    if (!Number.isSafeInteger(value)) {
      throw new ExpressionFault(index, 'The number is larger than 2^53 − 1.');
    }
  } else {
    while (isDigit(text.charCodeAt(end))) end++;
    if (text.charCodeAt(end) === 46) {
      end++;
      while (isDigit(text.charCodeAt(end))) end++;
    }
    const e = text.charCodeAt(end);
    if (e === 101 || e === 69) {
      end++;
      const sign = text.charCodeAt(end);
      if (sign === 43 || sign === 45) end++;
      const digitsStart = end;
      while (isDigit(text.charCodeAt(end))) end++;
      if (end === digitsStart) {
        throw new ExpressionFault(end, 'The exponent of the number has no digits.', 'digits');
      }
    }
    value = Number(text.slice(index, end));
  }
  if (end - index > limits.maxNumberLength) {
    throw new ExpressionFault(
      index,
      `The number is longer than ${limits.maxNumberLength} characters.`,
    );
  }
  const next = text.charCodeAt(end);
  if (isNamePart(next) || next === 46) {
    throw new ExpressionFault(
      end,
      `A number cannot be followed by '${text.charAt(end)}'.`,
      'an operator',
    );
  }
  if (!Number.isFinite(value)) {
    throw new ExpressionFault(index, 'The number is too large (beyond ±1.8e308).');
  }
  return { value, end };
}

const escapes: Record<string, string> = {
  '\\': '\\',
  '"': '"',
  "'": "'",
  n: '\n',
  t: '\t',
  r: '\r',
};

/**
 * Reads a string literal in single or double quotes; escapes `\\ \" \' \n \t \r`. Control and
 * invisible formatting characters (bidirectional overrides, zero-width joiners) and unpaired
 * surrogates are refused, so what a reviewer reads is what runs.
 * @throws ExpressionFault for an unclosed, overlong or disallowed string.
 */
export function readString(text: string, index: number): ReadLiteral<string> {
  const quote = text.charAt(index);
  let value = '';
  let length = 0;
  let at = index + 1;
  while (at < text.length) {
    const char = text.charAt(at);
    if (char === quote) {
      return { value, end: at + 1 };
    }
    if (char === '\\') {
      const escaped = escapes[text.charAt(at + 1)];
      if (escaped === undefined) {
        throw new ExpressionFault(
          at,
          `Unknown escape '\\${text.charAt(at + 1)}' in a string.`,
          '\\\\, \\", \\\', \\n, \\t or \\r',
        );
      }
      value += escaped;
      at += 2;
    } else {
      const point = text.codePointAt(at) as number;
      const width = point > 0xffff ? 2 : 1;
      const character = text.slice(at, at + width);
      if (point === 10 || point === 13) {
        throw new ExpressionFault(at, 'A string cannot span lines: write \\n.', `${quote}`);
      }
      if (
        point < 32 ||
        point === 127 ||
        /\p{Cf}|\p{Cs}|\p{Co}|\p{Zl}|\p{Zp}/u.test(character) ||
        (point >= 0x80 && point <= 0x9f)
      ) {
        throw new ExpressionFault(
          at,
          `Invisible or control character U+${point.toString(16).toUpperCase().padStart(4, '0')} is not allowed in a string.`,
        );
      }
      value += character;
      at += width;
    }
    if (++length > expressionLimits.maxStringLength) {
      throw new ExpressionFault(
        index,
        `The string is longer than ${expressionLimits.maxStringLength} characters.`,
      );
    }
  }
  throw new ExpressionFault(index, 'The string is not closed.', `a closing ${quote}`);
}

/**
 * Reads a tag reference `{Line1/Pump/Speed}` (Ignition's syntax); `{./Name}` is relative to the
 * component the expression belongs to (a derived tag's own driver). Spaces inside the braces
 * are ignored.
 * @param component the component relative references resolve against; undefined while only
 *   scanning, or where the expression belongs to no component (then they are refused when
 *   `resolve` is true).
 * @throws ExpressionFault for an unclosed, empty or invalid path.
 */
export function readReference(
  text: string,
  index: number,
  component: string | undefined,
  resolve: boolean,
): ReadLiteral<string> {
  let end = index + 1;
  while (end < text.length && text.charAt(end) !== '}' && text.charAt(end) !== '{') {
    const code = text.charCodeAt(end);
    if (code === 10 || code === 13) break;
    end++;
  }
  if (text.charAt(end) !== '}') {
    throw new ExpressionFault(index, 'The tag reference is not closed.', "'}'");
  }
  const written = text.slice(index + 1, end).trim();
  if (written === '') {
    throw new ExpressionFault(
      index,
      'The tag reference is empty.',
      'a tag path such as {Line1/Flow}',
    );
  }
  let path = written;
  if (written.startsWith('./')) {
    if (resolve && component === undefined) {
      throw new ExpressionFault(
        index,
        `'{${written}}' is relative to a derived tag's driver, and this expression belongs to none.`,
        'a full tag path',
      );
    }
    path = `${component ?? 'component'}/${written.slice(2)}`;
  }
  const problem = tagPathProblem(path);
  if (problem !== undefined) {
    throw new ExpressionFault(
      index,
      `Invalid tag reference {${written.slice(0, 300)}}: ${problem}.`,
      'a tag path of segments of letters, digits and _ . : - joined by /',
    );
  }
  return { value: path, end: end + 1 };
}
