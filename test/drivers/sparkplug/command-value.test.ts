import test from 'ava';
import {
  commandValue,
  commandValueProblem,
  sameValue,
} from '../../../drivers/sparkplug/command-value.js';
import { metricValue } from '../../../drivers/sparkplug/metric-values.js';
import { decodePayload, encodePayload } from '../../helpers/sparkplug-edge.js';

/** The value a DCMD of `type` carries after Tahu's encoder and decoder, as a tag value. */
function roundTrip(type: 'Int64' | 'UInt64' | 'UInt32' | 'Int8' | 'Int32', value: string | number) {
  const payload = encodePayload({
    metrics: [{ name: 'm', type, value: commandValue(type, value) as never }],
  });
  const metric = decodePayload(payload).metrics?.[0];
  return metricValue(type, metric?.value);
}

test('64-bit integers are sent exactly, negative ones too, and read back exactly', (t) => {
  t.deepEqual(roundTrip('Int64', '-9007199254740993'), {
    value: -9_007_199_254_740_992,
    valueText: '-9007199254740993',
  });
  t.deepEqual(roundTrip('Int64', '9223372036854775807'), {
    value: 2 ** 63,
    valueText: '9223372036854775807',
  });
  t.deepEqual(roundTrip('UInt64', '18446744073709551615'), {
    value: 2 ** 64,
    valueText: '18446744073709551615',
  });
  t.deepEqual(roundTrip('UInt32', 4_294_967_295), { value: 4_294_967_295 });
  t.deepEqual(roundTrip('Int8', -128), { value: -128 });
  t.deepEqual(roundTrip('Int32', -2_147_483_648), { value: -2_147_483_648 });
});

test('values are checked against the metric type before anything is sent', (t) => {
  t.regex(commandValueProblem('Int8', 128) ?? '', /outside the range of Int8/);
  t.regex(commandValueProblem('UInt16', -1) ?? '', /outside the range/);
  t.regex(commandValueProblem('Int32', 1.5) ?? '', /whole number/);
  t.regex(commandValueProblem('Int64', 2 ** 53 + 2) ?? '', /decimal string/);
  t.regex(commandValueProblem('UInt64', '18446744073709551616') ?? '', /outside the range/);
  t.is(commandValueProblem('UInt64', '18446744073709551615'), undefined);
  t.regex(commandValueProblem('Boolean', 1) ?? '', /true or false/);
  t.regex(commandValueProblem('String', 1) ?? '', /a string/);
  t.regex(commandValueProblem('Double', '1') ?? '', /a number/);
  t.regex(commandValueProblem('DateTime', '2026-01-01T00:00:00Z') ?? '', /does not write DateTime/);
});

test('a confirmation matches the value written exactly', (t) => {
  t.true(sameValue('9007199254740993', 9_007_199_254_740_992, '9007199254740993'));
  t.false(sameValue('9007199254740993', 9_007_199_254_740_992, '9007199254740992'));
  t.true(sameValue(42, 42, undefined));
  t.false(sameValue(9_007_199_254_740_992, 9_007_199_254_740_992, '9007199254740993'));
  t.true(sameValue(true, true, undefined));
  t.false(sameValue(1, true, undefined));
});
