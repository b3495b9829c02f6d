/**
 * Turns jsep's tree into the language's own typed tree, refusing everything jsep parses that is
 * not in the grammar: names other than tag references and the listed functions, property
 * access, `this`, arrays, sequences, `null`, calls of anything but a function name. It checks
 * the tree's size and depth, each call's arity and the types that are known before evaluation
 * (literals, operators, function results; a tag's type is known only when it is read), so a
 * profile with `"a" * 2` or `avg({x}, "5 minutes")` is refused with the position.
 */

import { parseDuration, unitMs } from './durations.js';
import { ExpressionFault } from './expression-problem.js';
import { type FunctionSpec, functionSpecs, type Param, type StaticType } from './functions.js';
import { type JsepNode, tagReferenceType } from './jsep-grammar.js';
import { expressionLimits } from './limits.js';

/** Binary operators of the language. */
export type BinaryOperator =
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | '**'
  | '=='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | '&&'
  | '||';

/** A node of the checked tree; `start` is its offset in the text, `type` what it gives. */
export type ExpressionNode = { start: number; type: StaticType } & (
  | { kind: 'literal'; value: number | string | boolean }
  | { kind: 'reference'; index: number }
  | { kind: 'unary'; operator: '-' | '+' | '!'; operand: ExpressionNode }
  | { kind: 'binary'; operator: BinaryOperator; left: ExpressionNode; right: ExpressionNode }
  | {
      kind: 'conditional';
      test: ExpressionNode;
      consequent: ExpressionNode;
      alternate: ExpressionNode;
    }
  | {
      kind: 'call';
      spec: FunctionSpec;
      args: ExpressionNode[];
      /** Literal arguments, converted: windows and units in ms. */
      literals: (number | string | boolean | undefined)[];
    }
);

/** The checked tree and what it reads. */
export interface CheckedExpression {
  root: ExpressionNode;
  /** Distinct tag references, fullTagIds, in order of first appearance. */
  references: string[];
  /** Nodes in the tree. */
  nodeCount: number;
}

const binaryOperators = new Set<string>([
  '+',
  '-',
  '*',
  '/',
  '%',
  '**',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '&&',
  '||',
]);

const qualityNames = new Set(['Good', 'Stale', 'Unavailable', 'Bad']);

/**
 * Checks jsep's tree of `text` (see the module comment).
 * @throws ExpressionFault at the first node refused.
 */
export function checkTree(tree: JsepNode, text: string): CheckedExpression {
  const references: string[] = [];
  const referenceIndex = new Map<string, number>();
  let nodeCount = 0;

  const visit = (node: JsepNode, depth: number): ExpressionNode => {
    const start = startOf(node);
    if (depth > expressionLimits.maxDepth) {
      throw new ExpressionFault(
        start,
        `The expression nests deeper than ${expressionLimits.maxDepth} levels.`,
      );
    }
    if (++nodeCount > expressionLimits.maxNodes) {
      throw new ExpressionFault(
        start,
        `The expression has more than ${expressionLimits.maxNodes} operands and operators.`,
      );
    }
    switch (node.type) {
      case 'Literal': {
        const value = (node as unknown as { value: unknown }).value;
        if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') {
          return { kind: 'literal', value, start, type: typeof value as StaticType };
        }
        throw new ExpressionFault(
          start,
          "'null' is not a value here: a tag without a value is Bad.",
          'a number, string, true or false',
        );
      }
      case tagReferenceType: {
        const path = (node as unknown as { path: string }).path;
        let index = referenceIndex.get(path);
        if (index === undefined) {
          if (references.length >= expressionLimits.maxReferences) {
            throw new ExpressionFault(
              start,
              `The expression reads more than ${expressionLimits.maxReferences} tags.`,
            );
          }
          index = references.length;
          references.push(path);
          referenceIndex.set(path, index);
        }
        return { kind: 'reference', index, start, type: 'any' };
      }
      case 'Identifier':
        throw unknownName(String((node as unknown as { name: unknown }).name), start);
      case 'UnaryExpression': {
        const { operator, argument } = node as unknown as { operator: string; argument: JsepNode };
        const operand = visit(argument, depth + 1);
        if (operator === '-' || operator === '+') {
          expect(operand, 'number', `'${operator}'`);
          return { kind: 'unary', operator, operand, start, type: 'number' };
        }
        if (operator === '!') {
          expect(operand, 'boolean', "'!'");
          return { kind: 'unary', operator, operand, start, type: 'boolean' };
        }
        throw new ExpressionFault(start, `'${operator}' is not an operator here.`);
      }
      case 'BinaryExpression': {
        const { operator, left, right } = node as unknown as {
          operator: string;
          left: JsepNode;
          right: JsepNode;
        };
        if (!binaryOperators.has(operator)) {
          throw new ExpressionFault(start, `'${operator}' is not an operator here.`);
        }
        if (operator === '**' && left.type === 'UnaryExpression' && !left.grouped) {
          throw new ExpressionFault(
            start,
            "'-x ** y' is ambiguous: write (-x) ** y or -(x ** y).",
            'parentheses',
          );
        }
        const l = visit(left, depth + 1);
        const r = visit(right, depth + 1);
        return {
          kind: 'binary',
          operator: operator as BinaryOperator,
          left: l,
          right: r,
          start,
          type: binaryType(operator as BinaryOperator, l, r),
        };
      }
      case 'ConditionalExpression': {
        const { test, consequent, alternate } = node as unknown as Record<string, JsepNode>;
        const t = visit(test as JsepNode, depth + 1);
        expect(t, 'boolean', "The condition of '? :'");
        const a = visit(consequent as JsepNode, depth + 1);
        const b = visit(alternate as JsepNode, depth + 1);
        return {
          kind: 'conditional',
          test: t,
          consequent: a,
          alternate: b,
          start,
          type: a.type === b.type ? a.type : 'any',
        };
      }
      case 'CallExpression': {
        const { callee, arguments: rawArgs } = node as unknown as {
          callee: JsepNode;
          arguments: JsepNode[];
        };
        // `(abs)(1)`: a parenthesized callee is an expression being called, not a function name.
        if (callee.type !== 'Identifier' || text.charCodeAt(start) === 40) {
          throw new ExpressionFault(
            start,
            'Only the listed functions can be called.',
            'a function name',
          );
        }
        const name = String((callee as unknown as { name: unknown }).name);
        const spec = resolveFunction(name, rawArgs, start);
        const args = rawArgs.map((argument) => visit(argument, depth + 1));
        const literals = checkArguments(spec, args, start);
        const types = args.map((argument) => argument.type);
        const type = typeof spec.returns === 'function' ? spec.returns(types) : spec.returns;
        return { kind: 'call', spec, args, literals, start, type };
      }
      case 'Compound': {
        const second = (node as unknown as { body: JsepNode[] }).body[1];
        throw new ExpressionFault(
          second ? startOf(second) : start,
          'Two expressions stand side by side.',
          'an operator between them',
        );
      }
      case 'SequenceExpression':
        throw new ExpressionFault(start, 'A comma separates function arguments only.', "')'");
      case 'ThisExpression':
        throw new ExpressionFault(start, "'this' is not part of the expression language.");
      case 'MemberExpression':
        throw new ExpressionFault(start, 'Property access is not part of the expression language.');
      case 'ArrayExpression':
        throw new ExpressionFault(start, 'Arrays are not part of the expression language.');
      default:
        throw new ExpressionFault(start, 'This is not part of the expression language.');
    }
  };

  const root = visit(tree, 1);
  return { root, references, nodeCount };
}

function startOf(node: JsepNode): number {
  if (node.start !== undefined) return node.start;
  const record = node as unknown as Record<string, JsepNode | undefined>;
  const first = record.left ?? record.test ?? record.callee ?? record.argument;
  return first ? startOf(first) : 0;
}

function unknownName(name: string, start: number): ExpressionFault {
  if (functionSpecs.has(name)) {
    return new ExpressionFault(
      start,
      `'${name}' is a function: call it with its arguments in parentheses.`,
      `'${name}('`,
    );
  }
  return new ExpressionFault(
    start,
    `Unknown name '${name.slice(0, 64)}': tags are read as {Line1/Pump/Speed}, and only true and false are names.`,
    'a tag reference in braces, a number, a string or a function call',
  );
}

// min and max are also window functions when their second argument is a window literal.
function resolveFunction(name: string, args: readonly JsepNode[], start: number): FunctionSpec {
  if ((name === 'min' || name === 'max') && args.length === 2) {
    const second = args[1] as { type: string; value?: unknown };
    if (second.type === 'Literal' && typeof second.value === 'string') {
      return functionSpecs.get(`${name}@window`) as FunctionSpec;
    }
  }
  // A Map: `constructor` or `__proto__` find nothing, as any other unknown name.
  const spec = name.includes('@') ? undefined : functionSpecs.get(name);
  if (spec === undefined) {
    throw new ExpressionFault(
      start,
      `Unknown function '${name.slice(0, 64)}'.`,
      'one of the functions docs/derived-tags.md lists',
    );
  }
  return spec;
}

function signature(spec: FunctionSpec): string {
  const names = spec.params.map((param) => (param.optional ? `[${param.name}]` : param.name));
  if (spec.rest) names.push('…');
  return `${spec.name}(${names.join(', ')})`;
}

function checkArguments(
  spec: FunctionSpec,
  args: readonly ExpressionNode[],
  start: number,
): (number | string | boolean | undefined)[] {
  const required = spec.rest
    ? spec.rest.min
    : spec.params.filter((param) => !param.optional).length;
  const most = spec.rest ? Number.POSITIVE_INFINITY : spec.params.length;
  if (args.length < required || args.length > most) {
    const count =
      required === most
        ? `${required}`
        : most === Number.POSITIVE_INFINITY
          ? `at least ${required}`
          : `${required} to ${most}`;
    throw new ExpressionFault(
      start,
      `${spec.name}() takes ${count} argument${count.endsWith(' 1') || count === '1' ? '' : 's'}, not ${args.length}: ${signature(spec)}.`,
    );
  }
  return args.map((argument, index) => {
    const param: Param = spec.params[index] ?? {
      name: `value ${index + 1}`,
      type: spec.rest?.type ?? 'any',
    };
    return checkArgument(spec, param, index, argument);
  });
}

function checkArgument(
  spec: FunctionSpec,
  param: Param,
  index: number,
  argument: ExpressionNode,
): number | string | boolean | undefined {
  const where = `${spec.name}(): argument ${index + 1} (${param.name})`;
  const literal = argument.kind === 'literal' ? argument.value : undefined;
  switch (param.type) {
    case 'duration': {
      const ms = typeof literal === 'string' ? parseDuration(literal) : undefined;
      if (ms === undefined) {
        throw new ExpressionFault(
          argument.start,
          `${where} must be a window such as "30s", "5m", "1h" or "1d".`,
          'a window in quotes',
        );
      }
      const { minWindowMs, maxWindowMs } = expressionLimits;
      if (ms < minWindowMs || ms > maxWindowMs) {
        throw new ExpressionFault(argument.start, `${where} must be from 1s to 31d.`);
      }
      return ms;
    }
    case 'timeUnit': {
      const ms = typeof literal === 'string' ? unitMs[literal] : undefined;
      if (ms === undefined || literal === 'ms') {
        throw new ExpressionFault(
          argument.start,
          `${where} must be "s", "m", "h" or "d".`,
          'a time unit in quotes',
        );
      }
      return ms;
    }
    case 'quality':
      if (typeof literal !== 'string' || !qualityNames.has(literal)) {
        throw new ExpressionFault(
          argument.start,
          `${where} must be "Good", "Stale", "Unavailable" or "Bad".`,
          'a quality name in quotes',
        );
      }
      return literal;
    default:
      break;
  }
  if (param.name === 'modulus') {
    if (typeof literal !== 'number' || !Number.isInteger(literal) || literal < 2) {
      throw new ExpressionFault(
        argument.start,
        `${where} must be a whole number ≥ 2 written as a literal (65536 for a 16-bit counter).`,
      );
    }
    return literal;
  }
  if (param.type !== 'any' && argument.type !== 'any' && argument.type !== param.type) {
    throw new ExpressionFault(
      argument.start,
      `${where} must be ${article(param.type)}, not ${article(argument.type)}.`,
    );
  }
  return literal;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** Refuses an operand whose known type is not `type`. */
function expect(node: ExpressionNode, type: StaticType, what: string): void {
  if (node.type !== 'any' && node.type !== type) {
    throw new ExpressionFault(
      node.start,
      `${what} needs ${article(type)}, not ${article(node.type)}.`,
    );
  }
}

function binaryType(
  operator: BinaryOperator,
  left: ExpressionNode,
  right: ExpressionNode,
): StaticType {
  const quoted = `'${operator}'`;
  switch (operator) {
    case '+': {
      for (const side of [left, right]) {
        if (side.type === 'boolean') {
          throw new ExpressionFault(
            side.start,
            `${quoted} adds numbers or joins strings, not booleans.`,
          );
        }
      }
      if (left.type !== 'any' && right.type !== 'any' && left.type !== right.type) {
        throw new ExpressionFault(
          right.start,
          `${quoted} needs two numbers or two strings, not ${left.type} and ${right.type}: use concat() to join text and numbers.`,
        );
      }
      return left.type !== 'any' ? left.type : right.type;
    }
    case '-':
    case '*':
    case '/':
    case '%':
    case '**':
      expect(left, 'number', quoted);
      expect(right, 'number', quoted);
      return 'number';
    case '<':
    case '<=':
    case '>':
    case '>=':
      for (const side of [left, right]) {
        if (side.type === 'boolean') {
          throw new ExpressionFault(
            side.start,
            `${quoted} compares numbers or strings, not booleans.`,
          );
        }
      }
      if (left.type !== 'any' && right.type !== 'any' && left.type !== right.type) {
        throw new ExpressionFault(
          right.start,
          `${quoted} compares two numbers or two strings, not ${left.type} and ${right.type}.`,
        );
      }
      return 'boolean';
    case '==':
    case '!=':
      if (left.type !== 'any' && right.type !== 'any' && left.type !== right.type) {
        throw new ExpressionFault(
          right.start,
          `${quoted} compares values of one type, not ${left.type} and ${right.type}.`,
        );
      }
      return 'boolean';
    case '&&':
    case '||':
      expect(left, 'boolean', quoted);
      expect(right, 'boolean', quoted);
      return 'boolean';
  }
}
