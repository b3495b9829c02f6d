import test from 'ava';
import { parseWithNumberTexts } from '../../src/api/json-number-texts.js';

test('every number comes back as the text the client wrote, where JSON.parse would round it', (t) => {
  const body =
    '{"writes":[{"fullTagId":"A/b","value":9007199254740993},' +
    '{"fullTagId":"A/c","value":-1.0000000000000001e+0},{"value":1E3},{"value":-0}]}';
  t.deepEqual(parseWithNumberTexts(body), {
    writes: [
      { fullTagId: 'A/b', value: '9007199254740993' },
      { fullTagId: 'A/c', value: '-1.0000000000000001e+0' },
      { value: '1E3' },
      { value: '-0' },
    ],
  });
  t.is((JSON.parse(body) as { writes: { value: number }[] }).writes[0]?.value, 2 ** 53);
});

test('digits and quotes inside strings are left alone; whitespace, nesting and literals too', (t) => {
  const body = ' [ "a\\"1-2\\\\", {"x" : [ 12 , true, null, "3e5" ] }, false, 0.5 ]\n';
  t.deepEqual(parseWithNumberTexts(body), [
    'a"1-2\\',
    { x: ['12', true, null, '3e5'] },
    false,
    '0.5',
  ]);
  t.deepEqual(parseWithNumberTexts('7'), '7');
  t.deepEqual(parseWithNumberTexts('"\\u0031"'), '1');
});

test('the same structure as JSON.parse, duplicate keys included (the last one wins in both)', (t) => {
  const body = '{"writes":[{"value":1,"value":2.50}],"writes":[{"value":3}]}';
  t.deepEqual(parseWithNumberTexts(body), { writes: [{ value: '3' }] });
  t.throws(() => parseWithNumberTexts('{"a":}'), { instanceOf: SyntaxError });
});
