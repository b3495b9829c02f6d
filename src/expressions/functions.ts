/**
 * Every function of the expression language: its parameters (checked when the expression is
 * compiled, where literals allow, and at each evaluation otherwise), what it returns, and its
 * implementation as a closure over its compiled arguments. Nothing else can be called: a name
 * not in {@link functionSpecs} is refused when the expression is compiled.
 *
 * Runtime faults (a wrong type from a tag, a result that is not a finite number) make the
 * evaluation Bad with reason `Expression` and a message naming the function and the argument.
 */
import {
  article,
  badRank,
  type EvalContext,
  type Evaluator,
  qualityByRank,
  rankOf,
  type Value,
} from './evaluation-context.js';
import type { SlotSpec, SlotState } from './expression-state.js';
import { expressionLimits } from './limits.js';
import type { WindowAggregate } from './time-window.js';

/** What the checker knows of a value's type before evaluation (`any`: a tag's, known later). */
export type StaticType = 'number' | 'boolean' | 'string' | 'any';

/**
 * A parameter's type: a value type, or a string literal of a kind: a window (`"5m"`), a time
 * unit (`"h"`), a quality name (`"Good"`).
 */
export type ParamType = StaticType | 'duration' | 'timeUnit' | 'quality';

/** One parameter. */
export interface Param {
  name: string;
  type: ParamType;
  /** May be left out (only trailing parameters). */
  optional?: boolean;
}

/** Computes a stateful call's result once its argument was evaluated and recorded. */
export type StatefulCompute = (slot: SlotState, value: Value, context: EvalContext) => Value;

/** What a function's compile step is given. */
export interface CompileInput {
  /** The compiled arguments, in order. */
  args: readonly Evaluator[];
  /** Each argument's value when it is a literal (checked against its parameter type). */
  literals: readonly (number | string | boolean | undefined)[];
  /**
   * Registers a stateful call: `argument` is evaluated at every evaluation, before the rest of
   * the expression and whatever branch the expression takes, with its own quality, and
   * `compute` records it and gives the call's result.
   */
  stateful(spec: SlotSpec, argument: Evaluator, compute: StatefulCompute): Evaluator;
}

/** A function of the language. */
export interface FunctionSpec {
  name: string;
  /** The group of the table in docs/derived-tags.md. */
  group: 'math' | 'bits' | 'words' | 'logic' | 'strings' | 'time' | 'quality' | 'window';
  params: readonly Param[];
  /** Further arguments of this type (`min(a, b, …)`), at least `min` arguments in all. */
  rest?: { type: StaticType; min: number };
  /** The result type, possibly from the arguments' types. */
  returns: StaticType | ((argTypes: readonly StaticType[]) => StaticType);
  /** Its value changes with time alone (`now`, window functions): evaluated at least every second. */
  timeDependent?: boolean;
  /** One line for the table in docs/derived-tags.md. */
  summary: string;
  /** An example for the table in docs/derived-tags.md. */
  example: string;
  compile(input: CompileInput): Evaluator;
}

/** Marks the evaluation Bad for an argument of the wrong type; undefined passes through. */
export function wrongArgument(
  context: EvalContext,
  fn: string,
  index: number,
  param: string,
  want: string,
  got: Value,
): undefined {
  if (got === undefined) return undefined;
  const shown = typeof got === 'number' ? `${got}` : article(typeof got);
  return context.fail(`${fn}(): argument ${index + 1} (${param}) must be ${want}, not ${shown}.`);
}

/** `value` when finite, else Bad naming the call. */
export function finite(context: EvalContext, value: number, call: () => string): Value {
  if (Number.isFinite(value)) return value;
  return context.fail(`${call()} gives ${value}, not a finite number.`);
}

const param = (name: string, type: ParamType, optional = false): Param =>
  optional ? { name, type, optional } : { name, type };

const numberArg = (name: string) => param(name, 'number');

/** A function of numbers giving a number; the result must be finite. */
function numeric(
  name: string,
  names: string[],
  implementation: (...values: number[]) => number,
  summary: string,
  example: string,
): FunctionSpec {
  return {
    name,
    group: 'math',
    params: names.map(numberArg),
    returns: 'number',
    summary,
    example,
    compile: ({ args }) => {
      const count = args.length;
      if (count === 1) {
        const [a] = args as [Evaluator];
        return (c) => {
          const x = a(c);
          if (typeof x !== 'number')
            return wrongArgument(c, name, 0, names[0] ?? 'x', 'a number', x);
          return finite(c, implementation(x), () => `${name}(${x})`);
        };
      }
      return (c) => {
        const values: number[] = new Array(count);
        for (let i = 0; i < count; i++) {
          const v = (args[i] as Evaluator)(c);
          if (typeof v !== 'number')
            return wrongArgument(c, name, i, names[i] ?? 'x', 'a number', v);
          values[i] = v;
        }
        return finite(c, implementation(...values), () => `${name}(${values.join(', ')})`);
      };
    },
  };
}

/** Variadic min or max of numbers. */
function extreme(name: 'min' | 'max'): FunctionSpec {
  const pick = name === 'min' ? Math.min : Math.max;
  return {
    name,
    group: 'math',
    params: [numberArg('a'), numberArg('b')],
    rest: { type: 'number', min: 2 },
    returns: 'number',
    summary: `The ${name === 'min' ? 'least' : 'greatest'} of two or more numbers. With a window string as second argument it is the window function.`,
    example: `${name}({Line1/TempA}, {Line1/TempB})`,
    compile:
      ({ args }) =>
      (c) => {
        let result = name === 'min' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
        for (let i = 0; i < args.length; i++) {
          const v = (args[i] as Evaluator)(c);
          if (typeof v !== 'number')
            return wrongArgument(c, name, i, `value ${i + 1}`, 'a number', v);
          result = pick(result, v);
        }
        return result;
      },
  };
}

/** Rounds half away from zero at `digits` decimals, exactly for decimals such as 1.005. */
export function roundTo(value: number, digits: number): number {
  const sign = value < 0 ? -1 : 1;
  const magnitude = Math.abs(value);
  const text = String(magnitude);
  // Shifting the decimal point in the text avoids 1.005 * 100 = 100.49999….
  const shifted = text.includes('e') ? magnitude * 10 ** digits : Number(`${text}e${digits}`);
  const rounded = Math.round(shifted);
  const back = text.includes('e') ? rounded / 10 ** digits : Number(`${rounded}e${-digits}`);
  return sign * back;
}

const isWhole = (value: Value, low: number, high: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= low && value <= high;

const two32 = 2 ** 32;

/** An integer operand of the bit functions: −2^31 … 2^53 − 1, negatives as 32-bit two's complement. */
function bits(value: number): number {
  return value < 0 ? value >>> 0 : value;
}

function bitwise(
  name: string,
  operation: (a: number, b: number) => number,
  summary: string,
  example: string,
): FunctionSpec {
  const want = 'an integer from -2^31 to 2^53 - 1';
  return {
    name,
    group: 'bits',
    params: [numberArg('a'), numberArg('b')],
    returns: 'number',
    summary,
    example,
    compile: ({ args }) => {
      const [a, b] = args as [Evaluator, Evaluator];
      return (c) => {
        const x = a(c);
        if (!isWhole(x, -(2 ** 31), Number.MAX_SAFE_INTEGER))
          return wrongArgument(c, name, 0, 'a', want, x);
        const y = b(c);
        if (!isWhole(y, -(2 ** 31), Number.MAX_SAFE_INTEGER))
          return wrongArgument(c, name, 1, 'b', want, y);
        const p = bits(x);
        const q = bits(y);
        const high = operation(Math.floor(p / two32), Math.floor(q / two32)) >>> 0;
        const low = operation(p >>> 0, q >>> 0) >>> 0;
        return high * two32 + low;
      };
    },
  };
}

function shift(name: 'shl' | 'shr'): FunctionSpec {
  return {
    name,
    group: 'bits',
    params: [numberArg('x'), numberArg('n')],
    returns: 'number',
    summary:
      name === 'shl'
        ? 'x shifted left by n bits (x · 2ⁿ); Bad beyond 2^53.'
        : 'x shifted right by n bits (⌊x / 2ⁿ⌋).',
    example: name === 'shl' ? 'shl({PLC/HighByte}, 8)' : 'shr({PLC/StatusWord}, 4)',
    compile: ({ args }) => {
      const [a, b] = args as [Evaluator, Evaluator];
      return (c) => {
        const x = a(c);
        if (!isWhole(x, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)) {
          return wrongArgument(c, name, 0, 'x', 'a whole number', x);
        }
        const n = b(c);
        if (!isWhole(n, 0, 53))
          return wrongArgument(c, name, 1, 'n', 'a whole number from 0 to 53', n);
        if (name === 'shr') return Math.floor(x / 2 ** n);
        const shifted = x * 2 ** n;
        if (!Number.isSafeInteger(shifted)) return c.fail(`shl(${x}, ${n}) is beyond 2^53.`);
        return shifted;
      };
    },
  };
}

const wordView = new DataView(new ArrayBuffer(4));

function word(name: 'int32' | 'uint32' | 'float32'): FunctionSpec {
  const want = 'a 16-bit register value (-32768 to 65535)';
  const summary = {
    int32: 'A signed 32-bit integer from two 16-bit registers, high word first.',
    uint32: 'An unsigned 32-bit integer from two 16-bit registers, high word first.',
    float32: 'An IEEE 754 single-precision number from two 16-bit registers, high word first.',
  }[name];
  return {
    name,
    group: 'words',
    params: [numberArg('hi'), numberArg('lo')],
    returns: 'number',
    summary,
    example: `${name}({PLC/HR40001}, {PLC/HR40002})`,
    compile: ({ args }) => {
      const [a, b] = args as [Evaluator, Evaluator];
      return (c) => {
        const hi = a(c);
        if (!isWhole(hi, -32768, 65535)) return wrongArgument(c, name, 0, 'hi', want, hi);
        const lo = b(c);
        if (!isWhole(lo, -32768, 65535)) return wrongArgument(c, name, 1, 'lo', want, lo);
        wordView.setUint16(0, hi & 0xffff);
        wordView.setUint16(2, lo & 0xffff);
        if (name === 'int32') return wordView.getInt32(0);
        if (name === 'uint32') return wordView.getUint32(0);
        return finite(c, wordView.getFloat32(0), () => `float32(${hi}, ${lo})`);
      };
    },
  };
}

/** Evaluates `argument` with its own quality; returns its value and rank, the context restored. */
function isolated(
  context: EvalContext,
  argument: Evaluator,
): { value: Value; rank: number; reason: string | undefined; message: string | undefined } {
  const { rank, reason, message } = context;
  context.rank = 0;
  context.reason = undefined;
  context.message = undefined;
  const value = argument(context);
  const result = { value, rank: context.rank, reason: context.reason, message: context.message };
  context.rank = rank;
  context.reason = reason;
  context.message = message;
  // A Good evaluation without a value (cannot happen through the closures) counts as Bad.
  if (result.value === undefined && result.rank < 2) result.rank = badRank;
  if (result.rank >= 2) result.value = undefined;
  return result;
}

function qualityTest(name: string, test: (rank: number) => boolean, summary: string): FunctionSpec {
  return {
    name,
    group: 'quality',
    params: [param('x', 'any')],
    returns: 'boolean',
    summary,
    example: `${name}({Line1/Flow})`,
    compile: ({ args }) => {
      const [a] = args as [Evaluator];
      return (c) => test(isolated(c, a).rank);
    },
  };
}

const join = (types: readonly StaticType[]): StaticType => {
  const first = types[0] ?? 'any';
  return types.every((type) => type === first) ? first : 'any';
};

function stringResult(context: EvalContext, fn: string, value: string): Value {
  if (value.length <= expressionLimits.maxResultStringLength) return value;
  return context.fail(
    `${fn}() gives a string longer than ${expressionLimits.maxResultStringLength} characters.`,
  );
}

/**
 * True, after failing the evaluation (Bad, naming the function), when a string argument is too
 * long to work on: checked before the string is copied.
 */
function inputTooLong(context: EvalContext, fn: string, value: string): boolean {
  if (value.length <= expressionLimits.maxInputStringLength) return false;
  context.fail(
    `${fn}() reads a string longer than ${expressionLimits.maxInputStringLength} characters.`,
  );
  return true;
}

function display(value: number | boolean | string): string {
  return typeof value === 'string' ? value : String(value);
}

/** A window function over numbers (or booleans, for onTime). */
function windowFunction(
  name: string,
  argument: 'number' | 'boolean',
  result: (aggregate: WindowAggregate, current: number | undefined) => number,
  summary: string,
  example: string,
  counter = false,
): FunctionSpec {
  const params = [param('x', argument), param('window', 'duration')];
  if (counter) params.push(param('modulus', 'number', true));
  return {
    name,
    group: 'window',
    params,
    returns: 'number',
    timeDependent: true,
    summary,
    example,
    compile: ({ args, literals, stateful }) => {
      const windowMs = literals[1] as number;
      const modulus = literals[2];
      if (counter && args.length > 2 && typeof modulus !== 'number') {
        throw new Error('modulus must be a number literal');
      }
      return stateful(
        {
          kind: 'window',
          config: { windowMs, ...(typeof modulus === 'number' ? { modulus } : {}) },
        },
        args[0] as Evaluator,
        (slot, value, c) => {
          const window = slot.window;
          if (window === undefined) return undefined;
          let recorded: number | undefined;
          if (argument === 'boolean') {
            if (typeof value === 'boolean') recorded = value ? 1 : 0;
            else wrongArgument(c, name, 0, 'x', 'a boolean', value);
          } else if (typeof value === 'number') recorded = value;
          else wrongArgument(c, name, 0, 'x', 'a number', value);
          window.record(c.now, recorded, c.sampling);
          if (recorded === undefined) return undefined;
          return finite(c, result(window.aggregate(c.now), recorded), () => `${name}()`);
        },
      );
    },
  };
}

/** Every function, by name. */
export const functionSpecs: ReadonlyMap<string, FunctionSpec> = new Map(
  (
    [
      numeric('abs', ['x'], Math.abs, 'Absolute value.', 'abs({Line1/Deviation})'),
      extreme('min'),
      extreme('max'),
      {
        name: 'round',
        group: 'math',
        params: [numberArg('x'), param('n', 'number', true)],
        returns: 'number',
        summary: 'x rounded half away from zero to n decimals (default 0; -15 to 15).',
        example: 'round({Line1/Temperature}, 1)',
        compile: ({ args }) => {
          const [a, b] = args as [Evaluator, Evaluator | undefined];
          return (c) => {
            const x = a(c);
            if (typeof x !== 'number') return wrongArgument(c, 'round', 0, 'x', 'a number', x);
            const n = b ? b(c) : 0;
            if (!isWhole(n, -15, 15)) {
              return wrongArgument(c, 'round', 1, 'n', 'a whole number from -15 to 15', n);
            }
            return finite(c, roundTo(x, n), () => `round(${x}, ${n})`);
          };
        },
      } satisfies FunctionSpec,
      numeric('floor', ['x'], Math.floor, 'Largest whole number ≤ x.', 'floor({Line1/Level})'),
      numeric('ceil', ['x'], Math.ceil, 'Smallest whole number ≥ x.', 'ceil({Line1/Level})'),
      numeric(
        'sqrt',
        ['x'],
        Math.sqrt,
        'Square root; Bad for x < 0.',
        'sqrt({Line1/DiffPressure})',
      ),
      numeric(
        'pow',
        ['x', 'y'],
        (x, y) => x ** y,
        'x to the power y (as x ** y).',
        'pow({Line1/Ratio}, 2)',
      ),
      numeric(
        'log',
        ['x'],
        Math.log10,
        'Base-10 logarithm; Bad for x ≤ 0.',
        'log({Lab/Concentration})',
      ),
      numeric('ln', ['x'], Math.log, 'Natural logarithm; Bad for x ≤ 0.', 'ln({Lab/Ratio})'),
      numeric('exp', ['x'], Math.exp, 'e to the power x.', 'exp(-{Lab/Rate} * 2)'),
      numeric(
        'clamp',
        ['x', 'lo', 'hi'],
        (x, lo, hi) => (lo > hi ? Number.NaN : Math.min(hi, Math.max(lo, x))),
        'x limited to lo … hi; Bad when lo > hi.',
        'clamp({Line1/Valve}, 0, 100)',
      ),
      numeric(
        'scale',
        ['x', 'inLo', 'inHi', 'outLo', 'outHi'],
        (x, inLo, inHi, outLo, outHi) => outLo + ((x - inLo) * (outHi - outLo)) / (inHi - inLo),
        'Linear scaling of x from inLo … inHi to outLo … outHi (not clamped); Bad when inLo = inHi.',
        'scale({PLC/AI0}, 0, 27648, 0, 10)',
      ),
      {
        name: 'bit',
        group: 'bits',
        params: [numberArg('x'), numberArg('n')],
        returns: 'boolean',
        summary: 'Bit n (0 = least significant, up to 52) of x as true or false.',
        example: 'bit({PLC/StatusWord}, 3)',
        compile: ({ args }) => {
          const [a, b] = args as [Evaluator, Evaluator];
          return (c) => {
            const x = a(c);
            if (!isWhole(x, -(2 ** 31), Number.MAX_SAFE_INTEGER)) {
              return wrongArgument(c, 'bit', 0, 'x', 'an integer from -2^31 to 2^53 - 1', x);
            }
            const n = b(c);
            if (!isWhole(n, 0, 52))
              return wrongArgument(c, 'bit', 1, 'n', 'a whole number from 0 to 52', n);
            return Math.floor(bits(x) / 2 ** n) % 2 === 1;
          };
        },
      } satisfies FunctionSpec,
      bitwise(
        'bitAnd',
        (a, b) => a & b,
        'Bitwise AND (53-bit).',
        'bitAnd({PLC/StatusWord}, 0x00FF)',
      ),
      bitwise('bitOr', (a, b) => a | b, 'Bitwise OR (53-bit).', 'bitOr({PLC/Flags}, 0b0100)'),
      bitwise(
        'bitXor',
        (a, b) => a ^ b,
        'Bitwise exclusive OR (53-bit).',
        'bitXor({PLC/Flags}, 0xFFFF)',
      ),
      shift('shl'),
      shift('shr'),
      word('int32'),
      word('uint32'),
      word('float32'),
      {
        name: 'if',
        group: 'logic',
        params: [param('condition', 'boolean'), param('then', 'any'), param('else', 'any')],
        returns: (types) => join(types.slice(1)),
        summary: 'then when condition is true, else otherwise; only the branch taken is evaluated.',
        example: 'if({Line1/Running}, {Line1/Speed}, 0)',
        compile: ({ args }) => {
          const [test, yes, no] = args as [Evaluator, Evaluator, Evaluator];
          return (c) => {
            const t = test(c);
            if (t === true) return yes(c);
            if (t === false) return no(c);
            return wrongArgument(c, 'if', 0, 'condition', 'true or false', t);
          };
        },
      } satisfies FunctionSpec,
      {
        name: 'coalesce',
        group: 'logic',
        params: [param('a', 'any'), param('b', 'any')],
        rest: { type: 'any', min: 2 },
        returns: join,
        summary: 'The first argument that has a value (Good or Stale), with its quality.',
        example: 'coalesce({Line1/FlowA}, {Line1/FlowB}, 0)',
        compile:
          ({ args }) =>
          (c) => {
            let last: ReturnType<typeof isolated> | undefined;
            for (const argument of args) {
              last = isolated(c, argument);
              if (last.value !== undefined) break;
            }
            if (last === undefined) return undefined;
            c.degrade(last.rank, last.reason, last.message);
            return last.value;
          },
      } satisfies FunctionSpec,
      {
        name: 'concat',
        group: 'strings',
        params: [param('a', 'any')],
        rest: { type: 'any', min: 1 },
        returns: 'string',
        summary: 'The arguments as text, joined (numbers as JavaScript prints them).',
        example: 'concat("Batch ", {Line1/BatchNo})',
        compile:
          ({ args }) =>
          (c) => {
            let text = '';
            for (const argument of args) {
              const v = argument(c);
              if (v === undefined) return undefined;
              text += display(v);
              // Checked as it grows: the arguments' total never exceeds the limit by more than one.
              if (text.length > expressionLimits.maxResultStringLength) {
                return stringResult(c, 'concat', text);
              }
            }
            return stringResult(c, 'concat', text);
          },
      } satisfies FunctionSpec,
      stringFunction('upper', (s) => s.toUpperCase(), 'Upper case.', 'upper({Line1/Recipe})'),
      stringFunction('lower', (s) => s.toLowerCase(), 'Lower case.', 'lower({Line1/Recipe})'),
      {
        name: 'substring',
        group: 'strings',
        params: [param('s', 'string'), numberArg('start'), param('end', 'number', true)],
        returns: 'string',
        summary: 'Characters start … end − 1 of s (from 0; end defaults to the end), clamped to s.',
        example: 'substring({Line1/Batch}, 0, 4)',
        compile: ({ args }) => {
          const [a, b, e] = args as [Evaluator, Evaluator, Evaluator | undefined];
          return (c) => {
            const s = a(c);
            if (typeof s !== 'string') return wrongArgument(c, 'substring', 0, 's', 'a string', s);
            if (inputTooLong(c, 'substring', s)) return undefined;
            const start = b(c);
            if (!isWhole(start, 0, Number.MAX_SAFE_INTEGER)) {
              return wrongArgument(c, 'substring', 1, 'start', 'a whole number ≥ 0', start);
            }
            const characters = [...s];
            const end = e ? e(c) : characters.length;
            if (!isWhole(end, 0, Number.MAX_SAFE_INTEGER)) {
              return wrongArgument(c, 'substring', 2, 'end', 'a whole number ≥ 0', end);
            }
            return stringResult(c, 'substring', characters.slice(start, end).join(''));
          };
        },
      } satisfies FunctionSpec,
      {
        name: 'len',
        group: 'strings',
        params: [param('s', 'string')],
        returns: 'number',
        summary: 'Number of characters of s.',
        example: 'len({Line1/Operator})',
        compile: ({ args }) => {
          const [a] = args as [Evaluator];
          return (c) => {
            const s = a(c);
            if (typeof s !== 'string') return wrongArgument(c, 'len', 0, 's', 'a string', s);
            if (inputTooLong(c, 'len', s)) return undefined;
            return [...s].length;
          };
        },
      } satisfies FunctionSpec,
      {
        name: 'format',
        group: 'strings',
        params: [numberArg('x'), numberArg('decimals')],
        returns: 'string',
        summary: 'x as text with a fixed number of decimals (0 to 20).',
        example: 'concat(format({Line1/Temperature}, 1), " °C")',
        compile: ({ args }) => {
          const [a, b] = args as [Evaluator, Evaluator];
          return (c) => {
            const x = a(c);
            if (typeof x !== 'number') return wrongArgument(c, 'format', 0, 'x', 'a number', x);
            const d = b(c);
            if (!isWhole(d, 0, 20)) {
              return wrongArgument(c, 'format', 1, 'decimals', 'a whole number from 0 to 20', d);
            }
            return x.toFixed(d);
          };
        },
      } satisfies FunctionSpec,
      {
        name: 'now',
        group: 'time',
        params: [],
        returns: 'number',
        timeDependent: true,
        summary: 'The evaluation time, milliseconds since 1970-01-01 UTC.',
        example: '(now() - {Line1/LastStartMs}) / 1000',
        compile: () => (c) => c.now,
      } satisfies FunctionSpec,
      clockPart(
        'hour',
        (date) => date.getHours(),
        'Hour of the day, 0 to 23, local time of the gateway.',
        'hour() >= 6 && hour() < 14',
      ),
      clockPart(
        'minute',
        (date) => date.getMinutes(),
        'Minute of the hour, 0 to 59.',
        'minute() == 0',
      ),
      clockPart(
        'weekday',
        (date) => date.getDay(),
        'Day of the week, 0 = Sunday to 6 = Saturday, local time.',
        'weekday() >= 1 && weekday() <= 5',
      ),
      {
        name: 'quality',
        group: 'quality',
        params: [param('x', 'any')],
        returns: 'string',
        summary: 'The quality of x: "Good", "Stale", "Unavailable" or "Bad".',
        example: 'quality({Line1/Flow}) == "Stale"',
        compile: ({ args }) => {
          const [a] = args as [Evaluator];
          return (c) => qualityByRank[isolated(c, a).rank];
        },
      } satisfies FunctionSpec,
      qualityTest('isGood', (rank) => rank === 0, 'true when x is Good.'),
      qualityTest('isBad', (rank) => rank >= 2, 'true when x has no value (Bad or Unavailable).'),
      qualityTest('isStale', (rank) => rank === 1, 'true when x is Stale.'),
      {
        name: 'forceQuality',
        group: 'quality',
        params: [param('x', 'any'), param('q', 'quality')],
        returns: (types) => types[0] ?? 'any',
        summary:
          'x with quality q instead of its own ("Good" or "Stale" keep the value; Bad when x has none).',
        example: 'forceQuality({Line1/ManualEntry}, "Good")',
        compile: ({ args, literals }) => {
          const [a] = args as [Evaluator];
          const forced = rankOf(literals[1] as 'Good');
          return (c) => {
            const x = isolated(c, a);
            if (forced < 2 && x.value === undefined) {
              return c.fail(
                `forceQuality() has no value to mark ${qualityByRank[forced]}: ${x.message ?? 'x has none'}`,
              );
            }
            c.degrade(forced, 'Expression', `Quality forced to ${qualityByRank[forced]}.`);
            return forced < 2 ? x.value : undefined;
          };
        },
      } satisfies FunctionSpec,
      {
        name: 'valueOr',
        group: 'quality',
        params: [param('x', 'any'), param('fallback', 'any')],
        returns: join,
        summary: 'x when it is Good, else fallback (with the fallback’s quality).',
        example: 'valueOr({Line1/Flow}, 0)',
        compile: ({ args }) => {
          const [a, b] = args as [Evaluator, Evaluator];
          return (c) => {
            const x = isolated(c, a);
            return x.rank === 0 ? x.value : b(c);
          };
        },
      } satisfies FunctionSpec,
      windowFunction(
        'avg',
        'number',
        (w, current) => (w.covered > 0 ? w.area / w.covered : (current as number)),
        'Time-weighted average of x over the window.',
        'avg({Line1/Flow}, "5m")',
      ),
      windowFunction(
        'min',
        'number',
        (w, current) => (w.min === Number.POSITIVE_INFINITY ? (current as number) : w.min),
        'Least value of x over the window.',
        'min({Line1/Pressure}, "1h")',
      ),
      windowFunction(
        'max',
        'number',
        (w, current) => (w.max === Number.NEGATIVE_INFINITY ? (current as number) : w.max),
        'Greatest value of x over the window.',
        'max({Line1/Pressure}, "1h")',
      ),
      windowFunction(
        'sum',
        'number',
        (w) => w.sum,
        'Sum of the samples of x taken in the window (one per evaluation caused by an input or the interval).',
        'sum({Line1/PartsPerCycle}, "1h")',
      ),
      windowFunction(
        'count',
        'number',
        (w) => w.count,
        'Number of samples of x taken in the window.',
        'count({Line1/Weight}, "1h")',
      ),
      windowFunction(
        'stddev',
        'number',
        (w) => {
          if (w.covered <= 0) return 0;
          const mean = w.area / w.covered;
          return Math.sqrt(Math.max(0, w.area2 / w.covered - mean * mean));
        },
        'Time-weighted (population) standard deviation of x over the window.',
        'stddev({Line1/Temperature}, "10m")',
      ),
      windowFunction(
        'rate',
        'number',
        (w) => (w.span > 0 ? w.increase / (w.span / 1000) : 0),
        'Per-second increase of counter x over the window; a lower value is a reset (counted from 0), or a rollover when modulus is given.',
        'rate({Line1/PartCounter}, "1m", 65536)',
        true,
      ),
      windowFunction(
        'delta',
        'number',
        (w) => w.increase,
        'Increase of counter x over the window, resets and rollovers handled as rate does.',
        'delta({Line1/PulseCount}, "1h", 65536) * 0.01',
        true,
      ),
      {
        name: 'integrate',
        group: 'window',
        params: [numberArg('x'), param('unit', 'timeUnit')],
        returns: 'number',
        timeDependent: true,
        summary:
          'Running total of x over time, x being per unit ("s", "m", "h", "d"); kept across restarts.',
        example: 'integrate({Line1/Flow_m3h}, "h")',
        compile: ({ args, literals, stateful }) => {
          const unit = literals[1] as number;
          return stateful(
            { kind: 'totalizer', unitMs: unit, key: '' },
            args[0] as Evaluator,
            (slot, value, c) => {
              const totalizer = slot.totalizer;
              if (totalizer === undefined) return undefined;
              if (value !== undefined && typeof value !== 'number') {
                totalizer.record(c.now, undefined);
                return wrongArgument(c, 'integrate', 0, 'x', 'a number', value);
              }
              totalizer.record(c.now, value);
              return value === undefined
                ? undefined
                : finite(c, totalizer.total, () => 'integrate()');
            },
          );
        },
      } satisfies FunctionSpec,
      windowFunction(
        'onTime',
        'boolean',
        (w) => w.area / 1000,
        'Seconds within the window during which the condition was true.',
        'onTime({Line1/Running}, "1d") / 3600',
      ),
      windowFunction(
        'changes',
        'number',
        (w) => w.changes,
        'Number of changes of x within the window.',
        'changes({Line1/State}, "1h")',
      ),
    ] as FunctionSpec[]
  ).map((spec) => [windowName(spec), spec]),
);

/** Window variants of min and max share the name: they are keyed `min@window`. */
function windowName(spec: FunctionSpec): string {
  return spec.group === 'window' && (spec.name === 'min' || spec.name === 'max')
    ? `${spec.name}@window`
    : spec.name;
}

function stringFunction(
  name: string,
  implementation: (s: string) => string,
  summary: string,
  example: string,
): FunctionSpec {
  return {
    name,
    group: 'strings',
    params: [param('s', 'string')],
    returns: 'string',
    summary,
    example,
    compile: ({ args }) => {
      const [a] = args as [Evaluator];
      return (c) => {
        const s = a(c);
        if (typeof s !== 'string') return wrongArgument(c, name, 0, 's', 'a string', s);
        if (inputTooLong(c, name, s)) return undefined;
        return stringResult(c, name, implementation(s));
      };
    },
  };
}

function clockPart(
  name: string,
  part: (date: Date) => number,
  summary: string,
  example: string,
): FunctionSpec {
  return {
    name,
    group: 'time',
    params: [param('t', 'number', true)],
    returns: 'number',
    timeDependent: true,
    summary: `${summary} Of now, or of t (ms since 1970) when given.`,
    example,
    compile: ({ args }) => {
      const [a] = args as [Evaluator | undefined];
      return (c) => {
        const t = a ? a(c) : c.now;
        if (typeof t !== 'number') return wrongArgument(c, name, 0, 't', 'a number (ms)', t);
        const date = new Date(t);
        const value = part(date);
        return Number.isNaN(value) ? c.fail(`${name}(${t}) is not a valid time.`) : value;
      };
    },
  };
}
