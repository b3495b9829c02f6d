import test from 'ava';
import { messageTemplate, renderMessage } from '../../src/alarms/alarm-message.js';

test('placeholders are filled; numbers keep at most 6 significant digits', (t) => {
  t.is(
    renderMessage('{name}: {value} {unit} over {limit} {unit}', {
      name: 'OvenHot',
      value: 95.123456789,
      limit: 90,
      unit: '°C',
    }),
    'OvenHot: 95.1235 °C over 90 °C',
  );
});

test('without a unit, {unit} and the space before it go; a missing value shows as ?', (t) => {
  t.is(
    renderMessage(messageTemplate('RateOfChange', undefined), {
      name: 'Fill',
      value: undefined,
      limit: 2,
      unit: undefined,
    }),
    'Fill: changing by ?/s, more than 2/s.',
  );
  t.is(
    renderMessage(messageTemplate('High', undefined), { name: 'T', value: 5, limit: 4, unit: '' }),
    'T: 5 is above the high limit 4.',
  );
});

test("a definition's own message replaces the default; other braces stay as written", (t) => {
  t.is(messageTemplate('High', 'Too hot {x}'), 'Too hot {x}');
  t.is(
    renderMessage('Too hot {x} 3 / 4 {value}', { name: 'T', value: true, limit: 1, unit: 'K' }),
    'Too hot {x} 3 / 4 true',
  );
});
