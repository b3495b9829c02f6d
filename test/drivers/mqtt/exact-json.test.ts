import test from 'ava';
import {
  JsonSyntaxError,
  LargeInteger,
  maxJsonDepth,
  parseExactJson,
} from '../../../drivers/mqtt/exact-json.js';

test('parses like JSON.parse, integers beyond ±2^53 kept with their digits', (t) => {
  const text =
    '{"a": [1, -2.5, 1e3, true, false, null, "x\\u00e9\\n"], "b": {"c": {}}, "d": [], "__proto__": 1}';
  t.deepEqual(JSON.parse(JSON.stringify(parseExactJson(text))), JSON.parse(text));
  const big = parseExactJson(
    '[9007199254740993, -18446744073709551615, 9007199254740991, 1.5e300]',
  );
  t.true(Array.isArray(big));
  const [a, b, c, d] = big as unknown[];
  t.deepEqual(a, new LargeInteger(9007199254740992, '9007199254740993'));
  t.deepEqual(b, new LargeInteger(-18446744073709552000, '-18446744073709551615'));
  t.is(c, 9007199254740991, 'a safe integer stays a number');
  t.is(d, 1.5e300, 'a float is never exact text');
  t.is(Object.getPrototypeOf(parseExactJson('{"__proto__": {"x": 1}}')), Object.prototype);
});

test('refuses what is not JSON, and nesting deeper than the bound, without quoting the text', (t) => {
  for (const bad of ['', '{', '[1,]', '{"a" 1}', '01', 'tru', '"\\x"', '1 2', "{'a':1}", 'NaN']) {
    const error = t.throws(() => parseExactJson(bad), { instanceOf: JsonSyntaxError }, bad);
    t.regex(error?.message ?? '', /at character \d+$/);
  }
  const deep = `${'['.repeat(maxJsonDepth + 1)}${']'.repeat(maxJsonDepth + 1)}`;
  t.throws(() => parseExactJson(deep), { message: /nesting deeper than 64/ });
  const fine = `${'['.repeat(maxJsonDepth)}${']'.repeat(maxJsonDepth)}`;
  t.notThrows(() => parseExactJson(fine));
});
