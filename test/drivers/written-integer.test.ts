import test from 'ava';
import { decimalInteger, writtenInteger } from '../../drivers/written-integer.js';

test('a decimal text names its integer exactly, whatever its spelling', (t) => {
  t.is(decimalInteger('9007199254740993'), 9_007_199_254_740_993n);
  t.is(decimalInteger('-9223372036854775808'), -(2n ** 63n));
  t.is(decimalInteger('1.50e1'), 15n);
  t.is(decimalInteger('1500e-2'), 15n);
  t.is(decimalInteger('0.000e99'), 0n);
  t.is(decimalInteger('-0'), 0n);
  t.is(decimalInteger('1.8446744073709551615E19'), 2n ** 64n - 1n);
  t.is(decimalInteger('1.0000000000000001'), 'fraction');
  t.is(decimalInteger('1e-99999'), 'fraction');
  t.is(decimalInteger('1e40'), undefined, 'beyond any tag type: not expanded');
  t.is(decimalInteger('1e99999999'), undefined);
  t.is(decimalInteger('0x10'), undefined);
  t.is(decimalInteger(''), undefined);
});

test('a JSON number names an integer only when it is the one written, within ±(2^53 − 1)', (t) => {
  t.is(writtenInteger(42, '42'), 42n);
  t.is(writtenInteger(42, '4.2e1'), 42n);
  t.is(writtenInteger(42, undefined), 42n);
  t.is(writtenInteger(-(2 ** 53 - 1), '-9007199254740991'), -(2n ** 53n - 1n));
  t.is(writtenInteger(1.5, '1.5'), 'fraction');
  // What JSON.parse makes of these texts: rounded, so the value is not the number written.
  t.is(writtenInteger(JSON.parse('1.0000000000000001'), '1.0000000000000001'), 'fraction');
  t.is(writtenInteger(JSON.parse('4503599627370495.5'), '4503599627370495.5'), 'fraction');
  t.is(writtenInteger(JSON.parse('9007199254740993'), '9007199254740993'), 'inexact');
  t.is(writtenInteger(JSON.parse('1e23'), '1e23'), 'inexact');
  // 2^53 is a double, but so is every text that rounds to it: refused with or without the text.
  t.is(writtenInteger(2 ** 53, '9007199254740992'), 'inexact');
  t.is(writtenInteger(2 ** 53, undefined), 'inexact');
  t.is(writtenInteger(-(2 ** 63), undefined), 'inexact');
});
