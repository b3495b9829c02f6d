/**
 * What is wrong with an expression, and where: every refusal of the expression language (a
 * syntax error, an unknown function, a limit passed, a type that cannot fit) is one
 * {@link ExpressionProblem} carrying the line and column of the user's own text, so an editor
 * can point at it and the API can answer it in a problem document.
 */

/** One reason an expression is refused. */
export interface ExpressionProblem {
  /** What is wrong, a sentence safe to show to a client (never the expression's internals). */
  message: string;
  /** 0-based offset in the text (UTF-16 code units) where the problem is. */
  index: number;
  /** 1-based line of {@link index}. */
  line: number;
  /** 1-based column of {@link index}, in characters (code points) of its line. */
  column: number;
  /** What the parser expected at that place, when it knows, e.g. `')'` or `an operand`. */
  expected?: string;
}

/** Thrown inside the parser and checker to unwind to the entry point; never escapes the module. */
export class ExpressionFault extends Error {
  constructor(
    readonly index: number,
    readonly reason: string,
    readonly expected?: string,
  ) {
    super(reason);
  }
}

/** The problem of a fault, with the line and column of its index in `text`. */
export function problemAt(
  text: string,
  index: number,
  message: string,
  expected?: string,
): ExpressionProblem {
  const at = Math.max(0, Math.min(index, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < at; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  // Characters, not UTF-16 units: an emoji in a string literal before the fault counts once.
  const column = [...text.slice(lineStart, at)].length + 1;
  return { message, index: at, line, column, ...(expected !== undefined ? { expected } : {}) };
}

/** `line 1, column 7: <message> (expected …)`, for logs, profile errors and the CLI. */
export function formatProblem(problem: ExpressionProblem): string {
  const expected = problem.expected !== undefined ? ` Expected ${problem.expected}.` : '';
  return `line ${problem.line}, column ${problem.column}: ${problem.message}${expected}`;
}
