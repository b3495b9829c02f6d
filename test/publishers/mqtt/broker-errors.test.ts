import test from 'ava';
import {
  describeBrokerError,
  isCredentialRefusal,
} from '../../../src/publishers/mqtt/broker-errors.js';

test('a broker error names the MQTT reason code in words', (t) => {
  const url = new URL('mqtt://gw:secret@broker.plant:1883');
  t.is(
    describeBrokerError(Object.assign(new Error('x'), { code: 134 }), url),
    'the broker refused the username or password (MQTT reason 134)',
  );
  t.true(isCredentialRefusal(134));
  t.false(isCredentialRefusal(137));
});

test('a one-letter username is not cut out of the words of a broker error', (t) => {
  // The reported case: user `u` turned "must" into "mthe brokerst", which told Operators the
  // username as well as mangling the text.
  const url = new URL('mqtt://u:p@broker.plant:1883');
  const error = new Error(
    'Keepalive must be an integer; cannot connect as u to mqtt://u:p@broker.plant:1883',
  );
  t.is(
    describeBrokerError(error, url),
    'Keepalive must be an integer; cannot connect as the broker to the broker',
  );
});
