/**
 * The one module that touches jsep, whose operator tables and hooks are global to the process:
 * it adds two hooks once, and they act only while {@link parseWithJsep} runs (parsing is
 * synchronous, so a session cannot interleave with another).
 *
 * - `gobble-token` reads numbers, strings and `{tag/path}` references with the readers of
 *   scan.ts (one reader, one set of bounds), so jsep's own lenient literal parsing (`\q` read as
 *   `q`, `0x` read as a name) never runs, and tag references become `TagReference` nodes.
 * - `after-token` records where each token starts, so later errors point at the user's text, and
 *   marks parenthesized nodes (`(-2) ** 2` is allowed, `-2 ** 2` is ambiguous and refused).
 *
 * jsep's operator tables are left as they are: the scanner refuses the operators the language
 * lacks before jsep runs, with a message saying what to write instead.
 */
import jsep from 'jsep';
import { ExpressionFault } from './expression-problem.js';
import { readNumber, readReference, readString } from './scan.js';

/** A jsep node with what the hooks add. */
export type JsepNode = jsep.Expression & {
  /** Offset of the token that starts the node, when known. */
  start?: number;
  /** True when the node was written in parentheses. */
  grouped?: boolean;
};

/** The node type of `{tag/path}` references. */
export const tagReferenceType = 'TagReference';

interface Session {
  component: string | undefined;
  starts: number[];
}

let session: Session | undefined;
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  jsep.hooks.add('gobble-token', function gobbleLiteral(env) {
    if (session === undefined) return;
    const start = this.index;
    session.starts.push(start);
    const code = this.code;
    const next = this.expr.charCodeAt(start + 1);
    if ((code >= 48 && code <= 57) || (code === 46 && next >= 48 && next <= 57)) {
      const read = readNumber(this.expr, start);
      this.index = read.end;
      env.node = literal(read.value, this.expr.slice(start, read.end), start);
    } else if (code === 34 || code === 39) {
      const read = readString(this.expr, start);
      this.index = read.end;
      env.node = literal(read.value, this.expr.slice(start, read.end), start);
    } else if (code === 123) {
      const read = readReference(this.expr, start, session.component, true);
      this.index = read.end;
      env.node = { type: tagReferenceType, path: read.value, start } as JsepNode;
    }
  });
  jsep.hooks.add('after-token', function markStart(env) {
    if (session === undefined) return;
    const start = session.starts.pop();
    const node = env.node as JsepNode | undefined;
    if (!node || start === undefined) return;
    if (node.start === undefined) node.start = start;
    if (this.expr.charCodeAt(start) === 40) node.grouped = true;
  });
}

function literal(value: number | string, raw: string, start: number): JsepNode {
  return { type: 'Literal', value, raw, start } as JsepNode;
}

/**
 * Parses scanned text (scan.ts) into jsep's tree, with start offsets.
 * @param component what `{./Name}` references resolve against.
 * @throws ExpressionFault at the position jsep stopped, with what it expected.
 */
export function parseWithJsep(text: string, component: string | undefined): JsepNode {
  install();
  session = { component, starts: [] };
  try {
    return jsep(text) as JsepNode;
  } catch (error) {
    if (error instanceof ExpressionFault) throw error;
    if (error instanceof RangeError) {
      throw new ExpressionFault(0, 'The expression nests too deeply to be parsed.');
    }
    const fault = error as Error & { index?: number; description?: string };
    throw translate(fault.description ?? fault.message, fault.index ?? 0, text);
  } finally {
    session = undefined;
  }
}

// jsep's messages, in the words of this language, with what was expected instead.
function translate(description: string, index: number, text: string): ExpressionFault {
  const after = /^Expected expression after (.+)$/.exec(description);
  if (after) {
    return new ExpressionFault(index, `'${after[1]}' has no right-hand operand.`, 'an operand');
  }
  if (description === 'missing unaryOp argument') {
    return new ExpressionFault(index, 'A prefix operator has no operand.', 'an operand');
  }
  if (description === 'Unclosed (' || description === 'Expected )') {
    return new ExpressionFault(index, "A '(' is not closed.", "')'");
  }
  if (description === 'Expected comma') {
    return new ExpressionFault(
      index,
      'Function arguments must be separated by commas.',
      "',' or ')'",
    );
  }
  if (description === 'Expected :') {
    return new ExpressionFault(index, "A '?' conditional has no ':' branch.", "':'");
  }
  if (description === 'Expected expression') {
    return new ExpressionFault(index, 'An operand is missing.', 'an expression');
  }
  if (description.startsWith('Unexpected token')) {
    return new ExpressionFault(index, 'An argument is missing.', 'an argument');
  }
  const unexpected = /^Unexpected "(.*)"$/.exec(description);
  if (unexpected) {
    const char = unexpected[1] ?? '';
    return new ExpressionFault(
      index,
      char === '' ? 'The expression ends too early.' : `Unexpected '${char}'.`,
      index >= text.length ? 'an operand' : 'an operand or an operator',
    );
  }
  return new ExpressionFault(index, `The expression does not parse: ${description}.`);
}
