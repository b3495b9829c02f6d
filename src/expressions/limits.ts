/**
 * The bounds every expression is held to before anything of it is evaluated: whatever a profile
 * or a client sends, parsing and evaluating it takes bounded time, stack and memory.
 */
export const expressionLimits = {
  /** Longest expression text, characters. */
  maxLength: 4096,
  /** Most syntax-tree nodes (operands, operators, calls). */
  maxNodes: 500,
  /** Deepest nesting of the syntax tree (`1+1+1…` nests one level per operator). */
  maxDepth: 64,
  /** Deepest nesting of parentheses. */
  maxParentheses: 32,
  /** Longest run of prefix operators (`!`, `-`, `+`) before one operand. */
  maxPrefixRun: 8,
  /** Most `? :` conditionals. */
  maxConditionals: 32,
  /** Most distinct tag references. */
  maxReferences: 256,
  /** Longest string literal, characters. */
  maxStringLength: 1024,
  /** Longest number literal, characters. */
  maxNumberLength: 64,
  /** Longest string a string function may produce, characters; longer is Bad. */
  maxResultStringLength: 4096,
  /**
   * Longest string a string function reads, UTF-16 code units; longer is Bad before any work on
   * it (a device's string tag has no bound of its own, and each evaluation would copy it).
   */
  maxInputStringLength: 65_536,
  /** Shortest window of a window function, ms. */
  minWindowMs: 1000,
  /** Longest window of a window function, ms (31 days). */
  maxWindowMs: 31 * 86_400_000,
} as const;
