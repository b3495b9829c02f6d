/**
 * Compiles a checked tree (check.ts) into a tree of closures, one per node: evaluating is calling
 * the root closure, with no interpretation of node kinds at run time, no property lookup by
 * name, no `eval` or `Function`. Operands of the strict operators are both evaluated before the
 * operator checks their types, so every input they read counts towards the quality; `&&`, `||`
 * and `? :` evaluate only what decides the result (the inputs the result does not depend on
 * cannot spoil it).
 */
import type { ExpressionNode } from './check.js';
import {
  article,
  type EvalContext,
  type Evaluator,
  isUsableValue,
  rankOf,
  typeName,
  type Value,
} from './evaluation-context.js';
import type { SlotSpec } from './expression-state.js';
import type { StatefulCompute } from './functions.js';

/** A stateful call's sampler: evaluates and records its argument, with its own quality. */
export type Sampler = (context: EvalContext) => void;

/** The compiled expression. */
export interface CompiledExpression {
  root: Evaluator;
  /** Run in this order before `root` at every evaluation (inner calls first). */
  samplers: Sampler[];
  /** One per stateful call, in sampler order. */
  slots: SlotSpec[];
  /** Whether anything in it changes with time alone. */
  timeDependent: boolean;
}

/** Compiles a checked tree; `references` names the inputs in messages. */
export function compileTree(
  root: ExpressionNode,
  references: readonly string[],
): CompiledExpression {
  const samplers: Sampler[] = [];
  const slots: SlotSpec[] = [];
  let timeDependent = false;
  let totalizers = 0;

  const stateful = (spec: SlotSpec, argument: Evaluator, compute: StatefulCompute): Evaluator => {
    const index = slots.length;
    slots.push(spec.kind === 'totalizer' ? { ...spec, key: `integrate#${totalizers++}` } : spec);
    samplers.push(sampler(index, argument, compute));
    return statefulResult(index);
  };

  // Every closure is made by a module-level function, never by a closure of this call: closures
  // from one function literal share its feedback and optimized code, so 10,000 programs run on
  // the code of one, where closures made here would each warm up on their own.
  const compile = (node: ExpressionNode): Evaluator => {
    switch (node.kind) {
      case 'literal':
        return constant(node.value);
      case 'reference':
        return reference(node.index, references[node.index] as string);
      case 'unary': {
        const operand = compile(node.operand);
        return node.operator === '!' ? not(operand) : sign(operand, node.operator === '-');
      }
      case 'binary': {
        if (node.operator === '+') {
          // ((a + b) + c) + d: one closure over its operands, added left to right as written.
          const operands: ExpressionNode[] = [];
          let left: ExpressionNode = node;
          while (left.kind === 'binary' && left.operator === '+') {
            operands.unshift(left.right);
            left = left.left;
          }
          operands.unshift(left);
          if (operands.length > 2) return sum(operands.map(compile));
        }
        return binary(node.operator, compile(node.left), compile(node.right));
      }
      case 'conditional':
        return conditional(compile(node.test), compile(node.consequent), compile(node.alternate));
      case 'call': {
        if (node.spec.timeDependent) timeDependent = true;
        const args = node.args.map(compile);
        return node.spec.compile({ args, literals: node.literals, stateful });
      }
    }
  };

  return { root: compile(root), samplers, slots, timeDependent };
}

function constant(value: number | string | boolean): Evaluator {
  return () => value;
}

function not(operand: Evaluator): Evaluator {
  return (c) => {
    const a = operand(c);
    if (typeof a === 'boolean') return !a;
    return fault(c, "'!' needs a boolean", a);
  };
}

function sign(operand: Evaluator, negate: boolean): Evaluator {
  return (c) => {
    const a = operand(c);
    if (typeof a === 'number') return negate ? -a : a;
    return fault(c, `'${negate ? '-' : '+'}' needs a number`, a);
  };
}

function conditional(test: Evaluator, consequent: Evaluator, alternate: Evaluator): Evaluator {
  return (c) => {
    const t = test(c);
    if (t === true) return consequent(c);
    if (t === false) return alternate(c);
    return fault(c, "The condition of '? :' must be true or false", t);
  };
}

/** A stateful call's sampler: its argument evaluated with its own quality, then recorded. */
function sampler(index: number, argument: Evaluator, compute: StatefulCompute): Sampler {
  return (c) => {
    const slot = c.state.slots[index];
    if (slot === undefined) return;
    const { rank, reason, message } = c;
    c.rank = 0;
    c.reason = undefined;
    c.message = undefined;
    const value = argument(c);
    slot.result = compute(slot, value, c);
    slot.rank = slot.result === undefined && c.rank < 2 ? 3 : c.rank;
    slot.reason = c.reason;
    slot.message = c.message;
    c.rank = rank;
    c.reason = reason;
    c.message = message;
  };
}

/** A stateful call's value in the expression: what its sampler computed, with its quality. */
function statefulResult(index: number): Evaluator {
  return (c) => {
    const slot = c.state.slots[index];
    if (slot === undefined) return undefined;
    if (slot.rank > 0) c.degrade(slot.rank, slot.reason, slot.message);
    return slot.rank >= 2 ? undefined : slot.result;
  };
}

/** `a + b`: two numbers added, two strings joined, anything else a fault. */
function plus(c: EvalContext, a: Value, b: Value): Value {
  if (typeof a === 'number' && typeof b === 'number') {
    const v = a + b;
    return Number.isFinite(v) ? v : overflow(c, a, '+', b, v);
  }
  if (typeof a === 'string' && typeof b === 'string') {
    return a.length + b.length <= 4096
      ? a + b
      : c.fail("'+' gives a string longer than 4096 characters.");
  }
  return operands(c, '+', 'two numbers or two strings', a, b);
}

/** A left-nested chain of `+`: every operand evaluated, in order, each added to the sum so far. */
function sum(terms: readonly Evaluator[]): Evaluator {
  const count = terms.length;
  return (c) => {
    let total = (terms[0] as Evaluator)(c);
    for (let i = 1; i < count; i++) total = plus(c, total, (terms[i] as Evaluator)(c));
    return total;
  };
}

// A value of the wrong type (undefined passes: its quality is already recorded).
function fault(c: EvalContext, what: string, value: Value): undefined {
  if (value === undefined) return undefined;
  return c.fail(`${what}, not ${article(typeName(value))}.`);
}

function operands(c: EvalContext, operator: string, want: string, a: Value, b: Value): undefined {
  if (a === undefined || b === undefined) return undefined;
  return c.fail(`'${operator}' needs ${want}, not ${typeName(a)} and ${typeName(b)}.`);
}

function overflow(c: EvalContext, a: number, operator: string, b: number, result: number): Value {
  return c.fail(`${a} ${operator} ${b} gives ${result}, not a finite number.`);
}

/** Reads one input; see evaluation-context.ts for how its quality counts. */
function reference(index: number, id: string): Evaluator {
  return (c) => {
    const input = c.read(index);
    if (input === undefined) {
      c.degrade(3, 'NotFound', `Input ${id} does not exist.`);
      return undefined;
    }
    const quality = input.quality;
    const value = input.value;
    if (quality === 'Good') {
      if (isUsableValue(value)) return value;
      return c.fail(
        `Input ${id} is Good but has ${value === undefined ? 'no value' : `the value ${value}`}.`,
      );
    }
    const rank = rankOf(quality);
    const detail = input.message ? `: ${input.message}` : '.';
    c.degrade(rank, input.reason, `Input ${id} is ${quality}${detail}`);
    if (rank >= 2) return undefined;
    if (isUsableValue(value)) return value;
    return c.fail(`Input ${id} is ${quality} without a usable value.`);
  };
}

function binary(operator: string, l: Evaluator, r: Evaluator): Evaluator {
  switch (operator) {
    case '+':
      return (c) => {
        const a = l(c);
        return plus(c, a, r(c));
      };
    case '-':
      return (c) => {
        const a = l(c);
        const b = r(c);
        if (typeof a === 'number' && typeof b === 'number') {
          const v = a - b;
          return Number.isFinite(v) ? v : overflow(c, a, '-', b, v);
        }
        return operands(c, '-', 'numbers', a, b);
      };
    case '*':
      return (c) => {
        const a = l(c);
        const b = r(c);
        if (typeof a === 'number' && typeof b === 'number') {
          const v = a * b;
          return Number.isFinite(v) ? v : overflow(c, a, '*', b, v);
        }
        return operands(c, '*', 'numbers', a, b);
      };
    case '/':
      return (c) => {
        const a = l(c);
        const b = r(c);
        if (typeof a === 'number' && typeof b === 'number') {
          if (b === 0) return c.fail(`Division by zero: ${a} / 0.`);
          const v = a / b;
          return Number.isFinite(v) ? v : overflow(c, a, '/', b, v);
        }
        return operands(c, '/', 'numbers', a, b);
      };
    case '%':
      return (c) => {
        const a = l(c);
        const b = r(c);
        if (typeof a === 'number' && typeof b === 'number') {
          if (b === 0) return c.fail(`Remainder of a division by zero: ${a} % 0.`);
          return a % b;
        }
        return operands(c, '%', 'numbers', a, b);
      };
    case '**':
      return (c) => {
        const a = l(c);
        const b = r(c);
        if (typeof a === 'number' && typeof b === 'number') {
          const v = a ** b;
          return Number.isFinite(v) ? v : overflow(c, a, '**', b, v);
        }
        return operands(c, '**', 'numbers', a, b);
      };
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const compare =
        operator === '<'
          ? (a: number | string, b: number | string) => a < b
          : operator === '<='
            ? (a: number | string, b: number | string) => a <= b
            : operator === '>'
              ? (a: number | string, b: number | string) => a > b
              : (a: number | string, b: number | string) => a >= b;
      return (c) => {
        const a = l(c);
        const b = r(c);
        if (
          (typeof a === 'number' && typeof b === 'number') ||
          (typeof a === 'string' && typeof b === 'string')
        ) {
          return compare(a, b);
        }
        return operands(c, operator, 'two numbers or two strings', a, b);
      };
    }
    case '==':
    case '!=': {
      const equal = operator === '==';
      return (c) => {
        const a = l(c);
        const b = r(c);
        if (a === undefined || b === undefined) return undefined;
        if (typeof a !== typeof b) return operands(c, operator, 'values of one type', a, b);
        return (a === b) === equal;
      };
    }
    case '&&':
      return (c) => {
        const a = l(c);
        if (a === false) return false;
        if (a !== true) return fault(c, "'&&' needs booleans", a);
        const b = r(c);
        if (typeof b === 'boolean') return b;
        return fault(c, "'&&' needs booleans", b);
      };
    case '||':
      return (c) => {
        const a = l(c);
        if (a === true) return true;
        if (a !== false) return fault(c, "'||' needs booleans", a);
        const b = r(c);
        if (typeof b === 'boolean') return b;
        return fault(c, "'||' needs booleans", b);
      };
    default:
      throw new Error(`unchecked operator ${operator}`);
  }
}
