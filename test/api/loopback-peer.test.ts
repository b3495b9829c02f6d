import test from 'ava';
import { isLoopbackAddress } from '../../src/api/loopback-peer.js';

test('loopback: 127.0.0.0/8, ::1 and 127.x mapped into IPv6', (t) => {
  for (const address of [
    '127.0.0.1',
    '127.0.0.2',
    '127.255.255.254',
    '::1',
    '::ffff:127.0.0.1',
    '::FFFF:127.1.2.3',
  ]) {
    t.true(isLoopbackAddress(address), address);
  }
});

test('not loopback: plant addresses, lookalikes, nothing', (t) => {
  for (const address of [
    '192.0.2.10',
    '10.0.0.1',
    '0.0.0.0',
    '128.0.0.1',
    '::',
    '::ffff:192.0.2.10',
    'fe80::1',
    '::2',
    '127.0.0.1.example',
    '',
    undefined,
  ]) {
    t.false(isLoopbackAddress(address), String(address));
  }
});
