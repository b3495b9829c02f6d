/**
 * The value type of evaluation, in a module of its own: the evaluation context and the window
 * state both need it, and each needs the other's types (no import circle, DESIGN §7).
 */

/** A value while evaluating: undefined when there is none (an input without a value, a fault). */
export type Value = number | boolean | string | undefined;
