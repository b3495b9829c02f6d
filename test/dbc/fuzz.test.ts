/**
 * The parser never hangs or throws a raw exception: thousands of mutated fixture files (byte
 * flips, truncations, duplicated slices, random and DBC-flavoured insertions; seeded, so every
 * failure is reproducible) must each parse or be refused with a DbcParseError, within a time
 * bound. What parses is compiled and fed random frames, which must decode without throwing.
 */
import test from 'ava';
import { DbcParseError } from '../../src/dbc/dbc-error.js';
import { compileDatabaseDecoders, type SignalDecodeStatus } from '../../src/dbc/decode.js';
import { parseDbc } from '../../src/dbc/parse-dbc.js';
import { dbcFixtureNames, readDbcFixture } from '../helpers/dbc.js';

/** Mutants per fixture file; 23 files → about 4,600 inputs. */
const mutantsPerFile = 200;
/** Longest a single input may take to parse, compile and decode, ms (generous for slow CI). */
const maxMillisPerInput = 2000;

/** mulberry32: a small, fast, seedable PRNG with a 2^32 period. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Fragments that steer mutants into the parser's deeper paths. */
const fragments = [
  'BO_ ',
  ' SG_ ',
  'SG_MUL_VAL_ ',
  'SIG_VALTYPE_ ',
  'VAL_ ',
  'VAL_TABLE_ ',
  'CM_ ',
  'BA_DEF_ ',
  'BA_DEF_DEF_ ',
  'BA_ ',
  'BU_: ',
  'NS_ : ',
  'BS_: ',
  'BO_TX_BU_ ',
  'VERSION ',
  ' M ',
  ' m1 ',
  ' m0M ',
  '"',
  ';',
  ':',
  '|',
  '@',
  '@0-',
  '@1+',
  '(',
  ')',
  '[',
  ']',
  ',',
  '-',
  '+',
  '1-1, 2-4',
  '2147483648',
  '4294967295',
  '99999999999999999999',
  '1e999',
  '64',
  '65',
  '0',
  ' : ',
  '\r\n',
  '\n',
  '//',
  '\\"',
  ' ENUM "a","b"',
  ' INT 0 10',
  ' Vector__XXX',
];

type Mutation = (bytes: Uint8Array, random: () => number) => Uint8Array;

const below = (random: () => number, n: number) => Math.floor(random() * n);

const mutations: Record<string, Mutation> = {
  flip(bytes, random) {
    const copy = bytes.slice();
    const count = 1 + below(random, 8);
    for (let i = 0; i < count && copy.length > 0; i++) {
      const at = below(random, copy.length);
      copy[at] =
        random() < 0.5 ? below(random, 256) : (copy[at] as number) ^ (1 << below(random, 8));
    }
    return copy;
  },
  truncate(bytes, random) {
    return bytes.slice(0, below(random, bytes.length + 1));
  },
  duplicate(bytes, random) {
    if (bytes.length === 0) return bytes;
    const start = below(random, bytes.length);
    const end = Math.min(bytes.length, start + 1 + below(random, 400));
    const at = below(random, bytes.length + 1);
    const slice = bytes.subarray(start, end);
    const out = new Uint8Array(bytes.length + slice.length);
    out.set(bytes.subarray(0, at));
    out.set(slice, at);
    out.set(bytes.subarray(at), at + slice.length);
    return out;
  },
  insert(bytes, random) {
    const insertion =
      random() < 0.5
        ? Buffer.from(fragments[below(random, fragments.length)] as string, 'latin1')
        : Uint8Array.from({ length: 1 + below(random, 16) }, () => below(random, 256));
    const at = below(random, bytes.length + 1);
    const out = new Uint8Array(bytes.length + insertion.length);
    out.set(bytes.subarray(0, at));
    out.set(insertion, at);
    out.set(bytes.subarray(at), at + insertion.length);
    return out;
  },
  delete(bytes, random) {
    if (bytes.length === 0) return bytes;
    const start = below(random, bytes.length);
    const end = Math.min(bytes.length, start + 1 + below(random, 64));
    const out = new Uint8Array(bytes.length - (end - start));
    out.set(bytes.subarray(0, start));
    out.set(bytes.subarray(end), start);
    return out;
  },
};
const mutationNames = Object.keys(mutations);
const statuses = new Set<SignalDecodeStatus>(['decoded', 'inactive', 'truncated']);

/** Parses, compiles and decodes one input; returns whether it parsed. Throws what is wrong. */
function exercise(bytes: Uint8Array, random: () => number): boolean {
  let database: ReturnType<typeof parseDbc>;
  try {
    database = parseDbc(bytes, 'mutant.dbc');
  } catch (error) {
    if (error instanceof DbcParseError) {
      if (!/^mutant\.dbc:\d+:\d+: ./.test(error.message) || error.line < 1 || error.column < 1) {
        throw new Error(`malformed DbcParseError: ${error.message}`);
      }
      return false;
    }
    throw error;
  }
  const decoders = compileDatabaseDecoders(database);
  for (const decoder of decoders.all) {
    const frame = Uint8Array.from({ length: 64 }, () => below(random, 256));
    const results = decoder.decode(frame, below(random, 66));
    for (const result of results) {
      if (!statuses.has(result.status)) throw new Error(`bad status ${result.status}`);
      if (result.status === 'decoded' && typeof result.value !== 'number') {
        throw new Error(`signal ${result.signal.name} decoded to ${typeof result.value}`);
      }
    }
  }
  return true;
}

// cp1252.dbc defines no message (it tests the text encoding), which the parser refuses: one is
// added, so that its mutants reach the decoders too.
function fuzzedBytes(name: string): Buffer {
  const bytes = readDbcFixture(name);
  return name === 'cp1252.dbc'
    ? Buffer.concat([bytes, Buffer.from('BO_ 1 M: 8 Node1\n SG_ S : 0|8@1+ (1,0) [0|0] "" X\n')])
    : bytes;
}

for (const [fileIndex, name] of dbcFixtureNames().entries()) {
  test(`mutants of ${name} parse or are refused with DbcParseError`, (t) => {
    // A copy: Buffer#slice would return views, and mutants would corrupt the original.
    const original = new Uint8Array(fuzzedBytes(name));
    let parsed = 0;
    let refused = 0;
    let slowest = 0;
    for (let n = 0; n < mutantsPerFile; n++) {
      const seed = fileIndex * 1_000_003 + n;
      const random = prng(seed);
      let bytes: Uint8Array = original;
      const applied: string[] = [];
      const rounds = 1 + below(random, 3);
      for (let r = 0; r < rounds; r++) {
        const mutation = mutationNames[below(random, mutationNames.length)] as string;
        applied.push(mutation);
        bytes = (mutations[mutation] as Mutation)(bytes, random);
      }
      const started = performance.now();
      let ok: boolean;
      try {
        ok = exercise(bytes, random);
      } catch (error) {
        t.fail(`${name}, seed ${seed} (${applied.join(', ')}): ${String(error)}`);
        return;
      }
      const elapsed = performance.now() - started;
      slowest = Math.max(slowest, elapsed);
      if (ok) parsed++;
      else refused++;
    }
    t.is(parsed + refused, mutantsPerFile);
    t.true(parsed > 0, 'no mutant parsed: the decoders were not exercised');
    t.true(slowest < maxMillisPerInput, `slowest input took ${slowest.toFixed(1)} ms`);
    t.log(`${parsed} parsed, ${refused} refused, slowest ${slowest.toFixed(1)} ms`);
  });
}

test('random bytes are refused or parsed, never thrown raw', (t) => {
  const random = prng(0xdbc);
  for (let n = 0; n < 500; n++) {
    const bytes = Uint8Array.from({ length: below(random, 2000) }, () => below(random, 256));
    t.notThrows(() => {
      try {
        exercise(bytes, random);
      } catch (error) {
        throw new Error(`seed 0xdbc, input ${n}: ${String(error)}`);
      }
    });
  }
});
